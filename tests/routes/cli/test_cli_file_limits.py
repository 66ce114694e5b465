"""Every file the CLI reads has a size limit (issue 15): a device is refused at once, and a file over
``max_file_bytes`` (lowered here to 4 KiB through TOOL_SELECTOR_MAX_FILE_BYTES) is refused naming the
file, the limit and the setting, before anything is stored or a model is loaded. The settings file
itself is held to 1 MiB."""

from __future__ import annotations

import json
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from routes.cli import app
from tests.support.catalogs import write_catalog

LIMIT = 4096
CLI = Path(sys.executable).parent / "tool-selector"


@pytest.fixture(autouse=True)
def _small_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_MAX_FILE_BYTES", str(LIMIT))


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _over_the_limit(out: str, path: Path) -> None:
    assert f"{path} is " in out and "over the limit of 4 KiB (4096 bytes)" in out, out
    assert "TOOL_SELECTOR_MAX_FILE_BYTES" in out


def _limit_memory() -> None:  # were /dev/zero read to its end, the process fails instead of the machine
    resource.setrlimit(resource.RLIMIT_AS, (4 * 2**30, 4 * 2**30))


def test_servers_import_refuses_dev_zero_at_once(tmp_path: Path) -> None:
    env = {"TOOL_SELECTOR_DATA_DIR": str(tmp_path / "data"), "PATH": str(CLI.parent)}
    done = subprocess.run(
        [str(CLI), "servers", "import", "/dev/zero"],
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=_limit_memory,
    )
    assert done.returncode == 3, done.stderr
    assert "/dev/zero is a character device, not a regular file" in done.stderr + done.stdout


def test_servers_import_refuses_a_client_configuration_over_the_limit(tmp_path: Path) -> None:
    config = tmp_path / "claude_desktop_config.json"
    servers = {f"s{i}": {"command": "echo", "args": ["x" * 40]} for i in range(100)}
    config.write_text(json.dumps({"mcpServers": servers}))
    code, out = _run("servers", "import", str(config))
    assert code == 3
    _over_the_limit(out, config)
    assert json.loads(_run("servers", "list")[1]) == []


def test_catalog_import_refuses_a_tools_file_over_the_limit_and_stores_nothing(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path / "catalog", {"weather": [f"read_gauge_{i}" for i in range(200)]})
    code, out = _run("catalog", "import", str(folder))
    assert code == 3
    _over_the_limit(out, folder / "tools.json")
    assert json.loads(_run("catalog", "list")[1]) == []


def test_catalog_register_refuses_a_batch_file_over_the_limit(tmp_path: Path) -> None:
    batch = tmp_path / "batch.csv"
    batch.write_text("server,server_description,tool,tool_description\n" + "weather,w,read,r\n" * 400)
    code, out = _run("catalog", "register", str(batch))
    assert code == 3
    _over_the_limit(out, batch)


def test_tokens_refuses_a_queries_file_over_the_limit_before_loading_the_index(tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("what time is it in Paris\n" * 300)
    code, out = _run("tokens", str(queries))
    assert code == 3
    _over_the_limit(out, queries)


def test_eval_refuses_a_dataset_queries_file_over_the_limit_before_building_anything(tmp_path: Path) -> None:
    folder = write_catalog(tmp_path / "dataset", {"weather": ["read_gauge"]})
    line = {"query": "read the gauge", "gold_servers": ["weather"], "gold_tools": ["weather::read_gauge"]}
    (folder / "queries.jsonl").write_text("\n".join(json.dumps({**line, "id": f"q{i}"}) for i in range(100)))
    code, out = _run("lab", "eval", str(folder), "--predictions", str(tmp_path / "p.jsonl"))
    assert code == 3
    _over_the_limit(out, folder / "queries.jsonl")


def test_a_settings_file_over_one_mib_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    toml = tmp_path / "settings.toml"
    toml.write_text("# padding\n" * 200_000)  # valid TOML: only comments
    monkeypatch.setenv("TOOL_SELECTOR_CONFIG_FILE", str(toml))
    code, out = _run("servers", "list")
    assert code == 7
    assert f"The settings file {toml} is 1.9 MiB" in out and "over the limit of 1 MiB (1048576 bytes)" in out
