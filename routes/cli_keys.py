"""``tool-selector keys create | list | revoke``: API keys for the REST API and the HTTP gateway
(registered on the one ``tool-selector`` app by ``routes/cli.py``). The operator running the CLI
acts with full rights; the audit log records them as ``cli:<user>``."""

from __future__ import annotations

from typing import Annotated

import typer

from routes.cli import _echo_json, _errors, _settings, app
from tool_selector.catalog.admin import ROLE_SCOPES, SCOPES, Role, Scope
from tool_selector.errors import InvalidInputError

keys_app = typer.Typer(no_args_is_help=True, help="API keys for the REST API and the HTTP gateway.")
app.add_typer(keys_app, name="keys")

ONCE = "Store this key now: it is shown only once and cannot be recovered (only its hash is kept)."


def _role(value: str) -> Role:
    for role in ROLE_SCOPES:
        if role == value.strip().lower():
            return role
    raise InvalidInputError(
        f"Unknown role {value!r}.",
        hint="Pick one of "
        + "; ".join(f"{role} ({', '.join(scopes)})" for role, scopes in ROLE_SCOPES.items())
        + ".",
    )


def _scope(value: str) -> Scope:
    for scope in SCOPES:
        if scope == value.strip().lower():
            return scope
    raise InvalidInputError(f"Unknown scope {value!r}.", hint=f"Pick from {', '.join(SCOPES)}.")


@keys_app.command("create")
def keys_create(
    name: Annotated[str, typer.Argument(help="Who or what uses the key, e.g. ci-bot")],
    role: Annotated[str, typer.Option(help="viewer, contributor, editor or admin")],
    scope: Annotated[
        list[str] | None,
        typer.Option(help="Narrow the key to these scopes of its role (repeatable; default: all of them)"),
    ] = None,
) -> None:
    """Create a key and print it once, with its id, role and scopes."""
    from services.shared.auth import cli_principal, create_key
    from services.shared.container import Container

    with _errors():
        chosen_role = _role(role)
        scopes = [_scope(s) for s in scope] if scope else None
        with Container(_settings()) as container:
            new = create_key(container, name, role=chosen_role, scopes=scopes, actor=cli_principal().actor)
        record = new.record
        _echo_json(
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
    from services.shared.auth import list_keys
    from services.shared.container import Container

    with _errors(), Container(_settings()) as container:
        _echo_json(
            [{**record.model_dump(mode="json"), "active": record.active} for record in list_keys(container)]
        )


@keys_app.command("revoke")
def keys_revoke(key_id: Annotated[str, typer.Argument(help="The key's id, as `keys list` shows it")]) -> None:
    """Revoke a key at once: every later request with it is refused (401)."""
    from services.shared.auth import cli_principal, revoke_key
    from services.shared.container import Container

    with _errors(), Container(_settings()) as container:
        record = revoke_key(container, key_id, actor=cli_principal().actor)
        _echo_json({"id": record.id, "name": record.name, "revoked_at": record.revoked_at})
