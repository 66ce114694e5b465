"""``tool-selector lab bench-shadowing``: the shadowing check by meaning (tool_selector/trust/likeness.py)
on written attacks, on real catalogs, and what it adds to a write, as printed figures.

- **Attacks** (eval/datasets/shadowing/attacks.jsonl): each attack is a tool of a server of its own,
  vetted against the tools of a configured catalog (eval/datasets/gateway-demo: the demo servers' real
  tools). Caught = the verdict the write would give is ``quarantine``; printed for the scanner's rules
  alone, the check alone and both (what the product does), per kind and split, with the misses.
- **Real catalogs**: every server of each catalog taken as configured and every tool as new (the worst
  case): the tools the check holds, their share, the first reasons and the seconds the check took.
- **Writes** (``--writes``): on fresh data folders, the time of a sync's write of the configured
  catalog's tools and of a catalog import of ``import_size`` tools of another catalog beside them, with
  the check and without (the vector cache cold, as on a first sync).
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.fitting.shadow_fit import catalog_tools, configured, held_tools
from services.root.container import Container
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.config.settings import Settings
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec
from tool_selector.trust.likeness import ShadowCheck, server_key
from tool_selector.trust.scanner import ScanContext, tool_findings, verdict_of


def _attacks(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score_attacks(check: ShadowCheck, attacks: Path, configured_catalog: Path) -> dict[str, Any]:
    """Caught per kind and split: rules alone, the check alone, both."""
    real = catalog_tools(configured_catalog)
    known = configured(real)
    rows = _attacks(attacks)
    context = ScanContext.from_tools(
        [(t.server, t.name) for t in real] + [(a["server"], a["tool_name"]) for a in rows]
    )
    counts: dict[str, Counter[str]] = {}
    missed: list[str] = []
    for row in rows:
        spec = ToolSpec(
            server=row["server"],
            name=row["tool_name"],
            description=row["description"],
            input_schema=row.get("input_schema") or {},
        )
        rules = tool_findings(spec.server, spec.name, spec.description, spec.input_schema, context=context)
        own = server_key([(spec.name, spec.definition_hash())])
        meaning = list(check.judge(spec.server, [spec], known, own_key=own).values())
        outcome = {
            "rules": verdict_of(rules).held,
            "meaning": verdict_of(meaning).held,
            "both": verdict_of(rules + meaning).held,
        }
        for group in ("all", row["kind"], f"split:{row['split']}"):
            found = counts.setdefault(group, Counter())
            found["total"] += 1
            found.update(k for k, v in outcome.items() if v)
        if not outcome["both"]:
            missed.append(f"{row['id']} ({row['kind']}, {row['split']})")
    return {"caught": {k: dict(v) for k, v in counts.items()}, "missed": missed}


def score_catalogs(check: ShadowCheck, catalogs: Sequence[tuple[str, Path]]) -> dict[str, Any]:
    """Every server of each catalog configured: the tools held, their share and the check's seconds."""
    found: dict[str, Any] = {}
    for name, folder in catalogs:
        tools = catalog_tools(folder)
        started = time.perf_counter()
        held = held_tools(check, tools)
        found[name] = {
            "tools": len(tools),
            "held": len(held),
            "share": round(len(held) / len(tools), 4) if tools else 0.0,
            "seconds": round(time.perf_counter() - started, 2),
            "examples": dict(list(held.items())[:5]),
        }
    return found


def _servers(tools: Sequence[ToolSpec]) -> list[ServerSpec]:
    return [ServerSpec(name=n, description="") for n in dict.fromkeys(t.server for t in tools)]


def time_writes(
    settings: Settings, configured_catalog: Path, other_catalog: Path, import_size: int
) -> dict[str, Any]:
    """Seconds of a sync's write and of a catalog import, with the check and without (see module)."""
    demo = catalog_tools(configured_catalog)
    more = [t for t in catalog_tools(other_catalog) if t.server not in {d.server for d in demo}][:import_size]
    found: dict[str, Any] = {"configured_tools": len(demo), "imported_tools": len(more)}
    for label in ("without", "with"):
        with tempfile.TemporaryDirectory(prefix="bench-shadowing-") as tmp:
            data = settings.model_copy(update={"data_dir": Path(tmp)})
            with Container(data) as container:
                writer = container.writer if label == "with" else CatalogWriter(container.store)
                started = time.perf_counter()
                writer.import_catalog(
                    _servers(demo),
                    demo,
                    creation_method=CreationMethod.DISCOVERED,
                    actor="bench",
                    trust="tofu",
                )
                synced = time.perf_counter() - started
                started = time.perf_counter()
                summary = writer.import_catalog(
                    _servers(more), more, creation_method=CreationMethod.IMPORTED, actor="bench", trust="pin"
                )
                imported = time.perf_counter() - started
                found[label] = {
                    "sync_write_s": round(synced, 2),
                    "import_s": round(imported, 2),
                    "import_held": len(summary.held),
                }
    return found


def bench_shadowing(
    settings: Settings,
    attacks: Path,
    configured_catalog: Path,
    catalogs: Sequence[tuple[str, Path]],
    *,
    writes: bool = False,
    other_catalog: Path | None = None,
    import_size: int = 1000,
) -> dict[str, Any]:
    with Container(settings) as container:
        reads = container.shadow_embedder
        assert reads is not None  # built from settings: the relevance model
        check = ShadowCheck(reads, None, container.shadow_model)
        figures: dict[str, Any] = {
            "model": container.shadow_model.version,
            "claim_from": container.shadow_model.claim_from,
            "attacks": score_attacks(check, attacks, configured_catalog),
            "catalogs": score_catalogs(check, catalogs),
        }
    if writes and other_catalog is not None:
        figures["writes"] = time_writes(settings, configured_catalog, other_catalog, import_size)
    return figures
