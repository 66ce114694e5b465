"""Discover the real MCP servers of the demo configuration and write their catalog in the benchmark format.

    python scripts/export_demo_catalog.py [--servers examples/demo-servers.json]
                                          [--out eval/datasets/gateway-demo]

Uses the project's own discovery (``services.write.discovery.discover_servers``, the code the sync runs),
with the settings built as at any entry point (``tool_selector.config.settings.load_settings``) and the
servers file pointed at the demo configuration. It writes:

- ``servers.json``: ``[{"name", "description", "keywords"?}]``. ``description`` is what discovery
  reads from the server itself (``serverInfo.description``, else the first 500 characters of the
  initialize ``instructions``) when the server gives one; otherwise the one-sentence description
  written in ``WRITTEN_DESCRIPTIONS`` below from the server's tools. ``keywords`` are the operator's
  keywords of the configuration, as the sync keeps them in the server's metadata (indexed as tags).
- ``tools.json``: ``[{"server", "name", "description", "input_schema"}]`` exactly as the servers
  list them, in their order.

The filesystem server serves ``$TOOL_SELECTOR_DEMO_ROOT`` (``/tmp`` when unset; its tool listing does
not depend on the folder). Every server must answer, or nothing is written and the exit code is 1.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from services.upstream.connector import StdioHttpConnector
from services.write.discovery import DiscoveredServer, discover_servers
from tool_selector.config.servers import load_servers
from tool_selector.config.settings import load_settings

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SERVERS = ROOT / "examples" / "demo-servers.json"
DEFAULT_OUT = ROOT / "eval" / "datasets" / "gateway-demo"

# For servers that describe themselves neither in serverInfo nor in their initialize instructions:
# one sentence each, written from the tools the server lists.
WRITTEN_DESCRIPTIONS: dict[str, str] = {
    "time": "Tells the current time in any IANA time zone and converts a time from one time zone to another.",
    "fetch": "Fetches a URL from the internet and returns the page's content as markdown or raw text.",
    "git": (
        "Inspects and changes a local git repository: working tree status, staged and unstaged diffs, "
        "commit log, staging, commits, resets, branches and the contents of a commit or file at a revision."
    ),
    "filesystem": (
        "Reads, writes, edits, moves, lists and searches files and directories inside the allowed "
        "directories, and reports file metadata."
    ),
    "memory": (
        "A persistent knowledge graph memory: creates, searches, opens and deletes entities, "
        "the relations between them and observations about them."
    ),
    "sequential-thinking": (
        "Dynamic, reflective problem solving through a sequence of numbered thoughts that can be "
        "revised, branched and extended until a hypothesis is verified."
    ),
}


def _server_entry(found: DiscoveredServer, keywords: list[str]) -> tuple[dict[str, Any], str]:
    assert found.server is not None
    description = found.server.description
    source = "the server (serverInfo / initialize instructions)"
    if not description:
        if found.name not in WRITTEN_DESCRIPTIONS:
            raise SystemExit(
                f"{found.name} describes itself nowhere; add a sentence for it to WRITTEN_DESCRIPTIONS."
            )
        description, source = WRITTEN_DESCRIPTIONS[found.name], "written from its tools"
    entry: dict[str, Any] = {"name": found.name, "description": description}
    if keywords:
        entry["keywords"] = keywords
    return entry, source


def export(servers_file: Path, out: Path) -> int:
    settings = load_settings(servers_file=servers_file)
    configs = {n: c for n, c in load_servers(settings.servers_path).mcpServers.items() if c.enabled}
    found = discover_servers(
        configs,
        connector=StdioHttpConnector(),
        concurrency=settings.sync.discovery_concurrency,
        timeout_s=settings.sync.discovery_timeout_s,
        environ=dict(os.environ),
    )
    failed = [f for f in found if not f.ok or f.server is None]
    for f in failed:
        print(f"{f.name}: discovery failed in phase {f.phase}: {f.error}", file=sys.stderr)
    if failed:
        print("nothing written; run scripts/setup.sh and check the servers above", file=sys.stderr)
        return 1

    servers: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    for f in found:
        entry, source = _server_entry(f, list(configs[f.name].keywords))
        servers.append(entry)
        version = f.server.metadata.get("server_info", {}) if f.server else {}
        print(
            f"{f.name}: {len(f.tools)} tools; serverInfo {version.get('name')} {version.get('version')}; "
            f"description {source}",
            file=sys.stderr,
        )
        for w in f.warnings:
            print(f"{f.name}: warning: {w}", file=sys.stderr)
        tools += [
            {"server": t.server, "name": t.name, "description": t.description, "input_schema": t.input_schema}
            for t in f.tools
        ]

    out.mkdir(parents=True, exist_ok=True)
    for name, data in (("servers.json", servers), ("tools.json", tools)):
        (out / name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(servers)} servers and {len(tools)} tools to {out}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--servers", type=Path, default=DEFAULT_SERVERS, help="mcpServers configuration")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="dataset folder to write into")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    return export(args.servers.resolve(), args.out)


if __name__ == "__main__":
    raise SystemExit(main())
