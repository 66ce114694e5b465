"""``tool-selector keys create | list | revoke``: API keys for the REST API and the HTTP gateway. The
operator running the CLI acts with full rights; the audit log records them as ``cli:<user>``."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, get_args

import typer

from routes.cli.base import cli_settings, echo_json, keys_app, mapped_errors
from tool_selector.core.choices import Role, Scope

ONCE = "Store this key now: it is shown only once and cannot be recovered (only its hash is kept)."

# typer checks a Literal option itself, but not a repeatable one (list[Literal]): --scope gets a str
# enum made from the same Literal, so the scopes are still defined once, in tool_selector/core/choices.py.
if TYPE_CHECKING:
    ScopeChoice = Scope
else:
    ScopeChoice = StrEnum("ScopeChoice", [(scope, scope) for scope in get_args(Scope)])


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="Who or what uses the key, e.g. ci-bot")],
    role: Annotated[Role, typer.Option(case_sensitive=False, help="viewer, contributor, editor or admin")],
    scope: Annotated[
        list[ScopeChoice] | None,
        typer.Option(
            case_sensitive=False,
            help="Narrow the key to these scopes of its role (repeatable; default: all of them)",
        ),
    ] = None,
) -> None:
    """Create a key and print it once, with its id, role and scopes."""
    from services.access.keys import cli_principal, create_key
    from services.root.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        scopes = list(scope) if scope else None
        new = create_key(container.store, name, role=role, scopes=scopes, actor=cli_principal().actor)
    record = new.record
    echo_json(
        {
            "id": record.id,
            "name": record.name,
            "role": record.role,
            "scopes": record.scopes,
            "key": new.key,
            "note": ONCE,
        }
    )


@keys_app.command("list")
def keys_list() -> None:
    """List the keys (id, name, role, scopes, created, last used, revoked), never the keys themselves."""
    from services.access.keys import list_keys
    from services.root.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        records = list_keys(container.store)
        echo_json([{**record.model_dump(mode="json"), "active": record.active} for record in records])


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key's id, as `keys list` shows it")]) -> None:
    """Revoke a key at once: every later request with it is refused (401)."""
    from services.access.keys import cli_principal, revoke_key
    from services.root.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        record = revoke_key(container.store, key_id, actor=cli_principal().actor)
        echo_json({"id": record.id, "name": record.name, "revoked_at": record.revoked_at})
