"""Shared fixtures: the real embedding model (loaded once), settings on tmp dirs, the demo catalog.

Nothing here may touch the user's real data or cache folders except the model export, which is
shared through ``~/.cache/tool-selector/models`` so that the ONNX export happens once per machine.
"""

from __future__ import annotations

import os

# Process set-up before numpy, tokenizers or the model runtime are imported.
for _name, _value in (
    ("OPENBLAS_NUM_THREADS", "1"),
    ("OMP_NUM_THREADS", "1"),
    ("HF_HUB_OFFLINE", "1"),
    ("TRANSFORMERS_OFFLINE", "1"),
    ("TOKENIZERS_PARALLELISM", "false"),
    ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
):
    os.environ[_name] = _value
# A developer's own TOOL_SELECTOR_* variables must not leak into the tests.
for _name in [n for n in os.environ if n.startswith("TOOL_SELECTOR_")]:
    del os.environ[_name]

import logging  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING  # noqa: E402

import pytest  # noqa: E402

if TYPE_CHECKING:
    from api_helpers import RunningApi

    from services.shared.container import Container
    from tool_selector.embedding import MiniLMEmbedder
    from tool_selector.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
DEMO_CATALOG = ROOT / "examples" / "demo-catalog"
GITHUB = "GitHub Projects MCP Server"


def _shared_models_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tool-selector" / "models"


def make_cache_dir(path: Path) -> Path:
    """A fresh cache folder whose ``models`` entry is the shared ONNX export folder."""
    path.mkdir(parents=True, exist_ok=True)
    shared = _shared_models_dir()
    shared.mkdir(parents=True, exist_ok=True)
    (path / "models").symlink_to(shared, target_is_directory=True)
    return path


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_cache_dir(tmp_path_factory.mktemp("cache"))


@pytest.fixture
def cache_dir(tmp_path: Path) -> Path:
    """A cache folder of this test only (eval workspaces live under it), sharing the model export."""
    return make_cache_dir(tmp_path / "cache")


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, session_cache_dir: Path) -> None:
    """Every test, CLI ones included, sees data and cache folders under tmp, never the user's."""
    for name in [n for n in os.environ if n.startswith("TOOL_SELECTOR_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(tmp_path / "env-data"))
    monkeypatch.setenv("TOOL_SELECTOR_CACHE_DIR", str(session_cache_dir))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))


@pytest.fixture(autouse=True)
def _no_real_llm_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real LLM calls are blocked in every test: the Anthropic SDK may reach loopback only (the replay
    server of tests/claude_replay.py), and the ANTHROPIC_* variables are cleared."""
    from claude_replay import forbid_real_network

    forbid_real_network(monkeypatch)


@pytest.fixture(autouse=True)
def _restore_root_logging() -> Iterator[None]:
    """CLI commands configure logging to the sys.stderr of the moment, which CliRunner closes after
    the call; put the root logger back so later records do not go to a closed stream."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for handler in [h for h in root.handlers if h not in handlers]:
        root.removeHandler(handler)
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)


@pytest.fixture(scope="session")
def embedder(session_cache_dir: Path) -> MiniLMEmbedder:
    """The real all-MiniLM-L6-v2 on ONNX Runtime, loaded once for the whole run."""
    from tool_selector.embedding import MiniLMEmbedder

    return MiniLMEmbedder(session_cache_dir, engine="onnx", threads=2)


@pytest.fixture
def settings(tmp_path: Path, session_cache_dir: Path) -> Settings:
    from tool_selector.settings import Settings

    return Settings(data_dir=tmp_path / "data", cache_dir=session_cache_dir)


@pytest.fixture(scope="session")
def demo_container(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[Container]:
    """examples/demo-catalog imported and indexed with the real model, shared read-only by tests."""
    from services.shared.container import Container
    from services.shared.indexing import build_index
    from services.write.catalog import import_catalog_dir
    from tool_selector.settings import Settings

    settings = Settings(data_dir=tmp_path_factory.mktemp("demo-data"), cache_dir=session_cache_dir)
    container = Container(settings, embedder=embedder)
    try:
        import_catalog_dir(container, DEMO_CATALOG, actor="test")
        build_index(container)
        yield container
    finally:
        container.close()


@pytest.fixture(scope="session")
def api_template(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Path:
    """A data folder with the gateway-demo catalog imported and indexed, copied by each API test."""
    from api_helpers import make_template

    from tool_selector.settings import Settings

    settings = Settings(data_dir=tmp_path_factory.mktemp("unused"), cache_dir=session_cache_dir)
    return make_template(tmp_path_factory.mktemp("api-template"), settings, embedder)


@pytest.fixture
def api(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[RunningApi]:
    """The REST API on a real uvicorn server on loopback, over this test's own copy of the catalog."""
    from api_helpers import running_api

    from tool_selector.settings import Settings

    settings = Settings(data_dir=tmp_path / "unused", cache_dir=session_cache_dir)
    with running_api(api_template, tmp_path / "api", settings, embedder) as running:
        yield running
