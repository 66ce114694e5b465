"""The servers file holds secrets: it is written readable by its owner only, an existing file's mode is
never loosened, and a symbolic link is never replaced by a file (issue 39): written through when it
points inside its own folder, refused when it points out of it."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tool_selector.config.servers import ServerConfig, ServersFile, load_servers, save_servers
from tool_selector.core.errors import CatalogFileError

SERVERS = ServersFile(mcpServers={"github": ServerConfig(command="gh-mcp", env={"GITHUB_TOKEN": "ghp_x1"})})


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_servers_file_is_readable_by_its_owner_only(tmp_path: Path) -> None:
    path = tmp_path / "data" / "servers.json"
    old = os.umask(0o022)
    try:
        save_servers(path, SERVERS)
    finally:
        os.umask(old)
    assert mode(path) == 0o600


@pytest.mark.parametrize(
    ("before", "after"), [(0o644, 0o600), (0o640, 0o600), (0o600, 0o600), (0o400, 0o400)]
)
def test_writing_the_servers_file_tightens_its_mode_to_0600_and_never_loosens_it(
    tmp_path: Path, before: int, after: int
) -> None:
    path = tmp_path / "servers.json"
    path.write_text('{"mcpServers": {}}')
    path.chmod(before)
    save_servers(path, SERVERS)
    assert mode(path) == after
    path.chmod(0o600)  # readable again for the check
    assert load_servers(path) == SERVERS


def test_a_link_to_a_file_in_its_own_folder_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "profiles").mkdir(parents=True)
    real = data / "profiles" / "home.json"
    real.write_text('{"mcpServers": {}}')
    link = data / "servers.json"
    link.symlink_to(Path("profiles") / "home.json")
    save_servers(link, SERVERS)
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert load_servers(real) == SERVERS and mode(real) == 0o600
    assert sorted(p.name for p in data.iterdir()) == ["profiles", "servers.json"]  # no temp file left


def test_a_link_out_of_its_folder_is_refused_and_neither_it_nor_its_file_changes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    elsewhere = tmp_path / "dotfiles" / "servers.json"
    elsewhere.parent.mkdir()
    elsewhere.write_text('{"mcpServers": {}}')
    link = data / "servers.json"
    link.symlink_to(elsewhere)
    with pytest.raises(CatalogFileError) as refused:
        save_servers(link, SERVERS)
    assert str(link) in str(refused.value) and str(elsewhere) in str(refused.value)
    assert f"TOOL_SELECTOR_SERVERS_FILE={elsewhere}" in refused.value.hint
    assert link.is_symlink() and elsewhere.read_text() == '{"mcpServers": {}}'
    assert os.listdir(data) == ["servers.json"]


def test_a_loop_of_links_is_refused_with_the_files_name(tmp_path: Path) -> None:
    link = tmp_path / "servers.json"
    link.symlink_to(tmp_path / "other.json")
    (tmp_path / "other.json").symlink_to(link)
    with pytest.raises(CatalogFileError, match="symbolic link"):
        save_servers(link, SERVERS)
    assert link.is_symlink()
