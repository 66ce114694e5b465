"""Shared fixtures: the real embedding model (loaded once), settings on tmp dirs, the demo catalog, real
MCP server processes; and the ``slow`` marker, put on every test whose fixtures are slow.

Nothing here may touch the user's real data or cache folders except the model export, which is
shared through ``~/.cache/tool-selector/models`` so that the ONNX export happens once per machine.

``pytest -m "not slow"`` is the fast loop: every test that uses none of ``SLOW_FIXTURES`` (directly or
through another fixture). A test that loads the real model without declaring it fails (see
``pytest_runtest_protocol``), so the fast loop cannot grow slow by accident.
"""

from __future__ import annotations

import os
import sys

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
# Compiled modules and pytest's assertion rewrites are kept between runs (__pycache__, ignored by git),
# even where the environment says PYTHONDONTWRITEBYTECODE: the fast loop (`-m "not slow"`) spends a
# fifth of its time compiling otherwise.
sys.dont_write_bytecode = False
# A developer's own TOOL_SELECTOR_* variables must not leak into the tests.
for _name in [n for n in os.environ if n.startswith("TOOL_SELECTOR_")]:
    del os.environ[_name]
# The scanner's learned check is off but where a test turns it on (see _isolated_environment): here for
# the session-wide fixtures, made before any test's environment.
os.environ["TOOL_SELECTOR_TRUST__INTENT"] = "false"

import functools  # noqa: E402
import logging  # noqa: E402
from collections.abc import Generator, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import TYPE_CHECKING, Any  # noqa: E402

import pytest  # noqa: E402

from tests.support.paths import DEMO_CATALOG, EXAMPLES  # noqa: E402

if TYPE_CHECKING:
    from services.root.container import Container
    from tests.support.api_helpers import RunningApi
    from tests.support.upstreams import ServerScript
    from tool_selector.config.servers import ServerConfig
    from tool_selector.config.settings import Settings
    from tool_selector.embedding.embedders import MiniLMEmbedder

pytest_plugins = [
    "pytester",  # tests/test_slow_marking.py runs small sessions of its own
    "tests.support.console_site",  # the console's browser fixtures: console_site, browser_page, ...
]

# -- slow, from the fixtures a test uses ---------------------------------------------------------------

SLOW_FIXTURES: dict[str, str] = {
    "base_embedder": "loads the base model all-MiniLM-L6-v2 in this process",
    "embedder": "loads the real embedding model in this process (and everything built on it: the demo "
    "container, the REST API's catalog, the gateway's synced catalog)",
    "real_model": "lets the product load the real embedding model itself (the CLI, a container built "
    "from settings)",
    "server_script": "starts the MCP servers of tests/servers as real processes",
    "demo_servers": "starts the seven demo MCP servers installed from PyPI and npm",
}
"""Fixtures of this file whose use makes a test slow, with why. A test is marked ``slow`` when any of
them is in its fixture closure, so a module fixture built on one of them is slow too."""


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        used = sorted(SLOW_FIXTURES.keys() & set(getattr(item, "fixturenames", ())))
        if used:
            item.add_marker(pytest.mark.slow(fixtures=tuple(used)))


_REAL_MODEL_REFUSED = (
    "This test loads the real embedding model without declaring it, so it would run in the fast loop: "
    "request the `embedder` fixture, or `real_model` when the product loads the model itself."
)
_fast_test_running = False  # set around each test (its fixtures included) by pytest_runtest_protocol


def _guard_real_model() -> None:
    """Wraps the real models' constructors (the base model, and the relevance model shipped as an ONNX
    file) once per run so that they refuse while a fast test runs."""
    from tool_selector.embedding.embedders import MiniLMEmbedder, OnnxFileEmbedder

    for cls in (MiniLMEmbedder, OnnxFileEmbedder):
        real_init = cls.__dict__["__init__"]
        if getattr(real_init, "refuses_in_fast_tests", False):
            continue

        def init(self: Any, *args: Any, _real: Any = real_init, **kwargs: Any) -> None:
            if _fast_test_running:
                raise AssertionError(_REAL_MODEL_REFUSED)
            _real(self, *args, **kwargs)

        functools.update_wrapper(init, real_init)
        init.refuses_in_fast_tests = True  # type: ignore[attr-defined]
        cls.__init__ = init  # type: ignore[method-assign]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, object, object]:
    """Outside slow tests the real model cannot be built, not even by a module or session fixture set
    up for the test: it fails saying which fixture to request."""
    global _fast_test_running
    _guard_real_model()
    previous, _fast_test_running = _fast_test_running, item.get_closest_marker("slow") is None
    try:
        return (yield)
    finally:
        _fast_test_running = previous


# -- the environment of every test ---------------------------------------------------------------------


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
    # The scanner's learned check reads every new definition through the real relevance model; the
    # tests of it (tests/tool_selector/trust/test_intent_check.py) turn
    # it on, the others keep the rules' verdicts they were written against and the fast loop's speed.
    monkeypatch.setenv("TOOL_SELECTOR_TRUST__INTENT", "false")


