"""Use cases: API keys (create, list, revoke) and checking a bearer key against a scope.

A key reads ``tsk_<id>_<secret>``; only its sha256 is stored. Roles are sets of scopes
(``tool_selector/catalog/admin.py``): viewer read; contributor read, write; editor read, write, edit,
import, call; admin everything (read, write, edit, import, call, approve, admin). ``call`` runs upstream
tools through the gateway over HTTP (``activate_power``, ``call_tool``, ``power__tool``); ``approve``
approves or rejects quarantined tools. A key may be narrowed to some of its role's scopes.

Keys stored before ``call`` and ``approve`` existed keep working: a key holding exactly its role's full
set of then (a key made with the role's defaults) is given the role's scopes of now, once, when keys
are first read (``admin.upgrade_key_scopes``; an editor key gains ``call``, an admin key ``call`` and
``approve``); a narrowed key keeps what it had.
"""

from __future__ import annotations

import getpass
import hashlib
import logging
import re
import secrets
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

from tool_selector.catalog import admin
from tool_selector.catalog.admin import ROLE_SCOPES, SCOPES, ApiKeyRecord
from tool_selector.catalog.store import CatalogStore
from tool_selector.core.choices import Role, Scope
from tool_selector.core.errors import AuthError, ForbiddenError, InvalidInputError

logger = logging.getLogger(__name__)

KEY_PATTERN = re.compile(r"^tsk_([0-9a-f]{12})_[A-Za-z0-9_-]{20,}$")
_TOUCH_EVERY = timedelta(minutes=1)


class Principal(BaseModel):
    """Who is calling: a key (REST, MCP over HTTP) or a local operator (CLI)."""

    actor: str
    scopes: frozenset[Scope]
    key_id: str | None = None

    def require(self, scope: Scope) -> None:
        if scope not in self.scopes:
            raise ForbiddenError(
                f"This API key lacks the {scope!r} scope "
                f"(it has: {', '.join(sorted(self.scopes)) or 'none'}).",
                hint=f"Use a key whose role includes {scope!r}: {', '.join(roles_with(scope))}.",
                scope=scope,
            )


def roles_with(scope: Scope) -> list[str]:
    return [role for role, scopes in ROLE_SCOPES.items() if scope in scopes]


def cli_principal() -> Principal:
    """The local operator running the CLI: full rights (they own the files anyway)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return Principal(actor=f"cli:{user}", scopes=frozenset(SCOPES))


def hash_key(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class NewKey(BaseModel):
    key: str
    record: ApiKeyRecord


def create_key(
    store: CatalogStore,
    name: str,
    *,
    role: Role,
    scopes: list[Scope] | None = None,
    actor: str,
) -> NewKey:
    """Make a key; the returned secret is shown once and never stored."""
    name = name.strip()
    if not name or len(name) > 100:
        raise InvalidInputError("A key needs a name of 1-100 characters.", hint="e.g. `keys create ci-bot`.")
    allowed = set(ROLE_SCOPES[role])
    chosen = list(dict.fromkeys(scopes)) if scopes else list(ROLE_SCOPES[role])
    beyond = [s for s in chosen if s not in allowed]
    if beyond:
        raise InvalidInputError(
            f"Role {role!r} does not include {', '.join(beyond)}.",
            hint=f"Pick scopes within {', '.join(ROLE_SCOPES[role])}, or a role that has them.",
        )
    key_id = secrets.token_hex(6)
    token = f"tsk_{key_id}_{secrets.token_urlsafe(32)}"
    record = ApiKeyRecord(
        id=key_id,
        name=name,
        role=role,
        scopes=chosen,
        created_at=datetime.now(UTC),
        created_by=actor,
    )
    admin.insert_key(store, record, hash_key(token))
    return NewKey(key=token, record=record)


def revoke_key(store: CatalogStore, key_id: str, *, actor: str) -> ApiKeyRecord:
    return admin.revoke_key(store, key_id, actor)


def list_keys(store: CatalogStore) -> list[ApiKeyRecord]:
    return admin.list_keys(store)


def revoked_among(store: CatalogStore, key_ids: set[str]) -> set[str]:
    """Which of these keys are revoked (or no longer stored)."""
    active = {record.id for record in admin.list_keys(store) if record.active}
    return key_ids - active


def check_still_valid(store: CatalogStore, principal: Principal) -> None:
    """Right before a change is made: the key that asked for it must still be valid (it may have been
    revoked while its request's body arrived, or while its job waited). AuthError (401) otherwise."""
    if principal.key_id is None:  # the local operator (CLI, the gateway over stdio)
        return
    record = admin.key_by_id(store, principal.key_id)
    if record is None or record.revoked_at is not None:
        raise AuthError(
            f"API key {principal.key_id!r} was revoked before this change was made; nothing was changed.",
            hint="Ask an admin for a new key.",
            revoked_key_id=principal.key_id,
        )


def authenticate(store: CatalogStore, authorization: str | None) -> Principal:
    """The caller behind an ``Authorization: Bearer <key>`` header, or AuthError (401)."""
    if not authorization:
        raise AuthError(
            "This route needs an API key: send `Authorization: Bearer <key>`.",
            hint="An operator creates keys with `tool-selector keys create NAME --role viewer|contributor|"
            "editor|admin`.",
        )
    scheme, _, token = authorization.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise AuthError(
            "The Authorization header must read `Bearer <key>`.",
            hint="Send the key created by `tool-selector keys create` after the word Bearer.",
        )
    record = admin.key_by_hash(store, hash_key(token)) if KEY_PATTERN.match(token) else None
    if record is None:
        raise AuthError(
            "This API key is not valid.",
            hint="Check it was copied whole; `tool-selector keys list` shows the keys that exist.",
        )
    if record.revoked_at is not None:
        raise AuthError(
            f"API key {record.id!r} ({record.name}) was revoked.",
            hint="Ask an admin for a new key.",
            revoked_key_id=record.id,
        )
    now = datetime.now(UTC)
    if record.last_used_at is None or now - record.last_used_at > _TOUCH_EVERY:
        admin.touch_key(store, record.id, now)
    return Principal(
        actor=f"key:{record.id}:{record.name}", scopes=frozenset(record.scopes), key_id=record.id
    )
