"""Stages 1-2 plumbing: the store's enrichment tables, the cache, re-profiling rules, schema pairs."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from semantic_enrichment.base import EnrichmentDraft, ProfileDraft
from semantic_enrichment.cache import EnrichmentCache, cache_key
from semantic_enrichment.enrichment import enrich_server_tools, schema_action_entities, tool_entity
from semantic_enrichment.profiling import compute_profile_hash, needs_profile, profile_server
from tests.support.db import count_rows
from tool_selector.catalog.schema import SCHEMA_VERSION
from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.core.errors import LLMError
from tool_selector.core.models import CreationMethod, ServerProfile, ServerSpec, ToolSpec
from tool_selector.index.build import build_document

NOW = datetime(2026, 11, 21, tzinfo=UTC)
WEEK = timedelta(days=7)
SERVER = ServerSpec(name="tracker", description="Issue tracker")
ISSUES = ToolSpec(
    server="tracker",
    name="manage_issues",
    description="Work with issues.",
    input_schema={
        "type": "object",
        "properties": {"operation": {"type": "string", "enum": ["create", "update", "delete"]}, "title": {}},
    },
)
SEARCH = ToolSpec(server="tracker", name="search_issues", description="Find issues by text.")


class CountingProfiler:
    kind = "offline"
    model = "test-v1"
    prompt_version = "p1"

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail

    def profile(self, server: ServerSpec, tools: Sequence[ToolSpec]) -> ProfileDraft:
        self.calls += 1
        if self.fail:
            raise LLMError("the model answered something unusable")
        return ProfileDraft(domain="issue tracking", semantic_keywords=["tickets", "bugs"])


class CountingEnricher:
    kind = "offline"
    model = "test-v1"
    prompt_version = "e1"

    def __init__(self, skip: set[str] | None = None, fail: bool = False) -> None:
        self.seen: list[str] = []
        self.skip = skip or set()
        self.fail = fail

    def enrich(
        self, server: ServerSpec, profile: ServerProfile, tools: Sequence[ToolSpec]
    ) -> dict[str, EnrichmentDraft]:
        if self.fail:
            raise LLMError("the API is down")
        self.seen.extend(t.name for t in tools)
        return {
            t.name: EnrichmentDraft(
                enhanced_description=f"{t.name} in {profile.domain}", action_entities=["find issue"]
            )
            for t in tools
            if t.name not in self.skip
        }


def _profile(profile_hash: str = "h") -> ServerProfile:
    return ServerProfile(
        server_name="tracker",
        domain="issue tracking",
        semantic_keywords=["tickets"],
        profile_hash=profile_hash,
        last_updated=NOW,
        profiler="offline",
        model="test-v1",
        prompt_version="p1",
    )


def test_an_operation_enum_on_an_issues_tool_yields_one_pair_per_action() -> None:
    assert tool_entity(ISSUES) == "issue"
    assert schema_action_entities(ISSUES) == ["create issue", "update issue", "delete issue"]
    assert schema_action_entities(SEARCH) == []


def test_the_profile_hash_changes_with_any_tool_and_not_with_order() -> None:
    a = compute_profile_hash(SERVER, [ISSUES, SEARCH])
    assert a == compute_profile_hash(SERVER, [SEARCH, ISSUES])
    changed = SEARCH.model_copy(update={"description": "Find issues."})
    assert a != compute_profile_hash(SERVER, [ISSUES, changed])


def test_a_profile_is_redone_when_its_hash_changes_or_after_seven_days() -> None:
    profiler = CountingProfiler()
    stored = _profile("h1").model_copy(update={"model": profiler.model})
    assert not needs_profile(stored, "h1", profiler, now=NOW + timedelta(days=6), max_age=WEEK)
    assert needs_profile(stored, "h2", profiler, now=NOW, max_age=WEEK)
    assert needs_profile(stored, "h1", profiler, now=NOW + timedelta(days=8), max_age=WEEK)
    assert needs_profile(None, "h1", profiler, now=NOW, max_age=WEEK)


def test_profiles_come_from_the_cache_the_second_time(tmp_path: Path) -> None:
    profiler = CountingProfiler()
    with EnrichmentCache(tmp_path / "c") as cache:
        first = profile_server(SERVER, [ISSUES], profiler, cache, now=NOW, max_age=WEEK)
        second = profile_server(SERVER, [ISSUES], profiler, cache, now=NOW, max_age=WEEK)
    assert profiler.calls == 1
    assert not first.cache_hit and second.cache_hit
    assert second.profile.domain == "issue tracking"


def test_a_failed_profiler_falls_back_and_leaves_nothing_in_the_cache(tmp_path: Path) -> None:
    with EnrichmentCache(tmp_path / "c") as cache:
        outcome = profile_server(
            SERVER,
            [ISSUES],
            CountingProfiler(fail=True),
            cache,
            now=NOW,
            max_age=WEEK,
            fallback=CountingProfiler(),
        )
        assert outcome.fell_back and "unusable" in outcome.error
        assert len(cache) == 0
        with pytest.raises(LLMError):
            profile_server(SERVER, [ISSUES], CountingProfiler(fail=True), cache, now=NOW, max_age=WEEK)


def test_enrichment_adds_schema_pairs_and_server_keywords_and_is_cached(tmp_path: Path) -> None:
    enricher = CountingEnricher()
    with EnrichmentCache(tmp_path / "c") as cache:
        first = enrich_server_tools(SERVER, _profile(), [ISSUES, SEARCH], enricher, cache, now=NOW)
        again = enrich_server_tools(SERVER, _profile(), [ISSUES, SEARCH], enricher, cache, now=NOW)
    issues = next(e for e in first.enrichments if e.tool_id == ISSUES.id)
    assert issues.action_entities == ["create issue", "update issue", "delete issue", "find issue"]
    assert "tickets" in issues.semantic_keywords
    assert issues.server_domain == "issue tracking" and issues.mcp_server_name == "tracker"
    assert issues.tool_hash == ISSUES.compute_hash()
    assert enricher.seen == ["manage_issues", "search_issues"]  # the second run was all cache hits
    assert again.cache_hits == 2
    assert [e.enrichment_hash for e in again.enrichments] == [e.enrichment_hash for e in first.enrichments]


def test_tools_the_enricher_skipped_fall_back_and_are_reported(tmp_path: Path) -> None:
    with EnrichmentCache(tmp_path / "c") as cache:
        outcome = enrich_server_tools(
            SERVER,
            _profile(),
            [ISSUES, SEARCH],
            CountingEnricher(skip={"search_issues"}),
            cache,
            now=NOW,
            fallback=CountingEnricher(),
        )
        assert outcome.fallbacks == 1 and outcome.errors
        assert len(cache) == 1  # only the tool the enricher really did
        with pytest.raises(LLMError, match="no usable enrichment"):
            enrich_server_tools(
                SERVER, _profile("other"), [SEARCH], CountingEnricher(skip={"search_issues"}), cache, now=NOW
            )


def test_an_unreadable_cache_entry_is_a_miss_and_is_dropped(tmp_path: Path) -> None:
    with EnrichmentCache(tmp_path / "c") as cache:
        key = cache_key("profile", "x")
        cache._cache.set(key, '{"domain": 5}')
        assert cache.get(key, ProfileDraft) is None
        assert len(cache) == 0


def _store_with_tracker(path: Path) -> CatalogStore:
    store = CatalogStore(path)
    CatalogWriter(store).import_catalog(
        [SERVER], [ISSUES, SEARCH], actor="test", creation_method=CreationMethod.IMPORTED
    )
    return store


def test_enrichments_are_stored_and_leave_with_their_tool(tmp_path: Path) -> None:
    with EnrichmentCache(tmp_path / "c") as cache, _store_with_tracker(tmp_path / "db") as store:
        before = store.catalog_hash()
        outcome = enrich_server_tools(
            SERVER, _profile(), [ISSUES, SEARCH], CountingEnricher(), cache, now=NOW
        )
        store.put_profiles([_profile()])
        store.put_enrichments(outcome.enrichments)
        assert store.catalog_hash() != before  # the index must follow
        assert set(store.get_enrichments()) == {ISSUES.id, SEARCH.id}
        CatalogWriter(store).import_catalog(
            [SERVER], [ISSUES], actor="test", creation_method=CreationMethod.IMPORTED
        )
        assert set(store.get_enrichments()) == {ISSUES.id}
        len(CatalogWriter(store).delete_server("tracker", cascade=True, actor="test"))
        assert store.get_enrichments() == {} and store.get_profiles() == {}


def test_a_document_uses_only_an_enrichment_made_from_the_same_tool(tmp_path: Path) -> None:
    with EnrichmentCache(tmp_path / "c") as cache, _store_with_tracker(tmp_path / "db") as store:
        enrichment = enrich_server_tools(
            SERVER, _profile(), [ISSUES], CountingEnricher(), cache, now=NOW
        ).enrichments[0]
        server = store.get_server("tracker")
        tool = store.get_tool(ISSUES.id)
        doc = build_document(tool, server, enrichment)
        assert doc.fields["action_entities"][0] == "create issue"
        assert doc.fields["server_domain"] == "issue tracking"
        stale = enrichment.model_copy(update={"tool_hash": "something else"})
        assert "action_entities" not in build_document(tool, server, stale).fields


def test_a_version_1_catalog_file_upgrades_in_place_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "catalog.db"
    with _store_with_tracker(path):
        pass
    db = sqlite3.connect(path)
    db.executescript(
        "DROP TABLE profiles; DROP TABLE enrichments; DROP TABLE discovery; DROP TABLE gateway_sessions; "
        "DROP TABLE api_keys; DROP TABLE audit; DROP TABLE jobs; "
        "DROP TABLE tool_pins; DROP TABLE quarantine; "
        "ALTER TABLE servers DROP COLUMN created_by; ALTER TABLE servers DROP COLUMN modified_by; "
        "ALTER TABLE tools DROP COLUMN created_by; ALTER TABLE tools DROP COLUMN modified_by; "
        "ALTER TABLE tools DROP COLUMN output_schema; ALTER TABLE tools DROP COLUMN definition_hash; "
        "UPDATE meta SET value='1' WHERE key='schema_version';"
    )
    db.close()
    with CatalogStore(path) as store:
        assert store.counts() == (1, 2)
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
        assert store.held_tool_ids() == set()  # the tools stored before pinning are pinned as they are
        assert {p.how for p in store.pins("tracker").values()} == {"upgrade"}
        assert store.get_enrichments() == {}
        assert store.get_gateway_sessions() == []
        assert {t.created_by for t in store.list_tools()} == {""}  # rows from before provenance
        assert count_rows(store.path, "audit") == 0
