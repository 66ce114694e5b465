"""``sync``: discover the configured servers, then profile, enrich and index what changed; ``init``:
a first configuration (data folder, servers imported from the MCP clients on this machine), then a
first sync."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from routes.cli.base import (
    PARTIAL_EXIT,
    EnricherChoice,
    JsonOrText,
    app,
    cli_settings,
    echo_json,
    mapped_errors,
    phase_progress,
    wants_json,
)

LEFT_OUT_SHOWN = 20  # left-out tools a person's summary lists one by one

if TYPE_CHECKING:
    from routes.cli.entry import ClientEntry
    from services.write.init import InitSummary
    from services.write.sync import SyncSummary


@app.command()
def sync(
    enricher: Annotated[
        EnricherChoice | None,
        typer.Option(help="auto, offline, claude or none (default: TOOL_SELECTOR_SYNC__ENRICHER)"),
    ] = None,
    as_json: JsonOrText = None,
) -> None:
    """Discover the configured servers, then profile, enrich and index what changed.

    Prints a summary (JSON into a pipe or with --json). Exit 0 when everything worked, 20 when some
    server or enrichment failed (the rest was synced; see "failed"), 14 when another sync is running."""
    from services.root.container import Container
    from services.write.sync import run_sync

    with mapped_errors(), Container(cli_settings()) as container:
        summary = run_sync(container, progress=phase_progress(), enricher=enricher)
        if wants_json(as_json):
            echo_json(summary.model_dump())
        else:
            typer.echo(summary_text(summary))
        if not summary.ok:
            raise typer.Exit(PARTIAL_EXIT)


def summary_text(summary: SyncSummary) -> str:
    """A sync's summary for a person: servers, tools, what waits for the operator, and time."""
    lines = [
        f"synced {summary.servers_seen} of {summary.servers_configured} servers ({summary.servers_changed} "
        f"changed, {summary.servers_failed} failed, {summary.servers_removed} removed) in "
        f"{summary.seconds.get('total', 0.0):.1f} s",
        f"tools: {summary.tools_added} added, {summary.tools_changed} changed, "
        f"{summary.tools_removed} removed, {summary.tools_unchanged} unchanged; enricher {summary.enricher}, "
        f"{summary.documents_embedded} documents embedded",
    ]
    lines += [f"failed: {server}: {why}" for server, why in summary.failed.items()]
    left_out = summary.tools_left_out
    lines += [f"left out: {out.server}::{out.tool}: {out.reason}" for out in left_out[:LEFT_OUT_SHOWN]]
    if len(left_out) > LEFT_OUT_SHOWN:
        lines.append(
            f"left out: {len(left_out) - LEFT_OUT_SHOWN} more (tool-selector sync --json lists them)"
        )
    held = len(summary.tools_held) + len(summary.servers_held)
    if held:
        lines.append(f"held for approval: {held} (tool-selector quarantine list)")
    if summary.waiting:
        waiting = ", ".join(summary.waiting)
        lines.append(f"waiting to be adopted: {waiting} (tool-selector servers enable NAME)")
    return "\n".join(lines)


