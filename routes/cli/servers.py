"""``servers add | list | remove | import | enable | disable``: the configured MCP servers (the
mcpServers file the sync discovers)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from routes.cli.base import cli_settings, echo_json, mapped_errors, servers_app
from tool_selector.core.errors import InvalidInputError

NAME_HELP = "The configured server's name"
SHOW_VALUES = typer.Option(
    "--show-values",
    help="Print env and header values, url credentials and query values as written in servers.json "
    "(hidden as *** by default, so that the output can be pasted or shared)",
)


def _pairs(values: list[str], what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise InvalidInputError(f"{what} {value!r} is not KEY=VALUE.", hint=f"Write {what} as KEY=VALUE.")
        out[key] = val
    return out


@servers_app.command("add")
def servers_add(
    name: Annotated[
        str,
        typer.Argument(
            help="The server's name (how agents and the catalog call it): 1-100 letters, digits, '_', '-', "
            "'.', '@', '/' or inner spaces, and no look-alike of another server's ('TIME', 'ＴＩＭＥ' or "
            "Cyrillic 'tіme' beside 'time')"
        ),
    ],
    command: Annotated[
        list[str] | None, typer.Argument(help="A stdio server's command and arguments")
    ] = None,
    url: Annotated[
        str | None, typer.Option(help="A streamable HTTP server's url (instead of a command)")
    ] = None,
    env: Annotated[
        list[str] | None, typer.Option(help="KEY=VALUE for the server's environment; ${VAR} ok")
    ] = None,
    header: Annotated[list[str] | None, typer.Option(help="KEY=VALUE HTTP header; ${VAR} ok")] = None,
    steering: Annotated[
        str, typer.Option(help="Guidance shown to the agent when it activates the server")
    ] = "",
    keyword: Annotated[list[str] | None, typer.Option(help="An extra search keyword (repeatable)")] = None,
    timeout: Annotated[float | None, typer.Option(help="Discovery timeout for this server, seconds")] = None,
    disabled: Annotated[bool, typer.Option(help="Add it switched off")] = False,
    replace: Annotated[bool, typer.Option(help="Overwrite an entry of the same name")] = False,
) -> None:
    """Add a server to the configuration: `servers add NAME -- CMD ARGS...` or `servers add NAME --url URL`.

    It is discovered, profiled and indexed at the next `tool-selector sync`."""
    from pydantic import ValidationError

    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.servers import add_server
    from tool_selector.config.servers import ServerConfig

    with mapped_errors(), Container(cli_settings()) as container:
        cmd = list(command or [])
        try:
            config = ServerConfig(
                command=cmd[0] if cmd else None,
                args=cmd[1:],
                url=url,
                env=_pairs(env or [], "--env"),
                headers=_pairs(header or [], "--header"),
                steering=steering,
                keywords=list(keyword or []),
                timeout_s=timeout,
                enabled=not disabled,
            )
        except ValidationError as exc:
            raise InvalidInputError(
                "Invalid server: " + "; ".join(str(e["msg"]) for e in exc.errors()),
                hint="Give a command after the name (after --) or --url.",
            ) from exc
        add_server(container, name, config, replace=replace, actor=cli_principal().actor)
        echo_json({"added": name, "file": str(container.settings.servers_path), "next": "tool-selector sync"})


@servers_app.command("list")
def servers_list(show_values: Annotated[bool, SHOW_VALUES] = False) -> None:
    """List configured servers with their tool counts and the state of their last discovery. Secret
    values in the "target" (env and header values, url credentials and query values) print as ***
    unless --show-values."""
    from services.root.container import Container
    from services.write.servers import list_servers

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(
            [
                row.model_dump()
                for row in list_servers(container.settings, container.store, reveal=show_values)
            ]
        )


@servers_app.command("remove")
def servers_remove(name: Annotated[str, typer.Argument(help=NAME_HELP)]) -> None:
    """Remove a server from the configuration, and its tools from the catalog and the index."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.servers import remove_server

    with mapped_errors(), Container(cli_settings()) as container:
        echo_json(remove_server(container, name, actor=cli_principal().actor).model_dump())


@servers_app.command("import")
def servers_import(
    file: Annotated[
        Path, typer.Argument(help="claude_desktop_config.json, ~/.claude.json, .mcp.json or mcp.json")
    ],
    replace: Annotated[
        bool, typer.Option(help="Overwrite servers already configured under the same name")
    ] = False,
    trust: Annotated[
        bool,
        typer.Option(
            help="Trust their tools on first use, as servers you add yourself (else trust.imported decides: "
            "by default their tools wait for `quarantine approve` after the first sync)"
        ),
    ] = False,
) -> None:
    """Import the servers of a Claude Desktop, Claude Code or Cursor configuration."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.servers import import_servers

    with mapped_errors(), Container(cli_settings()) as container:
        summary = import_servers(container, file, replace=replace, trust=trust, actor=cli_principal().actor)
        echo_json(summary.model_dump())


def _set_enabled(name: str, enabled: bool, show_values: bool) -> None:
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.servers import set_enabled

    with mapped_errors(), Container(cli_settings()) as container:
        principal = cli_principal()
        done = set_enabled(container, name, enabled, principal=principal, at_machine=True, reveal=show_values)
        shown = done.model_dump(exclude={"name"})
        echo_json({"server": done.name, **shown, "next": "tool-selector sync"})


@servers_app.command("enable")
def servers_enable(
    name: Annotated[str, typer.Argument(help=NAME_HELP)], show_values: Annotated[bool, SHOW_VALUES] = False
) -> None:
    """Switch a configured server on. An entry that arrived in a catalog import is adopted: from now on
    sync and the gateway may start it (read its launch line, printed as "launch", its secret values as
    *** unless --show-values)."""
    _set_enabled(name, True, show_values)


@servers_app.command("disable")
def servers_disable(
    name: Annotated[str, typer.Argument(help=NAME_HELP)], show_values: Annotated[bool, SHOW_VALUES] = False
) -> None:
    """Switch a configured server off: the next sync removes its tools, the gateway will not start it."""
    _set_enabled(name, False, show_values)
