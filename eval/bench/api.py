"""``tool-selector lab bench-api``: load the REST API's /api/v1/resolve with N concurrent clients.

It builds a fresh data folder from a catalog (import, index, one admin key), starts the real
``tool-selector api`` process on loopback (``--workers W`` worker processes sharing the port), and runs
N closed-loop clients for S seconds: each sends its next query as soon as the previous answer arrived.
The clients are plain asyncio streams speaking HTTP/1.1 keep-alive (an HTTP library would take a large
share of the 2 cores from the server).
Queries only reach the resolver, never the catalog or the index.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from eval.quality.metrics import percentile
from services.access.keys import create_key
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import build_index
from tool_selector.config.settings import Settings
from tool_selector.core.errors import InvalidInputError, WorldError
from tool_selector.core.files import read_text_limited


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _read_queries(path: Path, limit: int, limit_bytes: int) -> list[str]:
    queries: list[str] = []
    for line in read_text_limited(path, limit_bytes=limit_bytes, what="queries file").split("\n"):
        if line.strip():
            queries.append(str(json.loads(line)["query"]))
    if not queries:
        raise InvalidInputError(f"{path} holds no queries.", hint="One JSON object with a query per line.")
    return queries[:limit]


def _wait_healthy(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise WorldError(f"`tool-selector api` exited with {proc.returncode} before answering.")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.1)
    raise WorldError(f"`tool-selector api` did not answer /health within {timeout_s:.0f} s.")


async def _client(
    port: int, key: str, queries: list[str], start: int, until: float, out: list[float], errors: list[str]
) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    n = start
    try:
        while time.perf_counter() < until:
            body = json.dumps({"query": queries[n % len(queries)]}).encode()
            n += 1
            head = (
                f"POST /api/v1/resolve HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
            ).encode()
            sent = time.perf_counter()
            writer.write(head + body)
            await writer.drain()
            status_line = await reader.readline()
            length = 0
            while (line := await reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.decode("latin-1").partition(":")
                if name.strip().lower() == "content-length":
                    length = int(value.strip())
            await reader.readexactly(length)
            out.append(time.perf_counter() - sent)
            status = status_line.split(b" ")[1:2]
            if status != [b"200"]:
                errors.append(status_line.decode("latin-1").strip())
    finally:
        writer.close()


async def _load(port: int, key: str, queries: list[str], clients: int, seconds: float) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[str] = []
    until = time.perf_counter() + seconds
    started = time.perf_counter()
    step = max(1, len(queries) // clients)
    await asyncio.gather(
        *(_client(port, key, queries, i * step, until, latencies, errors) for i in range(clients))
    )
    elapsed = time.perf_counter() - started
    ms = sorted(x * 1000 for x in latencies)

    def pct(q: float) -> float | None:
        value = percentile(ms, q)
        return None if value is None else round(value, 2)

    return {
        "requests": len(ms),
        "seconds": round(elapsed, 2),
        "requests_per_s": round(len(ms) / elapsed, 1),
        "p50_ms": pct(50),
        "p95_ms": pct(95),
        "p99_ms": pct(99),
        "max_ms": round(ms[-1], 2) if ms else None,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:5],
    }


def worker_pids(parent: int) -> list[int]:
    """The uvicorn worker processes of ``tool-selector api --workers N`` (spawned children)."""
    try:
        children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    except OSError:
        return []
    found = []
    for pid in children:
        try:
            if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(int(pid))
        except OSError:
            continue
    return sorted(found)


def cpu_seconds(pid: int) -> float | None:
    """A process's CPU time so far (user + system), in seconds; None once it is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = raw[raw.rfind(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int | str = "self") -> float | None:
    """A process's peak resident memory (VmHWM), in MiB; None once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        return None
    return None


def bench_api(
    settings: Settings,
    *,
    catalog: Path,
    queries_file: Path,
    clients: int = 16,
    seconds: float = 30.0,
    workers: int = 1,
    max_queries: int = 100_000,
) -> dict[str, Any]:
    queries = _read_queries(queries_file, max_queries, settings.max_file_bytes)
    with tempfile.TemporaryDirectory(prefix="bench-api-") as tmp:
        data_dir = Path(tmp) / "data"
        run_settings = settings.model_copy(update={"data_dir": data_dir})
        with Container(run_settings) as container:
            import_catalog_dir(container, catalog, approve=True, actor="bench")
            build_index(container)
            servers, tools = container.store.counts()
            key = create_key(container.store, "bench", role="viewer", actor="bench-api").key
        port = _free_port()
        env = {**os.environ, "TOOL_SELECTOR_DATA_DIR": str(data_dir), "OPENBLAS_NUM_THREADS": "1"}
        env["TOOL_SELECTOR_CACHE_DIR"] = str(settings.cache_dir)
        exe = Path(sys.executable).with_name("tool-selector")
        command = [str(exe), "api", "--port", str(port), "--workers", str(workers)]
        proc = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            _wait_healthy(port, proc)
            # warm up the model and the routes, in every worker (the kernel spreads the connections)
            asyncio.run(_load(port, key, queries[:5], 4 * workers, 1.0 + workers))
            pids = worker_pids(proc.pid) if workers > 1 else [proc.pid]
            cpu_before = [cpu_seconds(pid) or 0.0 for pid in pids]
            result = asyncio.run(_load(port, key, queries, clients, seconds))
            cpu = [
                round((cpu_seconds(pid) or 0.0) - before, 1)
                for pid, before in zip(pids, cpu_before, strict=True)
            ]
            rss = [peak_rss_mb(pid) for pid in pids]
            parent_rss = peak_rss_mb(proc.pid) if workers > 1 else None
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    total_rss = sum(r for r in [*rss, parent_rss] if r is not None)
    return {
        "catalog": str(catalog),
        "servers": servers,
        "tools": tools,
        "queries_file": str(queries_file),
        "distinct_queries": len(set(queries)),
        "clients": clients,
        "workers": workers,
        "embedding_threads": settings.embedding.threads,
        "server_peak_rss_mb": round(total_rss, 1) if total_rss else None,
        "worker_peak_rss_mb": rss if workers > 1 else None,
        "worker_cpu_s": cpu,
        "resolve": result,
        "note": "closed loop on loopback; a query asked again is answered from the server's answer cache"
        + ("; peak RSS summed over the workers and their parent" if workers > 1 else ""),
    }
