"""Gateway figures: resolve_intent round trips over stdio, activation overhead, tokens saved.

In a fresh temporary data folder (the model export in the cache folder is shared): a real
``tool-selector sync`` of the given server configuration, then a real ``tool-selector serve`` with
the mcp Client talking to it over stdio, as an agent's client would.

- resolve_intent round trip: warm (after a few calls), wall time from the client's call to its answer.
- activation overhead: ``activate_power(P)`` through the gateway minus the time the same server takes
  to start, initialize and list its tools when the mcp client talks to it directly (medians).
- tokens: ``services/gateway/tokens.account_tokens`` over the queries.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
from mcp import StdioServerParameters
from mcp.client.client import Client

from services.gateway.tokens import account_tokens
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.upstream.connector import StdioHttpConnector
from services.upstream.session import list_all_tools
from tool_selector.config.servers import get_server_config, load_servers
from tool_selector.config.settings import Settings

_CLI = Path(sys.executable).parent / "tool-selector"


def _serve_env(settings: Settings, data_dir: Path, servers_file: Path) -> dict[str, str]:
    """The environment a benchmark's ``tool-selector`` processes run with: this one's, less every
    TOOL_SELECTOR_ setting but the demo root (the demo configuration's commands are under it) and the
    gateway's own (``TOOL_SELECTOR_GATEWAY__*``: a gateway setting is measured by setting it), plus the
    data folder, the shared cache (the model export) and the server configuration."""
    kept = ("TOOL_SELECTOR_GATEWAY__",)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOOL_SELECTOR_") or k.startswith(kept)}
    if os.environ.get("TOOL_SELECTOR_DEMO_ROOT"):
        env["TOOL_SELECTOR_DEMO_ROOT"] = os.environ["TOOL_SELECTOR_DEMO_ROOT"]
    return env | {
        "TOOL_SELECTOR_DATA_DIR": str(data_dir),
        "TOOL_SELECTOR_CACHE_DIR": str(settings.cache_dir),
        "TOOL_SELECTOR_SERVERS_FILE": str(servers_file.resolve()),
        "OPENBLAS_NUM_THREADS": "1",
    }


def _ms(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)


async def _direct_start(name: str, servers_file: Path, rounds: int) -> list[float]:
    config = get_server_config(load_servers(servers_file), name)
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        async with StdioHttpConnector().open(name, config, environ=os.environ) as upstream:
            await list_all_tools(upstream.session)
            times.append(time.perf_counter() - started)
    return times


async def _through_gateway(
    env: dict[str, str], queries: Sequence[str], power: str, calls: int, rounds: int
) -> dict[str, list[float]]:
    params = StdioServerParameters(command=str(_CLI), args=["serve"], env=env)
    resolve: list[float] = []
    activate: list[float] = []
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        for query in queries[:5]:  # warm-up: model load, first search
            await client.call_tool("resolve_intent", {"query": query})
        for i in range(calls):
            started = time.perf_counter()
            await client.call_tool("resolve_intent", {"query": queries[i % len(queries)]})
            resolve.append(time.perf_counter() - started)
        for _ in range(rounds):
            started = time.perf_counter()
            result = await client.call_tool("activate_power", {"name": power})
            activate.append(time.perf_counter() - started)
            if result.is_error:
                raise RuntimeError(f"activate_power({power!r}) failed: {result.content}")
            await client.call_tool("deactivate_power", {"name": power})
    return {"resolve": resolve, "activate": activate}


def bench_gateway(
    settings: Settings,
    servers_file: Path,
    queries: Sequence[str],
    *,
    power: str,
    calls: int = 200,
    rounds: int = 7,
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="ts-bench-gateway-") as tmp:
        env = _serve_env(settings, Path(tmp) / "data", servers_file) | {
            "TOOL_SELECTOR_SYNC__ENRICHER": "offline"
        }
        done = subprocess.run([str(_CLI), "sync"], env=env, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 20):
            raise RuntimeError(f"`tool-selector sync` failed ({done.returncode}): {done.stderr[-2000:]}")
        direct = anyio.run(_direct_start, power, servers_file, rounds)
        gateway = anyio.run(_through_gateway, env, list(queries), power, calls, rounds)
        local = Settings(data_dir=Path(tmp) / "data", cache_dir=settings.cache_dir, servers_file=servers_file)
        with Container(local) as container:
            tokens = account_tokens(ReadPath.fixed(container), queries)
    direct_ms = statistics.median(direct) * 1000
    activate_ms = statistics.median(gateway["activate"]) * 1000
    return {
        "resolve_intent_stdio_ms": {
            "calls": calls,
            "p50": _ms(gateway["resolve"], 0.5),
            "p95": _ms(gateway["resolve"], 0.95),
            "max": _ms(gateway["resolve"], 1.0),
        },
        "activation_ms": {
            "power": power,
            "rounds": rounds,
            "upstream_direct_median": round(direct_ms, 1),
            "activate_power_median": round(activate_ms, 1),
            "overhead_median": round(activate_ms - direct_ms, 1),
        },
        "tokens": {
            "tokenizer": tokens.tokenizer,
            "queries": len(tokens.lines),
            "servers": tokens.servers,
            "tools": tokens.tools,
            "all_tools_loaded_per_query": tokens.all_tools_tokens,
            "through_gateway_mean_per_query": round(
                tokens.total_gateway_tokens / max(1, len(tokens.lines)), 1
            ),
            "saved": tokens.saved,
        },
    }


async def _cold_once(env: dict[str, str], query: str) -> tuple[float, float, str]:
    started = time.perf_counter()
    params = StdioServerParameters(command=str(_CLI), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=120) as client:
        initialized = time.perf_counter()
        result = await client.call_tool("resolve_intent", {"query": query})
        answered = time.perf_counter()
    if result.is_error or not isinstance(result.structured_content, dict):
        raise RuntimeError(f"resolve_intent({query!r}) failed: {result.content}")
    return initialized - started, answered - started, str(result.structured_content.get("status"))


def bench_cold_start(
    settings: Settings, data_dir: Path, servers_file: Path, query: str, *, rounds: int = 7
) -> dict[str, Any]:
    """``tool-selector serve`` started by the mcp client as an agent's client starts it, ``rounds`` times
    on a copy of ``data_dir``: seconds from process start to the answer to ``initialize`` and to the
    first ``resolve_intent`` answer (medians, min, max), and from process start to exit of the command
    line's ``--help``, ``--version`` and ``resolve --json QUERY``. The query must activate nothing, so
    that no upstream server start is counted."""
    import shutil

    with tempfile.TemporaryDirectory(prefix="ts-bench-cold-") as tmp:
        shutil.copytree(data_dir, Path(tmp) / "data", ignore=shutil.ignore_patterns("*.lock"))
        env = _serve_env(settings, Path(tmp) / "data", servers_file)
        runs = [anyio.run(_cold_once, env, query) for _ in range(rounds)]
        commands = {
            " ".join(args): [_command_once(env, args) for _ in range(rounds)]
            for args in (["--help"], ["--version"], ["resolve", "--json", query])
        }
    statuses = sorted({status for *_, status in runs})
    if "activated" in statuses:
        raise RuntimeError(f"{query!r} activated a power: give a request that activates nothing")

    def figures(values: list[float]) -> dict[str, float]:
        return {
            "median": round(statistics.median(values), 3),
            "min": round(min(values), 3),
            "max": round(max(values), 3),
        }

    return {
        "query": query,
        "status": statuses,
        "rounds": rounds,
        "initialize_s": figures([r[0] for r in runs]),
        "first_resolve_intent_s": figures([r[1] for r in runs]),
        "command_s": {command: figures(times) for command, times in commands.items()},
    }


def _command_once(env: dict[str, str], args: list[str]) -> float:
    """Seconds from process start to exit of ``tool-selector ARGS`` (its output read and dropped)."""
    import subprocess

    started = time.perf_counter()
    subprocess.run([str(_CLI), *args], env=env, capture_output=True, check=True, timeout=120)
    return time.perf_counter() - started
