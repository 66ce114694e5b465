"""Render an :class:`~eval.metrics.EvalReport` as a console table or a markdown report."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from eval.metrics import TIER_ORDER, EvalReport, GroupMetrics, tier_sort_key

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
    "**latency p50 / p95**: percentiles of per-query latency in milliseconds, linear interpolation "
    "between closest ranks (numpy's default).",
    "**tier accuracy / confusion** (only when queries carry `expected_tier`): share of queries routed to "
    "their expected tier, and expected -> predicted counts. **top-3 server accuracy**: share of "
    "answerable queries whose top 3 servers fill at least one slot.",
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
    ("act prec", lambda g: _ratio(g.activated_precision)),
    ("unans caught", lambda g: _ratio(g.unanswerable_caught)),
    ("ans not found", lambda g: _ratio(g.answerable_not_found)),
    ("AUROC", lambda g: _ratio(g.confidence_auroc)),
    ("p50 ms", lambda g: _ms(g.latency_p50_ms)),
    ("p95 ms", lambda g: _ms(g.latency_p95_ms)),
)
_TIER_COLUMNS: tuple[_Column, ...] = (
    ("tier acc", lambda g: _ratio(g.tier_accuracy)),
    ("top3 srv acc", lambda g: _ratio(g.top3_server_accuracy)),
)


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

    Followed by the tier counts of answerable and unanswerable queries per group and, when queries
    carried ``expected_tier``, each group's tier confusion table.
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


def format_markdown(report: EvalReport, *, title: str, settings_summary: dict[str, object]) -> str:
    """A markdown report: results per group, tier counts, tier confusion, definitions and settings."""
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

    out += ["", "## Definitions", ""]
    out += [f"- {d}" for d in DEFINITIONS]
    out += ["", "## Settings", ""]
    if settings_summary:
        out += [f"- `{key}`: {_setting_value(value)}" for key, value in settings_summary.items()]
    else:
        out.append("- (none given)")
    return "\n".join(out) + "\n"