@pytest.fixture(autouse=True)
def _no_real_llm_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Real LLM calls are blocked in every test: the Anthropic SDK may reach loopback only (the replay
    server of tests/support/claude_replay.py), and the ANTHROPIC_* variables are cleared."""
    from tests.support.claude_replay import forbid_real_network

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


# -- slow fixtures (SLOW_FIXTURES) and what is built on them -------------------------------------------


@pytest.fixture(scope="session")
def embedder(session_cache_dir: Path) -> MiniLMEmbedder:
    """The real embedding model the product runs by default (the relevance model shipped in the
    package, int8 ONNX), loaded once for the whole run. ``base_embedder`` is all-MiniLM-L6-v2."""
    from tool_selector.embedding.embedders import relevance_embedder

    return relevance_embedder(threads=2)


@pytest.fixture(scope="session")
def base_embedder(session_cache_dir: Path) -> MiniLMEmbedder:
    """The base model all-MiniLM-L6-v2 on ONNX Runtime (exported once into the shared cache)."""
    from tool_selector.embedding.embedders import MiniLMEmbedder

    return MiniLMEmbedder(session_cache_dir, engine="onnx", threads=2)


@pytest.fixture(scope="session")
def real_model(session_cache_dir: Path) -> Path:
    """For a test where the product loads the real model itself (the CLI, a container built from
    settings): the cache folder holding the model export, the one TOOL_SELECTOR_CACHE_DIR names."""
    return session_cache_dir


@pytest.fixture
def server_script() -> ServerScript:
    """``server_script(name, *args, **options)``: a config that runs tests/servers/<name> with this
    interpreter, a real MCP server process each time it is started."""
    from tests.support.upstreams import script_config

    return script_config


@pytest.fixture(scope="session")
def demo_servers() -> dict[str, ServerConfig]:
    """The seven servers of examples/demo-servers.json (installed by scripts/setup.sh); skips when one
    is not installed."""
    from tool_selector.config.servers import load_servers

    configs = dict(load_servers(EXAMPLES / "demo-servers.json").mcpServers)
    missing = [str(c.command) for c in configs.values() if c.command and not os.access(c.command, os.X_OK)]
    if missing:
        pytest.skip(
            f"MCP server binaries are not installed: {', '.join(missing)} "
            "(run scripts/setup.sh; the npm servers need node and npm)"
        )
    return configs


@pytest.fixture
def settings(tmp_path: Path, session_cache_dir: Path) -> Settings:
    from tool_selector.config.settings import Settings

    return Settings(data_dir=tmp_path / "data", cache_dir=session_cache_dir)


@pytest.fixture(scope="session")
def demo_container(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[Container]:
    """examples/demo-catalog imported and indexed with the real model, shared read-only by tests."""
    from services.root.container import Container
    from services.write.catalog import import_catalog_dir
    from services.write.indexing import build_index
    from tool_selector.config.settings import Settings

    settings = Settings(data_dir=tmp_path_factory.mktemp("demo-data"), cache_dir=session_cache_dir)
    container = Container(settings, embedder=embedder)
    try:
        import_catalog_dir(container, DEMO_CATALOG, approve=True, actor="test")
        build_index(container)
        yield container
    finally:
        container.close()


@pytest.fixture(scope="session")
def api_template(
    tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Path:
    """A data folder with the gateway-demo catalog imported and indexed, copied by each API test."""
    from tests.support.api_helpers import make_template
    from tool_selector.config.settings import Settings

    settings = Settings(data_dir=tmp_path_factory.mktemp("unused"), cache_dir=session_cache_dir)
    return make_template(tmp_path_factory.mktemp("api-template"), settings, embedder)


@pytest.fixture
def api(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[RunningApi]:
    """The REST API on a real uvicorn server on loopback, over this test's own copy of the catalog."""
    from tests.support.api_helpers import running_api
    from tool_selector.config.settings import Settings

    settings = Settings(data_dir=tmp_path / "unused", cache_dir=session_cache_dir)
    with running_api(api_template, tmp_path / "api", settings, embedder) as running:
        yield running


@pytest.fixture
def api_trusting(
    api_template: Path, tmp_path: Path, session_cache_dir: Path, embedder: MiniLMEmbedder
) -> Iterator[RunningApi]:
    """``api`` with trust on first use for registrations and imports (``trust.registered`` and
    ``trust.imported`` = tofu): for tests of registration mechanics that approval would only lengthen."""
    from tests.support.api_helpers import running_api
    from tool_selector.config.settings import Settings, TrustSettings

    settings = Settings(
        data_dir=tmp_path / "unused",
        cache_dir=session_cache_dir,
        trust=TrustSettings(registered="tofu", imported="tofu", intent=False),
    )
    with running_api(api_template, tmp_path / "api", settings, embedder) as running:
        yield running
