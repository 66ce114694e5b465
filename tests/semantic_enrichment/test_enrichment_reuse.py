"""Work done once for what is the same: the offline enricher keeps what it made from a tool's name and
description (a large catalog holds the same tools under other servers' names), tool hashes are computed
once per run, and the cache writes a run's drafts together. Each gives what the work done anew gives."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from semantic_enrichment import offline
from semantic_enrichment.base import EnrichmentDraft, ProfileDraft
from semantic_enrichment.cache import EnrichmentCache
from semantic_enrichment.enrichment import enrich_server_tools
from semantic_enrichment.offline import OfflineEnricher, OfflineProfiler, first_sentence
from semantic_enrichment.profiling import compute_profile_hash
from tool_selector.core.models import ServerProfile, ServerSpec, ToolSpec

NOW = datetime(2026, 11, 21, tzinfo=UTC)


def _tools(server: str) -> list[ToolSpec]:
    return [
        ToolSpec(server=server, name="create_issue", description="Create a new issue.\nIt gets a number."),
        ToolSpec(server=server, name="weather", description="Fetches the weather\x00 for a city\u2028now."),
        ToolSpec(
            server=server,
            name="manage_issues",
            description="Work with issues.",
            input_schema={"properties": {"operation": {"enum": ["create", "delete"]}}},
        ),
    ]


def _profile(server: ServerSpec, tools: list[ToolSpec]) -> ServerProfile:
    draft = OfflineProfiler().profile(server, tools)
    return ServerProfile(
        server_name=server.name,
        profile_hash=compute_profile_hash(server, tools),
        last_updated=NOW,
        profiler="offline",
        model=offline.MODEL,
        prompt_version=offline.PROMPT_VERSION,
        **draft.model_dump(),
    )


def _forget() -> None:
    for kept in (offline.first_sentence, offline._terms, offline._draft):
        kept.cache_clear()


def _run(server: ServerSpec) -> tuple[ProfileDraft, dict[str, EnrichmentDraft]]:
    tools = _tools(server.name)
    return OfflineProfiler().profile(server, tools), OfflineEnricher().enrich(
        server, _profile(server, tools), tools
    )


def test_copies_of_a_server_are_enriched_as_if_each_were_the_first() -> None:
    copies = [ServerSpec(name=f"Tracker (copy {k})", description="Bugs.") for k in (2, 3)]
    made = [_run(s) for s in [*copies, copies[0]]]  # the second and third reuse what the first made
    anew = []
    for server in [*copies, copies[0]]:
        _forget()
        anew.append(_run(server))
    assert made == anew
    assert made[0] == made[2] and made[0][1] == made[1][1]  # the copies' label is the same: "tracker copy"


def test_a_draft_handed_out_is_the_callers_own() -> None:
    server = ServerSpec(name="tracker")
    first = _run(server)[1]["create_issue"]
    first.action_entities.append("changed by the caller")
    first.use_cases.clear()
    assert _run(server)[1]["create_issue"] == (_forget() or _run(server)[1]["create_issue"])


def test_first_sentence_collapses_unprintable_characters_as_before() -> None:
    def naive(text: str, limit: int) -> str:
        flat = " ".join("".join(c if c.isprintable() else " " for c in text[: offline.MAX_TEXT]).split())
        first = offline._SENTENCE_END.split(flat, maxsplit=1)[0] if flat else ""
        if len(first) > limit:
            first = first[:limit].rsplit(" ", 1)[0][:limit]
        return first.strip()

    texts = [
        "",
        "plain. two",
        "tab\tand\nnew\x0bline\x00 end.",
        "a\u2028b\u00a0c\u200bd\ufeff. e",
        "x" * 5000,
    ]
    for text in texts:
        for limit in (5, 240, 1000):
            assert first_sentence(text, limit) == naive(text, limit)


def test_tool_hashes_given_by_the_caller_change_nothing(tmp_path: Path) -> None:
    server = ServerSpec(name="tracker")
    tools = _tools("tracker")
    profile = _profile(server, tools)
    hashes = {t.id: t.compute_hash() for t in tools}
    assert compute_profile_hash(server, tools, hashes) == compute_profile_hash(server, tools)
    with EnrichmentCache(tmp_path / "a") as a, EnrichmentCache(tmp_path / "b") as b:
        given = enrich_server_tools(server, profile, tools, OfflineEnricher(), a, now=NOW, tool_hashes=hashes)
        computed = enrich_server_tools(server, profile, tools, OfflineEnricher(), b, now=NOW)
    assert given == computed


def test_deferred_cache_writes_are_read_meanwhile_and_written_together(tmp_path: Path) -> None:
    draft = EnrichmentDraft(enhanced_description="a draft")
    with EnrichmentCache(tmp_path / "c") as cache:
        with cache.deferred(max_items=3, max_age_s=3600):
            cache.set("k1", draft)
            cache.set("k2", draft)
            assert cache.get("k1", EnrichmentDraft) == draft  # waiting, and read
            assert len(cache) == 0  # not written yet
            with cache.deferred():  # inside one already: the outer one writes
                cache.set("k3", draft)  # the third: all three written
            assert len(cache) == 3
            cache.set("k4", draft)
            assert len(cache) == 3
        assert len(cache) == 4  # the rest at the end
    with EnrichmentCache(tmp_path / "c") as reopened:
        assert reopened.get("k4", EnrichmentDraft) == draft
