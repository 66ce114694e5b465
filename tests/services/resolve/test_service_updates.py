"""A running reader's resolve service, updated by the servers a write changed, answers exactly as one
built from scratch: the same rankings, rank features, evidence (unrounded) and probabilities, after
tools added, removed and rewritten on several servers, a server's own text changed, a server deleted
and a new one imported."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write import registry
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import refresh_index
from tests.support.indexed import indexed_catalog, spy_service_updates
from tool_selector.core.models import CreationMethod, ToolSpec
from tool_selector.resolve.evidence import RANKED_FIELDS, CatalogTerms, evidence_of
from tool_selector.resolve.rerank.features import rank_features
from tool_selector.resolve.wordmatrix import WordMatrix

SERVERS = {
    "weather": ("Weather forecasts and alerts", ["get_forecast", "get_alerts", "get_radar_map"]),
    "clock": ("Clocks, alarms and timers", ["get_time", "set_alarm", "start_timer"]),
    "mail": ("Email inbox and sending", ["send_email", "read_inbox", "delete_email", "search_mail"]),
    "files": ("Read and write files on disk", ["read_file", "write_file", "list_directory"]),
    "calendar": ("Calendar events and meetings", ["create_event", "list_events", "invite_attendee"]),
    "notes": ("Take and search notes", ["create_note", "search_notes"]),
}
QUERIES = [
    "archive this email",
    "set an alarm for six",
    "weather alerts for tomorrow",
    "what time is it in Tokyo",
    "schedule a meeting with Ann and send her an email",
    "show the radar map",
    "write the notes to a file",
    "translate this page",
]


def _write(folder: Path, servers: dict[str, tuple[str, list[str]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    listed = [{"name": s, "description": d} for s, (d, _) in servers.items()]
    tools = [
        {"server": s, "name": t, "description": f"{t.replace('_', ' ')} with the {s} service"}
        for s, (_, names) in servers.items()
        for t in names
    ]
    (folder / "servers.json").write_text(json.dumps(listed))
    (folder / "tools.json").write_text(json.dumps(tools))
    return folder


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    with indexed_catalog(tmp_path, _write(tmp_path / "catalog", SERVERS)) as (opened, _):
        yield opened


def _register(container: Container, server: str, name: str, description: str) -> None:
    spec = ToolSpec(server=server, name=name, description=description)
    registry.register_tool(
        container, spec, mode="force_create", method=CreationMethod.MANUAL_API, actor="test"
    )


def _rows(matrix: WordMatrix, fields: bool) -> dict[str, list[set[str]]]:
    """Each tool's (or power's) rows as word sets: the column numbers differ between a grown matrix and
    one built at once, the words may not."""
    words = {i: w for w, i in matrix.vocabulary.items()}
    source, rows = (matrix.fields, matrix.tool_rows) if fields else (matrix.powers, matrix.power_rows)
    width = len(RANKED_FIELDS) + 1 if fields else 1
    return {
        key: [
            [words[int(c)] for c in source.indices[source.indptr[r] : source.indptr[r + 1]]]
            for r in range(first, first + width)
        ]
        for key, first in rows.items()
    }


def _same_terms(a: CatalogTerms, b: CatalogTerms) -> None:
    for name in (
        "tool_words",
        "tool_original_words",
        "tool_name_words",
        "tool_actions",
        "tool_name_tokens",
        "power_words",
        "power_name_words",
        "power_tools",
        "power_members",
        "power_own_words",
        "document_frequency",
    ):
        assert dict(getattr(a, name)) == dict(getattr(b, name)), name
    # the same words in each row, in the same order (sums over a row add in that order)
    assert _rows(a.words, True) == _rows(b.words, True)
    assert _rows(a.words, False) == _rows(b.words, False)


def _same_answers(live: ReadPath, built: ReadPath) -> None:
    served, fresh = live.snapshot(), built.snapshot()
    resolver = served.container.resolver
    for text in QUERIES:
        mine, theirs = resolver.rank(text, "hybrid", served.terms), resolver.rank(text, "hybrid", fresh.terms)
        assert [(h.id, h.score) for h in mine.hits] == [(h.id, h.score) for h in theirs.hits], text
        assert mine.powers == theirs.powers, text
        if mine.candidates is not None and theirs.candidates is not None:
            assert np.array_equal(
                rank_features(mine.candidates, served.terms), rank_features(theirs.candidates, fresh.terms)
            ), text
        else:
            assert mine.candidates is theirs.candidates is None
        evidence = {
            which: evidence_of(
                ranking.text,
                ranking.hits,
                ranking.powers,
                service.terms,
                query_vector=ranking.vector,
                reference=resolver.calibration.reference_vector,
            )
            for which, ranking, service in (("served", mine, served), ("fresh", theirs, fresh))
        }
        assert evidence["served"] == evidence["fresh"], text  # unrounded: the very same floats
        assert resolver.judge(mine, served.terms) == resolver.judge(theirs, fresh.terms), text
        assert live.decide(text) == built.decide(text), text


def test_an_updated_service_answers_as_a_fresh_one_after_changes_on_several_servers(
    container: Container, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    live = ReadPath(container, cache_size=0)
    first = live.snapshot()
    updates = spy_service_updates(monkeypatch)

    # round 1: tools added on two servers, one removed on a third, a server's own text rewritten
    _register(container, "mail", "archive_email", "Move an email to the archive folder")
    _register(container, "weather", "get_uv_index", "The UV index and sun protection advice")
    registry.delete_tool(container, "clock::start_timer", actor="test")
    container.writer.update_server(
        "files",
        description="Files and folders: read, write, move and archive",
        metadata=None,
        actor="test",
        trust="pin",
    )
    refresh_index(container)
    live.expire()
    served = live.snapshot()
    assert updates == [{"mail", "weather", "clock", "files"}]
    built = ReadPath.fixed(container)
    fresh = built.snapshot()
    assert served.powers == fresh.powers
    _same_terms(served.terms, fresh.terms)
    _same_answers(live, built)

    # round 2, from the updated service: a server deleted, a new one imported, a tool of a server
    # that changed before removed again, and a new tool on a server left alone so far
    registry.delete_server(container, "notes", cascade=True, actor="test")
    more = {"translate": ("Translate text between languages", ["translate_text", "detect_language"])}
    import_catalog_dir(container, _write(tmp_path / "more", more), approve=True, actor="test")
    enrich_catalog(container, container.enrichers(), servers={"translate"})
    registry.delete_tool(container, "mail::archive_email", actor="test")
    _register(container, "calendar", "cancel_event", "Cancel a calendar event and tell the attendees")
    refresh_index(container)
    live.expire()
    again = live.snapshot()
    assert updates[1:] == [{"notes", "translate", "mail", "calendar"}]
    built = ReadPath.fixed(container)
    fresh = built.snapshot()
    assert "notes" not in again.powers and "notes" not in again.terms.power_words
    assert again.powers == fresh.powers
    _same_terms(again.terms, fresh.terms)
    _same_answers(live, built)

    # the services made before still answer for the catalog they were made for
    assert "mail::archive_email" not in first.terms.tool_words
    assert "mail::archive_email" in served.terms.tool_words
    assert "notes" in served.terms.power_words
