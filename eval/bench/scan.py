"""``tool-selector lab bench-scan``: the scanner's detection on a labelled corpus and its false positives
and speed on real catalogs, as printed figures.

The corpus is a JSON-lines file in the format of ``shared/benchmarks/poison/corpus.jsonl`` (``label``:
poisoned | benign, ``attack``: the category). It is scanned as ``tool-selector scan`` scans it (the
file's own names are the shadowing context, and the server rule of ``tool_selector/trust/batch.py``
applies); the figures without the server rule are printed too. Detection is "flagged or
quarantined"; hidden-instruction and invisible-unicode items must be quarantined, so their
quarantine counts are printed apart. A corpus whose lines carry a ``split`` (``dev`` / ``test``, as
``eval/datasets/poison-paraphrases`` does) gets the same figures per split too. Each catalog folder is
scanned three times and the best wall and CPU times kept (the CPU time tells what a busy machine adds):
reading and validating the files included, as ``scan`` does it.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from services.write.scanning import ScanReport, read_jsonl_tools, scan_path
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited
from tool_selector.trust.intent import IntentCheck
from tool_selector.trust.scanner import ScanContext, scan_tool

MUST_QUARANTINE = ("hidden-instruction", "invisible-unicode")
ROUNDS = 3


def _labels(corpus: Path, limit_bytes: int) -> dict[str, tuple[str, str, str]]:
    """id -> (label, attack, split) of every corpus line (split "" when the line has none)."""
    text = read_text_limited(corpus, limit_bytes=limit_bytes, what="corpus file")
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    return {
        str(r["id"]): (str(r.get("label", "")), str(r.get("attack", "")), str(r.get("split") or ""))
        for r in rows
    }


def _tool_rules_only(corpus: Path, limit_bytes: int) -> dict[str, str]:
    """id -> verdict from ``scan_tool`` alone (the file's names as context, no server rule)."""
    tools = read_jsonl_tools(corpus, limit_bytes=limit_bytes)
    context = ScanContext.from_tools((t.server, t.name) for t in tools if t.server and t.name)
    return {
        t.id: scan_tool(
            t.server, t.name, t.description, t.input_schema, t.output_schema, t.annotations, context=context
        ).verdict
        for t in tools
    }


def _share(part: int, whole: int) -> float:
    return round(part / whole, 4) if whole else 0.0


def _figures(verdicts: list[tuple[str, str, str]], alone: dict[str, str], ids: list[str]) -> dict[str, Any]:
    """The corpus figures over (label, attack, verdict) triples; ``alone``/``ids``: the verdicts
    without the server rule, for the poisoned items."""
    per_attack: dict[str, Counter[str]] = defaultdict(Counter)
    benign: Counter[str] = Counter()
    alone_detected = 0
    for (label, attack, verdict), item_id in zip(verdicts, ids, strict=True):
        if label == "poisoned":
            per_attack[attack][verdict] += 1
            alone_detected += alone[item_id] != "clean"
        elif label == "benign":
            benign[verdict] += 1
    poisoned = sum(sum(c.values()) for c in per_attack.values())
    detected = sum(c["flagged"] + c["quarantine"] for c in per_attack.values())
    benign_total = sum(benign.values())
    return {
        "poisoned": poisoned,
        "detected": detected,
        "detection": _share(detected, poisoned),
        "quarantined": sum(c["quarantine"] for c in per_attack.values()),
        "by_attack": {
            attack: f"{c['flagged'] + c['quarantine']}/{c.total()} detected, {c['quarantine']} quarantined"
            for attack, c in sorted(per_attack.items())
        },
        "must_quarantine": {
            attack: f"{per_attack[attack]['quarantine']}/{sum(per_attack[attack].values())}"
            for attack in MUST_QUARANTINE
            if attack in per_attack
        },
        "without_server_rule": {"detected": alone_detected, "detection": _share(alone_detected, poisoned)},
        "benign": benign_total,
        "benign_flagged": benign["flagged"],
        "benign_quarantined": benign["quarantine"],
        "benign_false_positive_rate": _share(benign["flagged"] + benign["quarantine"], benign_total),
    }


def bench_corpus(
    corpus: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES, intent: IntentCheck | None = None
) -> dict[str, Any]:
    labels = _labels(corpus, limit_bytes)
    report = scan_path(corpus, limit_bytes=limit_bytes, intent=intent)
    alone = _tool_rules_only(corpus, limit_bytes)
    rows: list[tuple[str, str, str]] = []
    for item in report.items:
        label, attack, _ = labels.get(item.id, ("", "", ""))
        rows.append((label, attack, item.verdict))
    figures: dict[str, Any] = {"source": str(corpus), **_figures(rows, alone, [i.id for i in report.items])}
    splits = sorted({split for _, _, split in labels.values() if split})
    if splits:
        by_split: dict[str, Any] = {}
        for split in splits:
            kept = [
                (row, i.id)
                for row, i in zip(rows, report.items, strict=True)
                if labels.get(i.id, ("", "", ""))[2] == split
            ]
            by_split[split] = _figures([r for r, _ in kept], alone, [i for _, i in kept])
        figures["by_split"] = by_split
    return figures


def bench_catalog(
    folder: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES, intent: IntentCheck | None = None
) -> dict[str, Any]:
    times: list[float] = []
    cpu: list[float] = []
    report: ScanReport | None = None
    for _ in range(ROUNDS):
        if intent is not None:
            intent.forget()  # each round reads every definition through the model again
        started, started_cpu = time.perf_counter(), time.process_time()
        report = scan_path(folder, limit_bytes=limit_bytes, intent=intent)
        times.append(time.perf_counter() - started)
        cpu.append(time.process_time() - started_cpu)
    assert report is not None
    tools = sum(1 for i in report.items if i.kind == "tool")
    flagged, held = report.count("flagged", "tool"), report.count("quarantine", "tool")
    return {
        "source": str(folder),
        "tools": tools,
        "tools_flagged": flagged,
        "tools_quarantined": held,
        "flagged_share": _share(flagged, tools),
        "servers": sum(1 for i in report.items if i.kind == "server"),
        "servers_flagged": report.count("flagged", "server"),
        "servers_quarantined": report.count("quarantine", "server"),
        "not_clean": [
            f"{i.id}: {i.verdict}: {'; '.join(i.reasons)}" for i in report.items if i.verdict != "clean"
        ],
        f"scan_s_best_of_{ROUNDS}": round(min(times), 3),
        f"scan_cpu_s_best_of_{ROUNDS}": round(min(cpu), 3),
    }


def bench_scan(
    corpus: Path,
    catalogs: list[Path],
    *,
    limit_bytes: int = DEFAULT_MAX_FILE_BYTES,
    intent: IntentCheck | None = None,
) -> dict[str, Any]:
    """The corpus figures and one block of figures per catalog folder (``intent``: with the learned
    check, as ``scan`` runs by default; None: the rules alone)."""
    return {
        "learned_check": intent is not None,
        "corpus": bench_corpus(corpus, limit_bytes=limit_bytes, intent=intent),
        "catalogs": [bench_catalog(folder, limit_bytes=limit_bytes, intent=intent) for folder in catalogs],
    }
