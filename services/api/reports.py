"""The eval reports the console's Evaluation page lists: ``tool-selector lab eval --report NAME.md`` files
in the reports folder (``api.reports_dir``, default ``<data_dir>/reports``), each with its reliability
diagram (``NAME.reliability.png``) and its figures (``NAME.json``) beside it.

A report is named by its file name without ``.md``; a name is only ever looked up among the folder's
own files, so no request can reach a file outside it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from tool_selector.core.errors import NotFoundError

MAX_REPORT_BYTES = 5 * 2**20  # a report file larger than this is listed but not read
SUMMARY_FIGURES = (
    "count",
    "tool_recall_at_1",
    "tool_recall_at_3",
    "tool_recall_at_5",
    "server_recall_at_1",
    "server_recall_at_3",
    "server_recall_at_5",
    "mrr",
    "ece",
    "activated_precision",
    "unanswerable_caught",
)


class ReportListing(BaseModel):
    name: str
    title: str
    created_at: datetime
    summary: dict[str, dict[str, Any]] = Field(description="the headline figures of each group")
    has_diagram: bool
    has_figures: bool = Field(description="its JSON of figures is there (older reports: Markdown only)")


class Report(ReportListing):
    markdown: str
    settings: dict[str, Any] = Field(default_factory=dict)
    groups: dict[str, dict[str, Any]] = Field(default_factory=dict, description="every figure per group")


def _reports(folder: Path) -> dict[str, Path]:
    if not folder.is_dir():
        return {}
    return {p.stem: p for p in folder.glob("*.md") if p.is_file() and not p.is_symlink()}


def _read(path: Path) -> str:
    if path.stat().st_size > MAX_REPORT_BYTES:
        return f"(the file {path.name} is over {MAX_REPORT_BYTES // 2**20} MB: open it on disk)"
    return path.read_text(encoding="utf-8", errors="replace")


def _figures(markdown_path: Path) -> dict[str, Any] | None:
    path = markdown_path.with_suffix(".json")
    if not path.is_file() or path.stat().st_size > MAX_REPORT_BYTES:
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _listing(name: str, path: Path) -> tuple[ReportListing, dict[str, Any] | None, str]:
    markdown = _read(path)
    figures = _figures(path)
    first = next((line for line in markdown.splitlines() if line.startswith("# ")), "")
    title = str((figures or {}).get("title") or first[2:].strip() or name)
    made = (figures or {}).get("created_at")
    try:
        created = datetime.fromisoformat(made) if isinstance(made, str) else None
    except ValueError:
        created = None
    if created is None:
        created = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    groups = (figures or {}).get("groups") or {}
    summary = {
        group: {k: v.get(k) for k in SUMMARY_FIGURES} for group, v in groups.items() if isinstance(v, dict)
    }
    listing = ReportListing(
        name=name,
        title=title,
        created_at=created,
        summary=summary,
        has_diagram=path.with_suffix(".reliability.png").is_file(),
        has_figures=figures is not None,
    )
    return listing, figures, markdown


def list_reports(folder: Path) -> list[ReportListing]:
    """The folder's reports, newest first."""
    listed = [_listing(name, path)[0] for name, path in _reports(folder).items()]
    return sorted(listed, key=lambda r: (r.created_at, r.name), reverse=True)


def _require(folder: Path, name: str) -> Path:
    found = _reports(folder).get(name)
    if found is None:
        known = sorted(_reports(folder))
        raise NotFoundError(
            f"No eval report named {name!r} in {folder}.",
            hint=(f"Reports there: {', '.join(known[:10])}." if known else "The folder has no reports.")
            + " Write one: `tool-selector lab eval DATASET --predictions P.jsonl "
            + f"--report {folder}/NAME.md`.",
        )
    return found


def get_report(folder: Path, name: str) -> Report:
    listing, figures, markdown = _listing(name, _require(folder, name))
    figures = figures or {}
    settings = figures.get("settings")
    groups = figures.get("groups")
    return Report(
        **listing.model_dump(),
        markdown=markdown,
        settings=settings if isinstance(settings, dict) else {},
        groups=groups if isinstance(groups, dict) else {},
    )


def report_diagram(folder: Path, name: str) -> Path:
    path = _require(folder, name).with_suffix(".reliability.png")
    if not path.is_file():
        raise NotFoundError(
            f"The eval report {name!r} has no reliability diagram.",
            hint="`tool-selector lab eval --report` writes one beside the report (NAME.reliability.png).",
        )
    return path
