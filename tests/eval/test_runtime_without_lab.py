"""The product runs without the lab's dependencies (scikit-learn, matplotlib, lightgbm: the ``lab`` extra):
import a catalog, build the index, resolve and route through the CLI with every import of them failing;
and a lab command that needs one says what to install."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import DEMO_CATALOG

BLOCK = "import sys\nfor name in ('sklearn', 'matplotlib', 'lightgbm'):\n    sys.modules[name] = None\n"


@pytest.mark.usefixtures("real_model")
def test_import_index_and_resolve_run_without_the_lab_extra(tmp_path: Path, real_model: Path) -> None:
    script = BLOCK + ("from routes.cli import main\nsys.argv = ['tool-selector', *sys.argv[1:]]\nmain()\n")
    env = {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"), "TOOL_SELECTOR_CACHE_DIR": str(real_model)}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", script, *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            env={**os.environ, **env},
        )

    for args in (("catalog", "import", str(DEMO_CATALOG), "--approve"), ("index", "build")):
        done = run(*args)
        assert done.returncode == 0, done.stderr
    answer = run("resolve", "--json", "list the open issues of my GitHub project")
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout)["power"] == "GitHub Projects MCP Server"


def test_a_lab_step_without_its_extra_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.extras import lab_import
    from tool_selector.core.errors import ConfigurationError

    monkeypatch.setitem(sys.modules, "lightgbm", None)
    with pytest.raises(ConfigurationError) as caught:
        lab_import("lightgbm", "Training the ranker")
    assert caught.value.message.startswith("Training the ranker needs lightgbm, which is not installed")
    assert "pip install 'tool-selector[lab]'" in caught.value.hint
    assert caught.value.details == {"missing": "lightgbm"}


def test_the_weaviate_backend_without_its_extra_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from services.root.container import Container
    from tool_selector.config.settings import Settings
    from tool_selector.core.errors import ConfigurationError
    from tool_selector.embedding.embedders import HashingEmbedder

    monkeypatch.setitem(sys.modules, "weaviate", None)
    monkeypatch.delitem(sys.modules, "tool_selector.search.weaviate.backend", raising=False)
    settings = Settings(data_dir=tmp_path, backend="weaviate")
    container = Container(settings, embedder=HashingEmbedder())
    with container, pytest.raises(ConfigurationError) as caught:
        _ = container.backend
    assert "needs the Weaviate client, which is not installed" in caught.value.message
    assert "pip install 'tool-selector[weaviate]'" in caught.value.hint
