"""Render an :class:`~eval.quality.metrics.EvalReport` as a console table or a markdown report."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from eval.extras import lab_import
from eval.quality.metrics import EvalReport, GroupMetrics
from eval.quality.routing_shares import TIER_ORDER, tier_sort_key

_MISSING = "-"

DEFINITIONS: tuple[str, ...] = (
    "**tool recall@k**: per answerable query, the share of its slots with at least one id in the top k "
    "tools, averaged over queries. **server recall@k**: the same with each slot mapped to the servers "
    'of its ids (`rsplit("::", 1)[0]`), over the ranked server list.',
    "**tool MRR**: reciprocal rank of the first tool that fills any slot (0 when none is listed); "
    "answerable queries only.",
    "**activated precision**: of the answerable queries routed to the `activated` tier, the share whose "
    "top server fills a slot.",
    "**unanswerable caught**: of the queries with empty gold, the share routed to `not_found` or "
    "`weak_matches`.",
    "**answerable not found**: of the answerable queries, the share routed to `not_found`.",
    "**confidence AUROC**: how well the reported confidence separates answerable (positive) from "
    "unanswerable (negative) queries; Mann-Whitney, a tie counts one half.",
    "**answerable activated**: of the answerable queries, the share routed to `activated`. **gold removed "
    "activated**: of the small-catalog requests whose gold servers were removed (`origin` gold-removed), "
    "the share routed to `activated`.",
    "**ECE** (expected calibration error): the confidence claims the probability that the top power is "
    "right; queries binned by confidence in tenths, the query-weighted mean of |mean confidence - share "
    "whose top server fills a slot| (an unanswerable query is never right). The reliability diagram "
    "plots the same bins.",
    "**latency p50 / p95**: percentiles of per-query latency in milliseconds, linear interpolation "
    "between closest ranks (numpy's default).",
    "**tier accuracy / confusion** (only when queries carry `expected_tier`): share of queries routed to "
    "their expected tier, and expected -> predicted counts. **top-3 server accuracy**: share of "
    "answerable queries whose top 3 servers fill at least one slot.",
    "**slot recall@k** (multi-step requests: answerable queries with at least two slots): the resolver "
    "splits a multi-step request into parts and ranks powers for each; per query, the share of its slots "
    "whose servers meet the union of the top k powers of its parts (the whole request's top k powers when "
    "it did not split), averaged over those queries. Shown with their count, the share that split, and "
    "tool recall@5 and server recall@3 over the same queries.",
    "A slot is a list of interchangeable tool ids; retrieving any one of them fills it. "
    "A figure shown as `-` has an empty denominator.",
)


def _ratio(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.3f}"


def _ms(value: float | None) -> str:
    return _MISSING if value is None else f"{value:.1f}"


_Column = tuple[str, Callable[[GroupMetrics], str]]

_BASE_COLUMNS: tuple[_Column, ...] = (
    ("n", lambda g: str(g.count)),
    ("tool R@1", lambda g: _ratio(g.tool_recall_at_1)),
    ("tool R@3", lambda g: _ratio(g.tool_recall_at_3)),
    ("tool R@5", lambda g: _ratio(g.tool_recall_at_5)),
    ("srv R@1", lambda g: _ratio(g.server_recall_at_1)),
    ("srv R@3", lambda g: _ratio(g.server_recall_at_3)),
    ("srv R@5", lambda g: _ratio(g.server_recall_at_5)),
    ("MRR", lambda g: _ratio(g.mrr)),
    ("ans act", lambda g: _ratio(g.answerable_activated)),
    ("act prec", lambda g: _ratio(g.activated_precision)),
    ("unans caught", lambda g: _ratio(g.unanswerable_caught)),
    ("ans not found", lambda g: _ratio(g.answerable_not_found)),
    ("gold-rm act", lambda g: _ratio(g.gold_removed_activated)),
    ("AUROC", lambda g: _ratio(g.confidence_auroc)),
    ("ECE", lambda g: _ratio(g.ece)),
    ("p50 ms", lambda g: _ms(g.latency_p50_ms)),
    ("p95 ms", lambda g: _ms(g.latency_p95_ms)),
)
_TIER_COLUMNS: tuple[_Column, ...] = (
    ("tier acc", lambda g: _ratio(g.tier_accuracy)),
    ("top3 srv acc", lambda g: _ratio(g.top3_server_accuracy)),
)


_MULTI_COLUMNS: tuple[_Column, ...] = (
    ("multi-slot n", lambda g: str(g.multi_slot)),
    ("split", lambda g: _ratio(g.multi_slot_split)),
    ("slot R@1", lambda g: _ratio(g.slot_recall_at_1)),
    ("slot R@3", lambda g: _ratio(g.slot_recall_at_3)),
    ("tool R@5", lambda g: _ratio(g.multi_slot_tool_recall_at_5)),
    ("srv R@3", lambda g: _ratio(g.multi_slot_server_recall_at_3)),
)
_MULTI_TITLE = "multi-step requests (answerable, two or more slots)"
_NO_MULTI = "multi-step requests: none (no answerable query has two or more slots)"


def _multi_rows(report: EvalReport) -> list[list[str]]:
    """One row per group holding multi-slot queries."""
    return [
        [g.name, *(render(g) for _, render in _MULTI_COLUMNS)] for g in report.groups.values() if g.multi_slot
    ]


def _columns(report: EvalReport) -> tuple[_Column, ...]:
    has_tiers = any(g.tier_confusion is not None for g in report.groups.values())
    return _BASE_COLUMNS + (_TIER_COLUMNS if has_tiers else ())


def _tiers_in(report: EvalReport) -> list[str]:
    """The four routing tiers, always, then any other tier name a prediction used."""
    names: set[str] = set(TIER_ORDER)
    for g in report.groups.values():
        names.update(g.tiers_answerable)
        names.update(g.tiers_unanswerable)
    return sorted(names, key=tier_sort_key)


def _confusion_rows(confusion: dict[str, dict[str, int]]) -> tuple[list[str], list[list[str]]]:
    """Header (``expected \\ predicted``, predicted tiers..., ``total``) and one row per expected tier."""
    predicted = sorted({t for row in confusion.values() for t in row}, key=tier_sort_key)
    header = ["expected \\ predicted", *predicted, "total"]
    rows = [
        [expected, *(str(row.get(t, 0)) for t in predicted), str(sum(row.values()))]
        for expected, row in confusion.items()
    ]
    return header, rows


def _fixed_width(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [
        max(len(header[i]), *(len(r[i]) for r in rows)) if rows else len(header[i])
        for i in range(len(header))
    ]

    def line(cells: Sequence[str]) -> str:
        first = cells[0].ljust(widths[0])
        rest = (c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
        return "  ".join([first, *rest]).rstrip()

    return [line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def format_console(report: EvalReport) -> str:
    """A compact fixed-width table: one row per group, ratios to 3 decimals, latency in ms to 1 decimal.

    Followed by the tier counts of answerable and unanswerable queries per group, each group's tier
    confusion table when queries carried ``expected_tier``, and the multi-step requests' figures (slot
    recall) of each group holding any.
    """
    columns = _columns(report)
    groups = list(report.groups.values())
    lines = _fixed_width(
        ["group", *(name for name, _ in columns)],
        [[g.name, *(render(g) for _, render in columns)] for g in groups],
    )

    tiers = _tiers_in(report)
    lines += ["", "tier counts, answerable/unanswerable"]
    rows = [
        [g.name, *(f"{g.tiers_answerable.get(t, 0)}/{g.tiers_unanswerable.get(t, 0)}" for t in tiers)]
        for g in groups
    ]
    lines += _fixed_width(["group", *tiers], rows)

    for g in groups:
        if g.tier_confusion:
            header, rows = _confusion_rows(g.tier_confusion)
            lines += ["", f"tier confusion, group {g.name} (accuracy {_ratio(g.tier_accuracy)})"]
            lines += _fixed_width(header, rows)

    multi = _multi_rows(report)
    lines += ["", f"{_MULTI_TITLE}: slot recall over each step's powers"] if multi else ["", _NO_MULTI]
    lines += _fixed_width(["group", *(name for name, _ in _MULTI_COLUMNS)], multi) if multi else []
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(_md_cell(c) for c in cells) + " |"

    align = ["---", *("---:" for _ in header[1:])]
    return [line(header), "|" + "|".join(align) + "|", *(line(r) for r in rows)]


def _setting_value(value: object) -> str:
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(value)


def format_markdown(
    report: EvalReport,
    *,
    title: str,
    settings_summary: dict[str, object],
    reliability_diagram: str | None = None,
) -> str:
    """A markdown report: results per group, tier counts, tier confusion, multi-step requests (slot
    recall), calibration (ECE per group and the reliability diagram, a PNG beside the report),
    definitions and settings."""
    columns = _columns(report)
    groups = list(report.groups.values())
    out: list[str] = [f"# {title}", "", "## Results", ""]
    out += _md_table(
        ["group", *(name for name, _ in columns)],
        [[g.name, *(render(g) for _, render in columns)] for g in groups],
    )

    tiers = _tiers_in(report)
    out += ["", "## Tiers", "", "Queries per tier, answerable and unanswerable (empty gold).", ""]
    out += _md_table(
        ["group", *(f"answerable {t}" for t in tiers), *(f"unanswerable {t}" for t in tiers)],
        [
            [
                g.name,
                *(str(g.tiers_answerable.get(t, 0)) for t in tiers),
                *(str(g.tiers_unanswerable.get(t, 0)) for t in tiers),
            ]
            for g in groups
        ],
    )

    for g in groups:
        if g.tier_confusion:
            header, rows = _confusion_rows(g.tier_confusion)
            out += [
                "",
                f"## Tier confusion: {g.name}",
                "",
                f"Tier accuracy {_ratio(g.tier_accuracy)}; rows are expected tiers, columns predicted.",
                "",
            ]
            out += _md_table(header, rows)

    multi = _multi_rows(report)
    out += ["", "## Multi-step requests", ""]
    if multi:
        out += [
            f"The {_MULTI_TITLE}: slot recall over each step's powers, and the whole-request figures on "
            "the same queries.",
            "",
        ]
        out += _md_table(["group", *(name for name, _ in _MULTI_COLUMNS)], multi)
    else:
        out.append(_NO_MULTI[0].upper() + _NO_MULTI[1:] + ".")

    out += [
        "",
        "## Calibration",
        "",
        "Per group: ECE, then each confidence bin as `mean confidence -> share right (queries)`.",
        "",
    ]
    for g in groups:
        cells = ", ".join(f"{b.confidence:.2f}->{b.right:.2f} ({b.count})" for b in g.reliability)
        out.append(f"- **{g.name}**: ECE {_ratio(g.ece)}; {cells or 'no queries'}")
    if reliability_diagram:
        out += ["", f"![reliability diagram]({reliability_diagram})"]

    out += ["", "## Definitions", ""]
    out += [f"- {d}" for d in DEFINITIONS]
    out += ["", "## Settings", ""]
    if settings_summary:
        out += [f"- `{key}`: {_setting_value(value)}" for key, value in settings_summary.items()]
    else:
        out.append("- (none given)")
    return "\n".join(out) + "\n"


def write_reliability_diagram(report: EvalReport, path: Path, *, max_panels: int = 8) -> Path:
    """A PNG with one reliability diagram per group (all, each dataset, each catalog size): the share of
    queries whose top power was right against the mean confidence of each tenth, with counts."""
    matplotlib = lab_import("matplotlib", "The reliability diagram")
    matplotlib.use("Agg")  # no screen: render to a file
    plt = lab_import("matplotlib.pyplot", "The reliability diagram")

    names = [n for n in report.groups if not (n.startswith("L") and (n[1:].isdigit() or n == "L1-4"))]
    names = names[:max_panels]
    columns = min(len(names), 4)
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(rows, columns, figsize=(3.4 * columns, 3.4 * rows), squeeze=False)
    for ax in axes.flat[len(names) :]:
        ax.set_visible(False)
    for ax, name in zip(axes.flat, names, strict=False):
        cells = report.groups[name].reliability
        ax.plot([0, 1], [0, 1], color="grey", linewidth=0.8, linestyle="--")
        ax.bar(
            [b.lower + 0.05 for b in cells],
            [b.right for b in cells],
            width=0.09,
            color="#4c78a8",
            alpha=0.75,
            label="share right",
        )
        ax.plot(
            [b.confidence for b in cells],
            [b.right for b in cells],
            "o",
            color="#e45756",
            markersize=3,
            label="at mean confidence",
        )
        for b in cells:
            ax.annotate(str(b.count), (b.lower + 0.05, min(b.right + 0.02, 0.95)), ha="center", fontsize=6)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_title(f"{name}: ECE {_ratio(report.groups[name].ece)}", fontsize=9)
        ax.set_xlabel("confidence", fontsize=8)
        ax.set_ylabel("top power right", fontsize=8)
        ax.tick_params(labelsize=7)
    axes.flat[0].legend(fontsize=6, loc="upper left")
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path


def write_report_files(
    report: EvalReport, path: Path, *, title: str, settings_summary: dict[str, object]
) -> tuple[Path, Path, Path]:
    """``path`` (Markdown), the reliability diagram beside it (``.reliability.png``) and the figures as
    JSON (``.json``: title, time, settings and every group's metrics, not the per-query rows), which
    the operator console's Evaluation page reads."""
    path.parent.mkdir(parents=True, exist_ok=True)
    diagram = write_reliability_diagram(report, path.with_suffix(".reliability.png"))
    path.write_text(
        format_markdown(
            report, title=title, settings_summary=settings_summary, reliability_diagram=diagram.name
        ),
        encoding="utf-8",
    )
    figures = path.with_suffix(".json")
    document = {
        "title": title,
        "created_at": datetime.now(UTC).isoformat(),
        "settings": settings_summary,
        "groups": {name: group.model_dump(mode="json") for name, group in report.groups.items()},
    }
    figures.write_text(json.dumps(document, indent=1, default=str), encoding="utf-8")
    return path, diagram, figures
