"""The gateway's commands: ``serve``, ``stats``, ``tokens`` and ``bench-gateway``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import anyio
import typer

from routes.cli.base import JsonOrText, app, cli_settings, echo_json, mapped_errors, wants_json


@app.command()
def serve(
    http: Annotated[
        int | None, typer.Option("--http", help="Serve streamable HTTP on this port instead of stdio")
    ] = None,
    host: Annotated[str, typer.Option(help="With --http: the address to listen on")] = "127.0.0.1",
) -> None:
    """Run the MCP gateway (resolve_intent, activate_power, call_tool, ...) for an MCP client.

    Over stdio by default (what Claude Desktop and Claude Code start); with --http PORT at
    http://HOST:PORT/mcp, where every request needs an API key with the read scope, and starting or
    calling upstream tools the call scope (`tool-selector keys create NAME --role editor`; a viewer key
    may only resolve and query). A session works only with the key that opened it and is closed when
    that key is revoked. Logs go to stderr. Every upstream server is stopped on exit."""
    from routes.gateway import serve_http, serve_stdio

    with mapped_errors():
        settings = cli_settings()
        if http is None:  # initialize is answered at once; the index is opened (and checked) meanwhile
            anyio.run(lambda: serve_stdio(settings))
        else:
            from services.resolve.snapshot import check_servable
            from services.root.container import Container

            with Container(settings) as container:
                check_servable(container)
            typer.echo(f"tool-selector gateway on http://{host}:{http}/mcp", err=True)
            anyio.run(lambda: serve_http(settings, host=host, port=http))


@app.command()
def stats(
    sessions: Annotated[int, typer.Option(help="How many recent sessions to show")] = 20,
    as_json: JsonOrText = None,
) -> None:
    """How agents used the gateway, per session: calls, errors (failed upstream calls also per power), and
    hints followed or ignored."""
    from services.gateway.usage import recent_usage
    from services.root.container import Container

    with mapped_errors(), Container(cli_settings()) as container:
        found, held = recent_usage(container.store, sessions)
    if wants_json(as_json):
        echo_json([s.model_dump(mode="json") for s in found])
        return
    if held:
        typer.echo(
            f"quarantined: {len(held)} tool(s) held, not offered to agents: {', '.join(held[:20])}"
            f"{' ...' if len(held) > 20 else ''} (`tool-selector quarantine list`)"
        )
    if not found:
        typer.echo("No gateway sessions recorded yet. Run `tool-selector serve` from an MCP client.")
        return
    header = f"{'session':<34} {'client':<18} {'calls':>5} {'errors':>6}  hints shown/followed/ignored"
    typer.echo(header + "  [failed upstream calls per power]")
    failed: dict[str, int] = {}
    for s in found:
        hints = "; ".join(f"{k} {v.shown}/{v.followed}/{v.ignored}" for k, v in sorted(s.hints.items()))
        calls = sum(s.calls.values())
        powers = ", ".join(f"{p} {n}" for p, n in sorted(s.upstream_errors.items()))
        row = f"{s.session_id[:34]:<34} {s.client[:18]:<18} {calls:>5} {s.errors:>6}  {hints or '-'}"
        typer.echo(row + (f"  [{powers}]" if powers else ""))
        failed |= {p: failed.get(p, 0) + n for p, n in s.upstream_errors.items()}
    if failed:
        typer.echo("failed upstream calls: " + ", ".join(f"{p} {n}" for p, n in sorted(failed.items())))
    followed = sum(v.followed for s in found for v in s.hints.values())
    ignored = sum(v.ignored for s in found for v in s.hints.values())
    judged = followed + ignored
    rate = f"{followed / judged:.0%}" if judged else "n/a"
    typer.echo(f"hints followed {followed}, ignored {ignored} ({rate} followed) over {len(found)} sessions")


@app.command()
def tokens(
    queries_file: Annotated[Path, typer.Argument(help="One query a line, or a benchmark queries.jsonl")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table")] = False,
) -> None:
    """Tokens an agent sees through the gateway against loading every tool of every server, per query."""
    from services.gateway.tokens import account_tokens, read_queries
    from services.resolve.read_path import ReadPath
    from services.root.container import Container

    with mapped_errors():
        settings = cli_settings()
        # a bad file is reported before the index is loaded
        queries = read_queries(queries_file, limit_bytes=settings.max_file_bytes)
        with Container(settings) as container:
            report = account_tokens(ReadPath.fixed(container), queries)
    if as_json:
        echo_json(report.model_dump())
        return
    typer.echo(
        f"tokenizer: {report.tokenizer}; {report.servers} servers, {report.tools} tools; all tools loaded "
        f"= {report.all_tools_tokens} tokens; gateway definitions = {report.gateway_definitions_tokens}"
    )
    typer.echo(f"{'gateway':>8} {'all':>8} {'saved':>7}  {'status':<16} query")
    for line in report.lines:
        typer.echo(
            f"{line.gateway_tokens:>8} {line.all_tools_tokens:>8} {line.saved:>7.1%}  "
            f"{line.status:<16} {line.query[:70]}"
        )
    typer.echo(
        f"total: {report.total_gateway_tokens} through the gateway vs {report.total_all_tools_tokens} "
        f"with all tools loaded: {report.saved:.1%} fewer"
    )
