"""The file ``tool-selector lab calibrate`` writes: the versioned calibration JSON with its provenance, and
beside it a gzipped CSV of the evidence (ids, labels and features; no query text), both atomically."""

from __future__ import annotations

import csv
import gzip
import io
import json
import math
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from eval.fitting.calibrate_evidence import Example
from tool_selector.resolve.confidence import Calibration
from tool_selector.resolve.evidence import FEATURES


def write_calibration(
    calibration: Calibration,
    fitted: Sequence[Example],
    held_out: Sequence[Example],
    out: Path,
    provenance: dict[str, Any],
) -> Path:
    """Write the calibration JSON and, beside it, the gzipped evidence CSV of the examples it was fitted
    on and of the hold-out (the ``role`` column says which); both atomically."""
    calibration.provenance = {**provenance, **calibration.provenance}
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    tmp.write_text(compact_json(calibration.model_dump()), encoding="utf-8")
    evidence_path = out.with_name(out.stem + ".evidence.csv.gz")
    tmp_csv = evidence_path.with_name(f".{evidence_path.name}.tmp-{os.getpid()}")
    with (
        tmp_csv.open("wb") as raw,
        gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as packed,  # mtime 0: same data, same bytes
        io.TextIOWrapper(packed, encoding="utf-8", newline="") as fh,
    ):
        writer = csv.writer(fh)
        writer.writerow(
            [
                "role",
                "dataset",
                "catalog",
                "servers",
                "id",
                "level",
                "origin",
                "answerable",
                "correct",
                "top3",
                *FEATURES,
            ]
        )
        for role, examples in (("fit", fitted), ("holdout", held_out)):
            for e in examples:
                writer.writerow(
                    [
                        role,
                        e.dataset,
                        e.catalog,
                        e.catalog_servers,
                        e.id,
                        e.level,
                        e.origin or "",
                        int(e.answerable),
                        int(e.correct),
                        int(e.top3),
                        *(_short(e.evidence.get(f, 0.0)) for f in FEATURES),
                    ]
                )
    os.replace(tmp_csv, evidence_path)
    os.replace(tmp, out)
    return evidence_path


_NUMBER_LIST = re.compile(r"\[\s*(-?[0-9.eE+-]+(?:,\s*-?[0-9.eE+-]+)*)\s*\]")


def compact_json(data: Any) -> str:
    """Indented JSON whose lists of numbers (the trees) sit on one line each: readable provenance,
    a file a tenth the size."""
    text = json.dumps(data, indent=1)
    return (
        _NUMBER_LIST.sub(lambda m: "[" + ",".join(v.strip() for v in m.group(1).split(",")) + "]", text)
        + "\n"
    )


def _short(value: float) -> str:
    """The value as the fit saw it (features carry 4 decimals), without trailing zeros."""
    return "0" if value == 0 or math.isnan(value) else repr(round(value, 4))
