"""What a person reads on a terminal: the sync's summary says servers, tools, what waits for the operator
and the time, and `--json` / `--text` / the terminal decide between it and JSON."""

from __future__ import annotations

import sys

import pytest

from routes.cli import base
from routes.cli.sync import summary_text
from services.write.sync import SyncSummary


def test_a_sync_summary_names_what_failed_and_what_waits_for_the_operator() -> None:
    summary = SyncSummary(
        ok=False,
        servers_configured=8,
        servers_seen=7,
        servers_changed=2,
        servers_failed=1,
        failed={"weather": "did not answer within 30 s"},
        waiting=["imported-db"],
        tools_added=3,
        tools_unchanged=49,
        tools_held=["git::git_push"],
        enricher="offline",
        documents_embedded=3,
        seconds={"total": 4.06},
    )
    assert summary_text(summary).splitlines() == [
        "synced 7 of 8 servers (2 changed, 1 failed, 0 removed) in 4.1 s",
        "tools: 3 added, 0 changed, 0 removed, 49 unchanged; enricher offline, 3 documents embedded",
        "failed: weather: did not answer within 30 s",
        "held for approval: 1 (tool-selector quarantine list)",
        "waiting to be adopted: imported-db (tool-selector servers enable NAME)",
    ]


@pytest.mark.parametrize(
    ("given", "terminal", "json"),
    [(None, True, False), (None, False, True), (True, True, True), (False, False, False)],
)
def test_json_or_text_follows_the_option_else_the_terminal(
    monkeypatch: pytest.MonkeyPatch, given: bool | None, terminal: bool, json: bool
) -> None:
    monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal)
    assert base.wants_json(given) is json
