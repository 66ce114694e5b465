"""A small stdio driver for playing the agent: a script of gateway calls replayed in one real session.

    tool-selector lab drive CALLS.jsonl [--servers FILE] [--beside DIR]

``CALLS.jsonl`` holds one MCP tool call a line, ``{"tool": "resolve_intent", "arguments": {...}}`` (any
gateway tool, or a listed ``power__tool`` name). The driver syncs the configuration into a fresh data folder
once (kept under ``--workdir`` between runs, so a person playing the agent can append a call and run the
script again), makes the demo sandbox anew (demo-conversations/README.md), starts ``tool-selector serve``,
lists its tools, makes each call in order and prints, per call: what was sent, the text the agent reads,
its tokens, and the tool list after it (names and tokens). At the end: the tokens of every gateway answer
read and of the tool list. Replaying from the start each time keeps the session real (every call goes to
the real gateway and the real servers) at the price of repeating the earlier calls.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from mcp import StdioServerParameters, types
from mcp.client.client import Client

from eval.bench.conversation import SANDBOX, _definitions_tokens, _text, make_sandbox
from eval.bench.gateway import _serve_env
from tool_selector.config.settings import Settings
from tool_selector.core.tokens import count_tokens

_CLI = Path(sys.executable).parent / "tool-selector"
GATEWAY_TOOLS = {"resolve_intent", "activate_power", "deactivate_power", "call_tool", "catalog_query"}


def read_calls(path: Path) -> list[dict[str, Any]]:
    calls = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        call = json.loads(line)
        if not isinstance(call, dict) or not isinstance(call.get("tool"), str):
            raise ValueError(f'line {number}: write {{"tool": "...", "arguments": {{...}}}}')
        calls.append(call)
    return calls


def prepare(settings: Settings, workdir: Path, servers_file: Path, beside: Path | None) -> dict[str, str]:
    """The environment of the served gateway: a copy of ``workdir/synced``, which is synced the first time
    only (a copy, so that nothing a run remembers, such as confirmed choices, reaches the next run)."""
    env = _serve_env(settings, workdir / "synced", servers_file) | {
        "TOOL_SELECTOR_SYNC__ENRICHER": "offline",
        "TOOL_SELECTOR_DEMO_ROOT": str(SANDBOX),
        "TOOL_SELECTOR_DEMO_MEMORY_FILE": str(workdir / "memory.jsonl"),
    }
    if not (workdir / "synced" / "catalog.db").exists():
        workdir.mkdir(parents=True, exist_ok=True)
        if beside is not None:
            subprocess.run(
                [str(_CLI), "catalog", "import", str(beside), "--approve"],
                env=env,
                check=True,
                capture_output=True,
            )
        done = subprocess.run([str(_CLI), "sync"], env=env, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 20):
            raise RuntimeError(f"`tool-selector sync` failed ({done.returncode}): {done.stderr[-2000:]}")
    run = workdir / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(workdir / "synced", run, ignore=shutil.ignore_patterns("*.lock"))
    return env | {"TOOL_SELECTOR_DATA_DIR": str(run)}


async def _drive(env: dict[str, str], calls: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    params = StdioServerParameters(command=str(_CLI), args=["serve"], env=env)
    read = 0
    async with Client(params, mode="legacy", read_timeout_seconds=180) as client:
        tools = list((await client.list_tools()).tools)
        out.append(f"# tools listed at the start: {len(tools)} ({_definitions_tokens(tools)} tokens)")
        for i, call in enumerate(calls, 1):
            result: types.CallToolResult = await client.call_tool(call["tool"], call.get("arguments") or {})
            text = _text(result)
            tokens = count_tokens(text)
            if call["tool"] in GATEWAY_TOOLS - {"call_tool"}:
                read += tokens
            tools = list((await client.list_tools()).tools)
            proxied = [t.name for t in tools if t.name not in GATEWAY_TOOLS]
            out.append(
                f"\n## {i}. {call['tool']} {json.dumps(call.get('arguments') or {}, ensure_ascii=False)}"
            )
            out.append(f"{'ERROR ' if result.is_error else ''}({tokens} tokens)\n{text}")
            out.append(
                f"# tools listed now: {len(tools)} ({_definitions_tokens(tools)} tokens): "
                + ", ".join(proxied)
            )
        out.append(
            f"\n# gateway answers read: {read} tokens; "
            f"tool list at the end: {_definitions_tokens(tools)} tokens"
        )
    return out


def drive(
    settings: Settings, calls_file: Path, *, workdir: Path, servers_file: Path, beside: Path | None = None
) -> str:
    calls = read_calls(calls_file)
    env = prepare(settings, workdir, servers_file, beside)
    make_sandbox()
    (workdir / "memory.jsonl").unlink(missing_ok=True)
    return "\n".join(anyio.run(_drive, env, calls))