@app.command()
def init(
    sources: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="A client configuration to import (repeatable); default: Claude Desktop's, Claude Code's "
            "and Cursor's on this machine, those that exist",
        ),
    ] = None,
    trust: Annotated[
        bool,
        typer.Option(
            help="Pin the imported servers' tools as first seen (you configured these servers on this "
            "machine); --no-trust holds every tool until `tool-selector quarantine approve`",
        ),
    ] = True,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace",
            help="Overwrite a server already in the servers file with the client's entry of the same name",
        ),
    ] = False,
    run_sync: Annotated[bool, typer.Option("--sync/--no-sync", help="Run the first sync after")] = True,
    as_json: JsonOrText = None,
) -> None:
    """Set up a data folder and a servers file imported from your MCP clients, sync, and print the entry
    that adds the gateway to Claude Desktop or Claude Code.

    Keeps a servers file that exists (adds to it; a server already there is kept as it is, unless
    --replace). Imports what the client has switched on: entries switched off there ("disabled": true,
    Claude Code's disabledMcpServers), the gateway's own entry and SSE servers are skipped, each printed
    with why. The
    servers file keeps the clients' env and header values, readable by its owner only; nothing printed
    holds one. A client file linked out of its client's folder is not read. The entry is the command
    this runs from; run from uvx's (or pipx run's) cache, which a cache clean removes, it says so and
    prints `uv tool install` of the same source and the entry that gives ("install" in the JSON). Exit
    20 when the sync failed in part."""
    from services.access.keys import cli_principal
    from services.root.container import Container
    from services.write.init import client_config_paths, init_setup
    from services.write.sync import run_sync as sync_now

    with mapped_errors():
        settings = cli_settings()
        chosen = (
            [("file", path) for path in sources]
            if sources
            else [(client, path) for client, path in client_config_paths() if path.is_file()]
        )
        with Container(settings) as container:
            summary = init_setup(container, chosen, trust=trust, actor=cli_principal().actor, replace=replace)
            synced = None
            if run_sync and summary.servers:
                synced = sync_now(container, progress=phase_progress(), enricher=None)
        entry = gateway_entry()
        if wants_json(as_json):
            echo_json(
                {
                    **summary.model_dump(),
                    "sync": synced.model_dump() if synced else None,
                    "client_entry": entry.entry,
                    "install": entry.install.model_dump() if entry.install else None,
                }
            )
        else:
            typer.echo(init_text(summary, synced, entry, searched=not sources))
        if synced is not None and not synced.ok:
            raise typer.Exit(PARTIAL_EXIT)


def gateway_entry() -> ClientEntry:
    """The ``mcpServers`` entry that runs this installation's gateway (or, run from uvx's cache, the one
    a lasting install gives, with that install), with the folders it was set up with when they are not
    the defaults."""
    from routes.cli.entry import client_entry, install_source, running_here, this_install

    env = {
        key: str(Path(os.environ[key]).resolve())
        for key in ("TOOL_SELECTOR_DATA_DIR", "TOOL_SELECTOR_SERVERS_FILE", "TOOL_SELECTOR_CONFIG_FILE")
        if os.environ.get(key)
    }
    return client_entry(running_here(), env=env, source=install_source(*this_install()))


def init_text(
    summary: InitSummary, synced: SyncSummary | None, advice: ClientEntry, *, searched: bool
) -> str:
    """What ``init`` did and what to do next, for a person."""
    lines = [f"data folder: {summary.data_dir}"]
    kept = "kept, added to" if summary.servers_file_existed else "created"
    lines.append(f"servers file: {summary.servers_file} ({kept})")
    if not summary.sources:
        where = "no Claude Desktop, Claude Code or Cursor configuration found" if searched else "none given"
        lines.append(f"imported: {where}")
    for read in summary.sources:
        if read.error:
            lines.append(f"{read.client} {read.path}: not read: {read.error}")
            continue
        added = ", ".join(read.added) or "nothing new"
        lines.append(f"{read.client} {read.path}: imported {added}")
        lines += [f"  skipped {name}: {why}" for name, why in read.skipped.items()]
    shown = ", ".join(summary.servers) or "none yet"
    pinned = {
        "tofu": "their tools pinned as first seen; a changed one waits for approval",
        "approve": "each tool waits for `tool-selector quarantine approve` after the sync",
    }
    lines.append(f"servers configured: {shown} ({pinned.get(summary.trust, summary.trust)})")
    if synced is not None:
        lines.append(summary_text(synced))
    lines.append("")
    if not summary.servers:
        lines.append(
            "next: add a server (tool-selector servers add NAME -- COMMAND ARGS...) or import a client's "
            "configuration (tool-selector init --from FILE), then run tool-selector sync"
        )
        return "\n".join(lines)
    if synced is None:
        lines.append("next: tool-selector sync (starts each server once and indexes its tools)")
    entry = advice.entry
    then = ""
    if advice.install is not None:
        lines += [f"{advice.install.why}:", f"  {advice.install.command}"]
        then = "then "
    snippet = json.dumps({"mcpServers": {"tool-selector": entry}}, indent=2)
    lines += [
        f"{then}add the gateway to Claude Desktop (claude_desktop_config.json) or Cursor (mcp.json):",
        snippet,
        "or to Claude Code:",
        "  claude mcp add tool-selector"
        + "".join(f" -e {k}={shlex.quote(v)}" for k, v in entry.get("env", {}).items())
        + f" -- {shlex.quote(entry['command'])} serve",
        "then remove from the client the servers the gateway now routes to: it starts them when asked.",
    ]
    return "\n".join(lines)
