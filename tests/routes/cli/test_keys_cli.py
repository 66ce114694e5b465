"""``tool-selector keys create | list | revoke`` through the real CLI (Typer's CliRunner) on a temp
data folder, checked against ``services.access.keys.authenticate`` on the same catalog database."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from services.access.keys import KEY_PATTERN, authenticate, cli_principal
from services.root.container import Container
from tool_selector.catalog.admin import read_audit
from tool_selector.config.settings import Settings
from tool_selector.core.errors import AuthError, ForbiddenError


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "keys-data"


@pytest.fixture
def container(data_dir: Path) -> Iterator[Container]:
    with Container(Settings(data_dir=data_dir)) as opened:
        yield opened


def _invoke(data_dir: Path, *args: str) -> Result:
    return CliRunner().invoke(app, ["keys", *args], env={"TOOL_SELECTOR_DATA_DIR": str(data_dir)})


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _create(data_dir: Path, name: str, role: str, scopes: Sequence[str] = ()) -> dict[str, Any]:
    created = _json(_invoke(data_dir, "create", name, "--role", role, *(f"--scope={s}" for s in scopes)))
    assert isinstance(created, dict)
    return created


def test_create_prints_the_key_once_and_list_never_shows_it(data_dir: Path, container: Container) -> None:
    created = _create(data_dir, "ci-bot", "contributor")
    assert set(created) == {"id", "name", "role", "scopes", "key", "note"}
    assert created["name"] == "ci-bot" and created["role"] == "contributor"
    assert created["scopes"] == ["read", "write"]
    assert KEY_PATTERN.match(created["key"]) and created["key"].startswith(f"tsk_{created['id']}_")
    assert "only once" in created["note"]

    listing = _invoke(data_dir, "list")
    keys = _json(listing)
    assert [k["id"] for k in keys] == [created["id"]]
    assert keys[0]["active"] is True and keys[0]["created_by"] == cli_principal().actor
    secret = created["key"].rsplit("_", 1)[1]
    digest = hashlib.sha256(created["key"].encode()).hexdigest()
    assert secret not in listing.output and digest not in listing.output
    assert not any("hash" in field for field in keys[0])

    principal = authenticate(container.store, f"Bearer {created['key']}")
    assert principal.scopes == {"read", "write"} and principal.key_id == created["id"]
    audit = read_audit(container.store, target=f"key:{created['id']}")
    assert [(a.action, a.actor) for a in audit] == [("key.create", cli_principal().actor)]


def test_a_revoked_key_is_refused_by_authenticate(data_dir: Path, container: Container) -> None:
    created = _create(data_dir, "laptop", "viewer")
    assert authenticate(container.store, f"Bearer {created['key']}").key_id == created["id"]

    revoked = _json(_invoke(data_dir, "revoke", created["id"]))
    assert revoked["id"] == created["id"] and revoked["revoked_at"]

    with pytest.raises(AuthError, match="was revoked"):
        authenticate(container.store, f"Bearer {created['key']}")
    assert _json(_invoke(data_dir, "list"))[0]["active"] is False
    assert _json(_invoke(data_dir, "revoke", created["id"]))["revoked_at"] == revoked["revoked_at"]


def test_revoking_an_unknown_key_exits_4_and_names_the_list_command(data_dir: Path) -> None:
    result = _invoke(data_dir, "revoke", "0123456789ab")
    assert result.exit_code == 4
    assert "No API key with id '0123456789ab'" in result.stderr and "keys list" in result.stderr


def test_an_unknown_role_exits_2_naming_the_roles_and_stores_nothing(data_dir: Path) -> None:
    result = _invoke(data_dir, "create", "x", "--role", "superuser")
    assert result.exit_code == 2 and result.stdout == ""
    assert "Invalid value for '--role'" in result.stderr and "'superuser' is not one of" in result.stderr
    for role in ("viewer", "contributor", "editor", "admin"):
        assert f"'{role}'" in result.stderr
    assert _json(_invoke(data_dir, "list")) == []


@pytest.mark.parametrize(
    ("role", "scope", "said"),
    [
        ("viewer", "write", "Role 'viewer' does not include write"),
        ("editor", "admin", "Role 'editor' does not include admin"),
        ("admin", "delete", "'delete' is not one of"),
    ],
)
def test_a_scope_outside_the_role_exits_2_and_stores_nothing(
    data_dir: Path, role: str, scope: str, said: str
) -> None:
    result = _invoke(data_dir, "create", "x", "--role", role, "--scope", scope)
    assert result.exit_code == 2 and result.stdout == ""
    assert said in result.stderr
    assert _json(_invoke(data_dir, "list")) == []


def test_a_key_narrowed_to_one_scope_of_its_role_has_only_that_scope(
    data_dir: Path, container: Container
) -> None:
    created = _create(data_dir, "importer", "editor", ["import"])
    assert created["role"] == "editor" and created["scopes"] == ["import"]
    principal = authenticate(container.store, f"Bearer {created['key']}")
    principal.require("import")
    with pytest.raises(ForbiddenError, match="'read'"):
        principal.require("read")


def test_create_accepts_the_call_and_approve_scopes_within_the_role(data_dir: Path) -> None:
    assert _create(data_dir, "agent", "editor")["scopes"] == ["read", "write", "edit", "import", "call"]
    assert _create(data_dir, "runner", "editor", ["read", "call"])["scopes"] == ["read", "call"]
    assert _create(data_dir, "reviewer", "admin", ["approve"])["scopes"] == ["approve"]
    refused = _invoke(data_dir, "create", "no", "--role", "editor", "--scope", "approve")
    assert refused.exit_code == 2 and "does not include approve" in refused.output
