"""API key scopes (tool_selector/catalog/admin.py): the ``call`` and ``approve`` scopes, in roles and in
keys stored before they existed, on a real catalog database."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from services.access.keys import authenticate, create_key, hash_key
from services.root.container import Container
from tool_selector.catalog import admin
from tool_selector.catalog.admin import ROLE_SCOPES, ApiKeyRecord
from tool_selector.config.settings import Settings
from tool_selector.core.choices import Role, Scope
from tool_selector.core.errors import InvalidInputError


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    with Container(Settings(data_dir=tmp_path / "data")) as opened:
        yield opened


def test_roles_give_call_to_editors_and_admins_and_approve_to_admins_only() -> None:
    assert ROLE_SCOPES["viewer"] == ("read",)
    assert ROLE_SCOPES["contributor"] == ("read", "write")
    assert ROLE_SCOPES["editor"] == ("read", "write", "edit", "import", "call")
    assert set(ROLE_SCOPES["admin"]) == {"read", "write", "edit", "import", "call", "approve", "admin"}


IDS = {"editor": "0000000000e1", "admin": "0000000000a1", "viewer": "0000000000b1", "narrow": "0000000000c1"}


def _stored_before_call_existed(container: Container, name: str, role: Role, scopes: list[Scope]) -> str:
    """A key as an earlier version stored it; returns the key."""
    token = f"tsk_{IDS[name]}_{'s' * 43}"
    at = datetime.now(UTC)
    record = ApiKeyRecord(id=IDS[name], name=name, role=role, scopes=scopes, created_at=at, created_by="old")
    admin.insert_key(container.store, record, hash_key(token))
    return token


def test_keys_stored_with_their_roles_defaults_gain_the_new_scopes_once_and_narrowed_keys_do_not(
    container: Container,
) -> None:
    old_editor: list[Scope] = ["read", "write", "edit", "import"]
    keys = {
        "editor": _stored_before_call_existed(container, "editor", "editor", old_editor),
        "admin": _stored_before_call_existed(container, "admin", "admin", [*old_editor, "admin"]),
        "viewer": _stored_before_call_existed(container, "viewer", "viewer", ["read"]),
        "narrow": _stored_before_call_existed(container, "narrow", "editor", ["read", "import"]),
    }
    container.store.set_meta("key_scopes_version", "1")  # the catalog of an earlier version

    scopes = {name: authenticate(container.store, f"Bearer {key}").scopes for name, key in keys.items()}
    assert scopes["editor"] == {"read", "write", "edit", "import", "call"}
    assert scopes["admin"] == set(ROLE_SCOPES["admin"])
    assert scopes["viewer"] == {"read"} and scopes["narrow"] == {"read", "import"}
    upgrades = admin.read_audit(container.store, target="keys")
    assert [(a.action, sorted(a.details["keys"])) for a in upgrades] == [
        ("key.scopes_upgrade", sorted([IDS["editor"], IDS["admin"]]))
    ]
    # a key made now, narrowed to what was an editor's default set, keeps exactly that
    chosen: list[Scope] = ["read", "write", "edit", "import"]
    new = create_key(container.store, "no-calls", role="editor", scopes=chosen, actor="test")
    assert authenticate(container.store, f"Bearer {new.key}").scopes == set(chosen)
    assert admin.upgrade_key_scopes(container.store) == []


def test_a_key_may_be_narrowed_to_call_and_only_an_admin_key_to_approve(container: Container) -> None:
    caller = create_key(container.store, "caller", role="editor", scopes=["read", "call"], actor="test")
    assert authenticate(container.store, f"Bearer {caller.key}").scopes == {"read", "call"}
    approver = create_key(container.store, "approver", role="admin", scopes=["approve"], actor="test")
    assert authenticate(container.store, f"Bearer {approver.key}").scopes == {"approve"}
    with pytest.raises(InvalidInputError, match="does not include approve"):
        create_key(container.store, "no", role="editor", scopes=["approve"], actor="test")
