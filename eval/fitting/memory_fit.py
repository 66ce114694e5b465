"""``tool-selector lab memory-fit``: the memory's judge (tool_selector/route/memory.py) fitted on
replays and judged leave-one-dataset-out (issue 32).

1. Collect: each dataset is replayed twice (eval/quality/replay.py; the second pass in the second
   phrasing where a folder has ``queries-rephrased.jsonl``) with the memory recording and judging but
   changing nothing; every request for which a remembered choice was usable gives a row: the judge's
   five features and whether the remembered power is gold (never, for a request nothing serves).
2. Leave one dataset out: for each dataset, a sign-constrained logistic regression (every feature may
   only raise the probability: eval/fitting/calibrate_fit.SignedLogistic) is fitted on the other
   datasets' rows, and the left-out dataset is replayed with it deciding; also replayed with the memory
   off, the baseline.
3. The shipped judge is fitted on every dataset's rows and written with its provenance (the datasets
   and their files' sha256, the row counts, the leave-one-dataset-out table).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from eval.fitting.calibrate_fit import SignedLogistic
from eval.quality.dataset import DatasetArg, named_datasets
from eval.quality.replay import REPHRASED_FILE, replay
from tool_selector.config.settings import Settings
from tool_selector.core.errors import InvalidInputError
from tool_selector.route.memory import FEATURES, MemoryModel

VERSION = "memory-v1"
REPLAY_VERSION = 2  # bump when the replay's simulated agent or the memory's recording changes
SIGNS = (1, 1, 1, 1, 1)  # more of any feature never makes the remembered power less likely right


def fit_model(rows: Sequence[dict[str, Any]], *, version: str = VERSION) -> MemoryModel:
    """A judge fitted on replay rows that carry features and a label. Each dataset weighs the same (one
    large benchmark must not set the probability for everyone's setup); within a dataset every row
    counts once, so the probability keeps the share of right recalls it has there."""
    found = [r for r in rows if "features" in r]
    if not found or len({r["label"] for r in found}) < 2:
        raise InvalidInputError(
            "The replays gave no remembered choice judged both right and wrong: nothing to fit.",
            hint="Give more datasets, with requests nothing serves among them.",
        )
    x = np.asarray([r["features"] for r in found], dtype=np.float64)
    y = np.asarray([bool(r["label"]) for r in found])
    sizes: dict[str, int] = {}
    for r in found:
        sizes[r["dataset"]] = sizes.get(r["dataset"], 0) + 1
    weight = np.asarray([len(found) / (len(sizes) * sizes[r["dataset"]]) for r in found])
    model = SignedLogistic(SIGNS).fit(x, y, weight)
    return MemoryModel(
        version=version,
        features=list(FEATURES),
        intercept=round(model.intercept, 7),
        coefficients=[round(float(v), 7) for v in model.coefficients],
        mean=[round(float(v), 7) for v in model.mean],
        scale=[round(float(v), 7) if v > 1e-6 else 1.0 for v in model.scale],  # a constant feature: 1
    )


def _digest(arg: DatasetArg) -> str:
    digest = hashlib.sha256()
    for folder in arg.folders:
        for name in ("servers.json", "tools.json", "queries.jsonl", REPHRASED_FILE):
            if (folder / name).is_file():
                digest.update((folder / name).read_bytes())
    return digest.hexdigest()


def _cache_file(settings: Settings, arg: DatasetArg, seed: int) -> Path:
    from tool_selector.route import memory as remembered

    key = hashlib.sha256(
        json.dumps(
            [
                _digest(arg),
                settings.embedding.model,
                str(settings.confidence.calibration_file),
                remembered.FEATURES,
                remembered.FLOOR,
                remembered.CANDIDATES,
                seed,
                REPLAY_VERSION,
            ],
            default=str,
        ).encode()
    ).hexdigest()[:16]
    return settings.cache_dir / "memory-fit" / f"{arg.name}-{key}.json"


def _pass(report: dict[str, Any], name: str, number: int) -> dict[str, Any]:
    row = report["datasets"][name][number - 1]
    return {k: row[k] for k in ("plain_activated", "activated_precision", "unanswerable_activated")}


def memory_fit(
    settings: Settings,
    arguments: Sequence[str | Path],
    out: Path,
    *,
    seed: int = 0,
    work: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """See the module docstring. ``work``: keep each dataset's collected rows and its replay without
    memory in the cache folder (memory-fit/), keyed by its files, the embedding model, the calibration
    file, the judge's features and the seed, so that a rerun that changes only the fit reuses them."""
    args = named_datasets(arguments)
    if len(args) < 2:
        raise InvalidInputError("Leave-one-dataset-out needs at least two datasets.", hint="Give more.")
    rows: dict[str, list[dict[str, Any]]] = {}
    baselines: dict[str, dict[str, Any]] = {}
    for arg in args:
        cached = _cache_file(settings, arg, seed) if work else None
        if cached is not None and cached.is_file():
            rows[arg.name], baselines[arg.name] = json.loads(cached.read_text(encoding="utf-8"))
            continue
        found: list[dict[str, Any]] = []
        replay(settings, [arg], passes=2, rephrased=None, seed=seed, collect=True, rows_out=found)
        rows[arg.name] = found
        baselines[arg.name] = replay(settings, [arg], passes=2, rephrased=None, seed=seed, memory=False)
        if cached is not None:
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps([found, baselines[arg.name]]), encoding="utf-8")
        if progress is not None:
            progress(f"collected {arg.name}: {sum('features' in r for r in found)} recalls")
    table: dict[str, dict[str, Any]] = {}
    for arg in args:
        others = [r for name, found in rows.items() if name != arg.name for r in found]
        judge = fit_model(others, version=f"{VERSION}-without-{arg.name}")
        judged = replay(settings, [arg], passes=2, rephrased=None, seed=seed, model=judge)
        off = baselines[arg.name]
        table[arg.name] = {
            "without_memory": {"pass1": _pass(off, arg.name, 1), "pass2": _pass(off, arg.name, 2)},
            "with_memory": {"pass1": _pass(judged, arg.name, 1), "pass2": _pass(judged, arg.name, 2)},
            "recalls": sum("features" in r for r in rows[arg.name]),
        }
        if progress is not None:
            progress(f"left out {arg.name}: {table[arg.name]['with_memory']['pass2']}")
    shipped = fit_model([r for found in rows.values() for r in found])
    provenance = {
        "script": "scripts/memory_fit.sh (tool-selector lab memory-fit)",
        "seed": seed,
        "datasets": {a.name: {"folders": len(a.folders), "sha256": _digest(a)} for a in args},
        "rows": {name: sum("features" in r for r in found) for name, found in rows.items()},
        "leave_one_dataset_out": table,
    }
    model = shipped.model_copy(update={"provenance": provenance})
    out.write_text(model.model_dump_json(indent=2) + "\n", encoding="utf-8")
    written: dict[str, Any] = json.loads(model.model_dump_json())
    return {"model": str(out), **written}
