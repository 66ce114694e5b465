"""The entry ``init`` prints: the command it runs from when that lasts; run from uvx's or ``pipx run``'s
cache (which a cache clean removes, and which asks the package index at every start), the install that
lasts and the entry it gives. Fake layouts of sys.argv[0] / sys.prefix under a home folder in tmp, and
one real ``init`` process that believes it runs from uv's cache."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from routes.cli.entry import Running, client_entry, install_source, temporary_environment
from tests.support.paths import ROOT


def running(home: Path, script: str | Path, prefix: str | Path, **environ: str) -> Running:
    return Running(argv0=str(script), prefix=str(prefix), environ=environ, home=str(home))


def uvx_layout(cache: Path) -> tuple[Path, Path]:
    env = cache / "archive-v0" / "rxidlYfK24hYUYOY"
    return env / "bin" / "tool-selector", env


def test_run_through_uvx_the_entry_is_the_uv_tool_install_command_not_the_cache_path() -> None:
    home = Path("/home/me")
    script, prefix = uvx_layout(home / ".cache" / "uv")
    advice = client_entry(running(home, script, prefix), source="/src/tool-selector")
    assert advice.install is not None and advice.install.tool == "uv"
    assert advice.install.command == "uv tool install /src/tool-selector"
    assert str(prefix) in advice.install.why and "uv cache clean" in advice.install.why
    assert advice.entry == {"command": "/home/me/.local/bin/tool-selector", "args": ["serve"]}


@pytest.mark.parametrize(
    ("environ", "cache", "bin_dir"),
    [
        ({"UV_CACHE_DIR": "/var/cache/uv-shared"}, "/var/cache/uv-shared", "/home/me/.local/bin"),
        ({"XDG_CACHE_HOME": "/home/me/xdg-cache"}, "/home/me/xdg-cache/uv", "/home/me/.local/bin"),
        ({"UV_TOOL_BIN_DIR": "/opt/tools/bin"}, "/home/me/.cache/uv", "/opt/tools/bin"),
        ({"XDG_BIN_HOME": "/home/me/bin"}, "/home/me/.cache/uv", "/home/me/bin"),
        ({"XDG_DATA_HOME": "/home/me/data/share"}, "/home/me/.cache/uv", "/home/me/data/bin"),
        ({}, "/mnt/elsewhere/uvc", "/home/me/.local/bin"),  # `uvx --cache-dir`: told by archive-v0
    ],
)
def test_uvs_cache_is_found_where_its_variables_move_it_and_the_entry_is_in_uvs_tool_bin_dir(
    environ: dict[str, str], cache: str, bin_dir: str
) -> None:
    home = Path("/home/me")
    script, prefix = uvx_layout(Path(cache))
    advice = client_entry(running(home, script, prefix, **environ))
    assert advice.install is not None and advice.install.tool == "uv"
    assert advice.entry["command"] == f"{bin_dir}/tool-selector"


def test_a_uv_tool_install_is_stable_and_its_entry_is_the_bin_dirs_link_not_the_tool_environment(
    tmp_path: Path,
) -> None:
    home = tmp_path
    tool_env = home / ".local" / "share" / "uv" / "tools" / "tool-selector"
    (tool_env / "bin").mkdir(parents=True)
    (tool_env / "bin" / "tool-selector").write_text("#!/bin/sh\n")
    link = home / ".local" / "bin" / "tool-selector"
    link.parent.mkdir(parents=True)
    link.symlink_to(tool_env / "bin" / "tool-selector")
    advice = client_entry(running(home, link, tool_env), env={"TOOL_SELECTOR_DATA_DIR": "/d"})
    assert advice.install is None
    assert advice.entry == {"command": str(link), "args": ["serve"], "env": {"TOOL_SELECTOR_DATA_DIR": "/d"}}


def test_a_link_into_uvs_cache_is_temporary_even_from_a_lasting_folder(tmp_path: Path) -> None:
    """A hand-made link in ~/bin to the uvx environment dies with the cache all the same."""
    script, _ = uvx_layout(tmp_path / ".cache" / "uv")
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    link = tmp_path / "bin" / "tool-selector"
    link.parent.mkdir()
    link.symlink_to(script)
    found = temporary_environment(running(tmp_path, link, "/usr"))
    assert found == ("uv", str(script.parent.parent))


def test_a_virtualenv_is_stable_and_a_relative_script_is_made_absolute(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    advice = client_entry(running(Path("/home/me"), ".venv/bin/tool-selector", tmp_path / ".venv"))
    assert advice.install is None
    assert advice.entry["command"] == str(tmp_path / ".venv" / "bin" / "tool-selector")


def test_run_as_a_module_the_entry_names_the_command_on_the_path() -> None:
    advice = client_entry(running(Path("/home/me"), "/usr/lib/python3/x/__main__.py", "/usr"))
    assert advice.install is None and advice.entry["command"] == "tool-selector"


@pytest.mark.parametrize(
    "cache",
    [".local/pipx/.cache/0123abcd", ".cache/pipx/0123abcd", ".local/share/pipx/.cache/0123abcd"],
)
def test_run_through_pipx_run_the_entry_is_the_pipx_install_command(cache: str) -> None:
    home = Path("/home/me")
    prefix = home / cache
    advice = client_entry(running(home, prefix / "bin" / "tool-selector", prefix), source="tool-selector")
    assert advice.install is not None and advice.install.tool == "pipx"
    assert advice.install.command == "pipx install tool-selector"
    assert advice.entry["command"] == "/home/me/.local/bin/tool-selector"


def test_the_install_source_is_the_folder_or_file_it_was_built_from_with_its_extras() -> None:
    folder = json.dumps({"url": "file:///home/me/src/tool-selector", "dir_info": {}})
    assert install_source(folder, []) == "/home/me/src/tool-selector"
    assert install_source(folder, ["weaviate", "scale"]) == "'/home/me/src/tool-selector[scale,weaviate]'"
    spaced = json.dumps({"url": "file:///home/me/My%20Code/tool-selector", "dir_info": {}})
    assert install_source(spaced, []) == "'/home/me/My Code/tool-selector'"
    wheel = json.dumps({"url": "file:///tmp/dist/tool_selector-0.1.0-py3-none-any.whl", "archive_info": {}})
    assert install_source(wheel, []) == "/tmp/dist/tool_selector-0.1.0-py3-none-any.whl"
    assert install_source(None, []) == "tool-selector"  # from an index
    assert install_source("{ not json", []) == "tool-selector"


def _init_from_uvs_cache(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``init`` in a process whose script path lies in uv's cache under ``home``."""
    script, _ = uvx_layout(home / ".cache" / "uv")
    config = home / "client.json"
    config.write_text(json.dumps({"mcpServers": {"time": {"command": "mcp-server-time"}}}))
    argv = [str(script), "init", "--from", str(config), "--no-sync", *args]
    code = f"import sys; sys.argv = {argv!r}; from routes.cli import main; main()"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TOOL_SELECTOR_", "XDG_", "UV_"))}
    env |= {"HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120, check=False
    )


def test_init_run_from_uvs_cache_says_so_and_prints_the_lasting_install_and_its_entry(tmp_path: Path) -> None:
    done = _init_from_uvs_cache(tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert printed["client_entry"] == {
        "command": str(tmp_path / ".local/bin/tool-selector"),
        "args": ["serve"],
    }
    install = printed["install"]
    assert install["tool"] == "uv" and install["command"].startswith("uv tool install ")
    assert "uv cache clean" in install["why"]

    text = _init_from_uvs_cache(tmp_path, "--text")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    why = next(i for i, line in enumerate(lines) if "runs from uv's cache" in line)
    assert lines[why].endswith("for an entry that lasts, install it once:")
    assert lines[why + 1].startswith("  uv tool install ")
    assert ".cache/uv" not in "\n".join(lines[why + 1 :])  # the entry never names the cache
    assert f"-- {tmp_path}/.local/bin/tool-selector serve" in text.stdout
