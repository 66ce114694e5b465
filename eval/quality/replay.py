"""``tool-selector lab replay``: a simulated agent drives the gateway service with a dataset's requests,
to measure what the memory of confirmed choices (services/gateway/memory/recording.py) does with use.

Per dataset folder (a small-catalog root gives each of its catalogs), in the eval workspace of its
catalog (eval/quality/workspace.py; the queries never reach it), with the memory emptied first and last:
``passes`` passes over the requests, each in its own seeded random order, each request in a session of
its own. The second and later passes read ``queries-rephrased.jsonl`` beside ``queries.jsonl`` when
``rephrased`` (the same person's same intents in other words: eval/datasets/personal-setups), else the
same words again.

The gateway service is the real one (``GatewayService.resolve_intent``: the resolver, the router and the
memory as ``tool-selector serve`` runs them). A benchmark's servers cannot be started (they are catalog
entries, not configured commands), so the simulated agent's activation and call are told to the memory
as the gateway tells it after a real ``activate_power`` and a real call that succeeded:
- ``activated``: when the power is gold, its gold tool is called and succeeds; else the agent
  deactivates it (what an agent does with the wrong tools);
- ``multiple_matches`` and ``weak_matches``: when a gold power is among the matches shown, it is
  activated and its gold tool called; else nothing (the agent would ask the user);
- ``not_found``, and every request with no gold: nothing.

Figures per pass, over the whole pass and its first and last fifth: plain requests activated (with a
gold), activated precision (the activated power is gold), requests nothing serves activated.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any, Literal

import anyio

from eval.quality.dataset import (
    DatasetArg,
    Query,
    check_dataset_dir,
    expand_datasets,
    load_phrased,
    load_queries,
)
from eval.quality.ranking import server_of
from eval.quality.workspace import open_workspace
from services.gateway.service import Caller, GatewayService
from services.root.container import Container
from tool_selector.catalog import memory as remembered_rows
from tool_selector.config.settings import Settings
from tool_selector.core.errors import CatalogFileError
from tool_selector.core.files import read_text_limited
from tool_selector.route.memory import MemoryModel, Recalled

REPHRASED_FILE = "queries-rephrased.jsonl"


def _rephrased(folder: Path, queries: Sequence[Query], limit_bytes: int) -> dict[str, str]:
    path = folder / REPHRASED_FILE
    if not path.is_file():
        raise CatalogFileError(
            f"{folder} has no {REPHRASED_FILE} for the second phrasing.",
            hint="Replay without --rephrased, or write one (eval/datasets/personal-setups/REPHRASED.md).",
        )
    texts = {}
    for line in read_text_limited(path, limit_bytes=limit_bytes, what="second phrasing").splitlines():
        if line.strip():
            row = json.loads(line)
            texts[str(row["rephrases"])] = str(row["query"])
    missing = [q.id for q in queries if q.id not in texts]
    if missing:
        raise CatalogFileError(
            f"{path} lacks {len(missing)} requests (first: {missing[:3]}).",
            hint="Give every request of queries.jsonl a line (check_rephrased.py checks it).",
        )
    return texts


def _is_plain(query: Query) -> bool:
    return query.answerable and query.expected_tier in (None, "activated")


def _figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    plain = [r for r in rows if r["plain"]]
    activated = [r for r in rows if r["answerable"] and r["status"] == "activated"]
    unanswerable = [r for r in rows if not r["answerable"]]

    def share(part: Sequence[object], whole: Sequence[object]) -> float | None:
        return round(len(part) / len(whole), 3) if whole else None

    return {
        "requests": len(rows),
        "plain_activated": share([r for r in plain if r["status"] == "activated"], plain),
        "activated_precision": share([r for r in activated if r["right"]], activated),
        "unanswerable_activated": share(
            [r for r in unanswerable if r["status"] == "activated"], unanswerable
        ),
        "remembered": sum(r["remembered"] for r in rows),
    }


async def _agent(service: GatewayService, session: str, query: Query, text: str) -> dict[str, Any]:
    answer = await service.resolve_intent(Caller(session, transport="replay"), text)
    status, power = answer["status"], answer.get("power")
    gold = set(query.gold_servers)
    tools = {server_of(t): t.partition("::")[2] for group in query.gold_tool_groups for t in group}
    memory = service.memory
    if status == "activated" and power is not None and query.answerable:
        if power in gold:
            await anyio.to_thread.run_sync(
                lambda: memory.on_call(session, power, tools.get(power, ""), ok=True)
            )
        else:
            await anyio.to_thread.run_sync(memory.on_deactivate, session, power)
    elif status in ("multiple_matches", "weak_matches") and query.answerable:
        shown = [m["power"] for m in answer.get("matches", [])]
        chosen = next((p for p in shown if p in gold), None)
        if chosen is not None:
            memory.on_activate(session, chosen)
            await anyio.to_thread.run_sync(
                lambda: memory.on_call(session, chosen, tools.get(chosen, ""), ok=True)
            )
    return {
        "id": query.id,
        "status": status,
        "answerable": query.answerable,
        "plain": _is_plain(query),
        "right": power in gold if status == "activated" else False,
        "remembered": answer.get("match_type") == "remembered",
    }


async def _replay_one(
    container: Container,
    queries: Sequence[Query],
    texts: Sequence[dict[str, str]],
    *,
    seed: int,
    model: MemoryModel | None,
    collect: bool,
) -> list[list[dict[str, Any]]]:
    passes = []
    seen: dict[str, tuple[Recalled | None, float]] = {}
    async with GatewayService(container, environ=os.environ, configs=dict) as service:
        if model is not None:
            service.memory.model = model
        service.memory.apply = not collect
        service.memory.runnable = None  # a benchmark's servers are catalog entries: none is configured
        service.memory.observer = lambda session, recalled, p: seen.__setitem__(session, (recalled, p))
        for number, words in enumerate(texts):
            order = list(queries)
            random.Random(seed * 1000 + number).shuffle(order)
            rows = []
            for i, query in enumerate(order):
                session = f"replay-{number}-{i}"
                row = await _agent(service, session, query, words[query.id])
                recalled, _ = seen.pop(session, (None, 0.0))
                if recalled is not None:  # what the memory's judge read, and whether it named a gold power
                    row["features"] = list(recalled.features)
                    row["label"] = recalled.choice.power in query.gold_servers
                rows.append(row | {"at": i / len(order)})  # where in the pass: first and last fifth
            passes.append(rows)
    return passes


def replay(
    settings: Settings,
    datasets: Sequence[Path] | Sequence[DatasetArg],
    *,
    passes: int = 2,
    rephrased: bool | None = False,
    seed: int = 0,
    memory: bool = True,
    model: MemoryModel | None = None,
    collect: bool = False,
    rows_out: list[dict[str, Any]] | None = None,
    progress: Callable[[str], None] | None = None,
    phrasing: Literal["user", "agent"] = "user",
) -> dict[str, Any]:
    """Replay every dataset folder ``passes`` times; the figures per dataset and over all of them.
    ``memory=False``: the same replay with the memory off (what the gateway does without it);
    ``rephrased=None``: the second phrasing where a folder has one. ``model`` judges the memory instead
    of the shipped one; ``collect``: the memory judges but changes nothing. Every request's row (with
    the judge's features and label when a remembered choice was usable) goes to ``rows_out``.
    ``phrasing="agent"``: the first pass (and the later ones, unless rephrased) sends the agent's query of
    each request (queries-agent.jsonl) instead of the person's words."""
    settings = settings.model_copy(update={"memory": settings.memory.model_copy(update={"enabled": memory})})
    report: dict[str, Any] = {
        "passes": passes,
        "rephrased": rephrased,
        "phrasing": phrasing,
        "seed": seed,
        "memory": memory,
        "model": (model.version if model is not None else "shipped") if not collect else "collecting",
        "datasets": {},
    }
    together: list[list[dict[str, Any]]] = [[] for _ in range(passes)]
    args = [d for d in datasets if isinstance(d, DatasetArg)]
    args += expand_datasets([d for d in datasets if not isinstance(d, DatasetArg)])
    for arg in args:
        mine: list[list[dict[str, Any]]] = [[] for _ in range(passes)]
        for folder in arg.folders:
            paths = check_dataset_dir(folder)
            queries = load_queries(paths.queries, limit_bytes=settings.max_file_bytes)
            original = {q.id: q.query for q in queries}
            if phrasing == "agent":  # the agent's query of each request (its line's ``rephrases``)
                agent, _ = load_phrased(paths, "agent", limit_bytes=settings.max_file_bytes)
                said = {q.rephrases: q.query for q in agent}
                original = {q.id: said.get(q.id, q.query) for q in queries}
            reword = rephrased if rephrased is not None else (folder / REPHRASED_FILE).is_file()
            second = _rephrased(folder, queries, settings.max_file_bytes) if reword else original
            texts = [original] + [second] * (passes - 1)
            container, _ = open_workspace(settings, paths)
            with container:
                remembered_rows.clear(container.store.database)
                try:
                    run = partial(
                        _replay_one, container, queries, texts, seed=seed, model=model, collect=collect
                    )
                    done = anyio.run(run)
                finally:
                    remembered_rows.clear(container.store.database)
            for number, rows in enumerate(done):
                mine[number] += rows
                together[number] += rows
                if rows_out is not None:
                    rows_out += [r | {"dataset": arg.name, "pass": number + 1} for r in rows]
            if progress is not None:
                progress(folder.name)
        report["datasets"][arg.name] = _by_pass(mine)
    report["all"] = _by_pass(together)
    return report


def _by_pass(passes: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    out = []
    for number, rows in enumerate(passes, start=1):
        out.append(
            {
                "pass": number,
                **_figures(rows),
                "first_fifth": _figures([r for r in rows if r["at"] < 0.2]),
                "last_fifth": _figures([r for r in rows if r["at"] >= 0.8]),
            }
        )
    return out
