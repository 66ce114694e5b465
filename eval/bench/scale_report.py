"""What ``tool-selector lab bench-scale`` writes and prints: ``scale.json``, ``scale.png`` (recall and p95
against catalog size) and a table, one line per size."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from eval.extras import lab_import


def write_outputs(rows: list[dict[str, Any]], out: Path, run: dict[str, Any]) -> tuple[Path, Path]:
    out.mkdir(parents=True, exist_ok=True)
    data = out / "scale.json"
    data.write_text(json.dumps({"run": run, "sizes": rows}, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return data, write_plot(rows, out / "scale.png")


def write_plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """msc L1-4 tool R@5 and server R@3 (left axis) and resolve p95 (right axis) against the catalog's
    tool count, on a log axis; sizes that did not finish are left out."""
    matplotlib = lab_import("matplotlib", "The scale plot")
    matplotlib.use("Agg")  # no screen: render to a file
    plt = lab_import("matplotlib.pyplot", "The scale plot")

    done = [r for r in rows if r.get("finished")]
    tools = [r["tools"] for r in done]
    figure, recall_axis = plt.subplots(figsize=(6.4, 4.0))
    recall_axis.plot(tools, [r["tool_r5_l1_4"] for r in done], "o-", color="#4c78a8", label="tool R@5")
    recall_axis.plot(tools, [r["server_r3_l1_4"] for r in done], "s-", color="#54a24b", label="server R@3")
    recall_axis.set_xscale("log")
    recall_axis.set_ylim(0, 1.02)
    recall_axis.set_xlabel("tools in the catalog (log)")
    recall_axis.set_ylabel("msc_bench_dev L1-4 recall")
    latency_axis = recall_axis.twinx()
    latency_axis.plot(tools, [r["resolve_p95_ms"] for r in done], "^--", color="#e45756", label="resolve p95")
    latency_axis.set_ylabel("resolve p95 (ms)")
    latency_axis.set_ylim(bottom=0)
    lines = recall_axis.get_legend_handles_labels()
    more = latency_axis.get_legend_handles_labels()
    recall_axis.legend(lines[0] + more[0], lines[1] + more[1], loc="lower left", fontsize=8)
    recall_axis.set_title("bench-scale: recall and latency against catalog size", fontsize=10)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


_COLUMNS = (
    ("tools", "tools", "{:,}"),
    ("copies", "copy_tools", "{:,}"),
    ("build s", "build_s", "{:.1f}"),
    ("embedded", "documents_embedded", "{:,}"),
    ("all-embedded s (est.)", "full_build_s_estimate", "{:.0f}"),
    ("tools/s", "build_tools_per_s", "{:.0f}"),
    ("RSS MB", "peak_rss_mb", "{:.0f}"),
    ("disk MB", "data_mb", "{:.0f}"),
    ("p50 ms", "resolve_p50_ms", "{:.1f}"),
    ("p95 ms", "resolve_p95_ms", "{:.1f}"),
    ("p99 ms", "resolve_p99_ms", "{:.1f}"),
    ("tool R@5", "tool_r5_l1_4", "{:.3f}"),
    ("srv R@3", "server_r3_l1_4", "{:.3f}"),
    ("reg ms", "register_ms", "{:.0f}"),
    ("reg+read ms", "register_searchable_ms", "{:.0f}"),
)


def format_table(rows: list[dict[str, Any]]) -> str:
    """One line per size; a size that did not finish says so (and what it measured before)."""
    header = ["size", *(title for title, _, _ in _COLUMNS), "note"]
    body = []
    for row in rows:
        cells = [f"{row['size']:,}"]
        for _, key, form in _COLUMNS:
            value = row.get(key)
            cells.append(form.format(value) if isinstance(value, int | float) else "-")
        cells.append(row.get("error", ""))
        body.append(cells)
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    lines = [
        "  ".join(cell.rjust(widths[i]) for i, cell in enumerate(line)).rstrip() for line in [header, *body]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    notes = [f"{row['size']:,}: {row['composition']}" for row in rows if row.get("composition")]
    return "\n".join([*lines, "", *notes])
