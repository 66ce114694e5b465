"""The user guide's table of the files ``tool-selector init`` reads, per client and OS, is the code's
list (``client_config_paths`` in services/write/init.py) on each OS, with and without the variables
a path depends on: a client, an OS or a path added, moved or dropped on one side fails here until the
other says the same (issue 42)."""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

import pytest

from services.write.init import client_config_paths
from tests.support.paths import ROOT

GUIDE = ROOT / "docs" / "user-guide.md"
HEADER = "| Client | OS | File `init` reads |"
PLATFORMS = {"macOS": "darwin", "Linux": "linux", "Windows": "win32"}
HOME = PurePosixPath("/home/someone")
VARIABLES = {"XDG_CONFIG_HOME": "/elsewhere/config", "APPDATA": "/elsewhere/appdata"}
CODE = re.compile(r"`([^`]+)`")


def documented() -> list[tuple[str, str, str]]:
    """The table's rows as (client, OS, the file cell), one row per OS it names."""
    lines = GUIDE.read_text(encoding="utf-8").splitlines()
    assert HEADER in lines, f"{GUIDE.name} has no table starting with {HEADER!r}"
    rows: list[tuple[str, str, str]] = []
    for line in lines[lines.index(HEADER) + 2 :]:
        if not line.startswith("|"):
            break
        client, systems, cell = (c.strip() for c in line.strip("|").split("|"))
        for system in systems.split(", "):
            assert system in PLATFORMS, f"unknown OS {system!r} in the row of {client}"
            rows.append((client, system, cell))
    return rows


def as_path(text: str, environ: dict[str, str]) -> PurePosixPath:
    """A documented path, as the code builds it here: ``~`` is the home folder, ``$VAR``/``%VAR%`` its
    value, a backslash a separator."""
    text = text.replace("\\", "/")
    for name, value in environ.items():
        text = text.replace(f"${name}", value).replace(f"%{name}%", value)
    assert "$" not in text and "%" not in text, f"{text}: a variable the test does not set"
    return PurePosixPath(text.replace("~", str(HOME), 1) if text.startswith("~") else text)


def expected(cell: str, environ: dict[str, str]) -> PurePosixPath:
    """The file a cell names under ``environ``: its first path when the variable it names is set (or it
    names none), else the path after ``else``."""
    paths = CODE.findall(cell.split(" (", 1)[0])
    needs = [name for name in VARIABLES if name in paths[0]]
    chosen = paths[1] if needs and not all(name in environ for name in needs) else paths[0]
    return as_path(chosen, environ)


@pytest.mark.parametrize("system", sorted(PLATFORMS))
@pytest.mark.parametrize("variables", [True, False], ids=["variables set", "variables unset"])
def test_the_user_guide_lists_the_files_init_reads_for_each_client_and_os(
    system: str, variables: bool
) -> None:
    environ = dict(VARIABLES) if variables else {}
    code = {
        client: PurePosixPath(path)
        for client, path in client_config_paths(Path(HOME), platform=PLATFORMS[system], environ=environ)
    }
    docs = {client: expected(cell, environ) for client, os_name, cell in documented() if os_name == system}
    assert docs == code


def test_a_row_that_disagrees_with_the_code_is_caught() -> None:
    """The comparison itself can fail: a moved file reads as another path."""
    moved = "`~/Library/Claude/claude_desktop_config.json`"
    darwin = dict(client_config_paths(Path(HOME), platform="darwin", environ={}))
    assert expected(moved, {}) != PurePosixPath(darwin["Claude Desktop"])
