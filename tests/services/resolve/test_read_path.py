"""One owner of "is the index current?": refresh_index marks an index current only after a full write,
and the read path that the REST API and the gateway share notices a new mark, at most once per check
interval, without any database read where an event loop calls it; its one verb, ``decide``, caches the
answer and hands a caller's revision the directory the decision was made with."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from services.api.operations import Operations
from services.resolve import read_path as read_path_module
from services.resolve.read_path import ReadPath
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import refresh_index
from tests.support.catalogs import write_catalog
from tool_selector.config.settings import Settings
from tool_selector.core.models import Decision, Resolution, ToolDocument
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.index.mark import index_is_current, indexed_seq
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver
from tool_selector.route.tiers import PowerInfo
from tool_selector.search.backend import UpsertResult
from tool_selector.search.embedded.backend import EmbeddedBackend

EMBEDDER = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors


FIRST = {"weather": ["get_forecast", "get_alerts"], "clock": ["get_time"]}
SECOND = {**FIRST, "mail": ["send_email", "read_inbox"]}
THIRD = {"clock": ["get_time"], "mail": ["send_email"]}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path / "data", cache_dir=tmp_path / "cache", index_check_s=3600)


@pytest.fixture
def indexed(settings: Settings, tmp_path: Path) -> Iterator[Container]:
    """A catalog imported and indexed; the container another process (a sync) would write with."""
    with Container(settings, embedder=EMBEDDER) as writer:
        import_catalog_dir(writer, write_catalog(tmp_path / "first", FIRST), approve=True, actor="test")
        refresh_index(writer)
        yield writer


def test_a_new_index_marked_by_another_process_is_served_once_the_check_interval_has_passed(
    indexed: Container, settings: Settings, tmp_path: Path
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, cache_size=10)
        before = live.snapshot()
        assert set(before.powers) == set(FIRST)
        answer = live.decide("send an email", limit=5)
        assert live.cached_answer("send an email", "hybrid", 5) is answer

        import_catalog_dir(
            indexed, write_catalog(tmp_path / "second", SECOND), prune=True, approve=True, actor="test"
        )
        refresh_index(indexed)  # the "sync" marks a new index

        assert live.snapshot() is before  # within the interval: not looked at
        live.expire()  # the interval has passed
        after = live.snapshot()
        assert after is not before and set(after.powers) == set(SECOND)
        assert live.generation == 2
        assert live.cached_answer("send an email", "hybrid", 5) is None  # answers of the old index forgotten
        assert live.decide("send an email", limit=5).decision.power == "mail"


def test_the_index_mark_is_read_at_most_once_per_check_interval(
    indexed: Container, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str | None] = []

    def counting(container: Container) -> str | None:
        reads.append(indexed_seq(container))
        return reads[-1]

    monkeypatch.setattr(read_path_module, "indexed_seq", counting)
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, cache_size=10)
        for _ in range(20):
            live.decide("what time is it")
        assert len(reads) == 1
        every_time = ReadPath(reader, check_s=0)
        for _ in range(3):
            every_time.snapshot()
        assert len(reads) == 4


def test_a_cached_answer_is_read_without_the_database_and_not_at_all_when_a_look_is_due(
    indexed: Container, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, cache_size=10)
        answer = live.decide("weather alerts", limit=3)

        def no_database(container: Container) -> str | None:
            raise AssertionError("an event loop must not read the database")

        monkeypatch.setattr(read_path_module, "indexed_seq", no_database)
        assert live.cached_answer("weather alerts", "hybrid", 3) is answer
        live.expire()
        assert live.cached_answer("weather alerts", "hybrid", 3) is None  # the caller goes to a worker thread


def test_an_index_marked_while_the_catalog_moved_on_again_keeps_the_previous_one_serving(
    indexed: Container, settings: Settings, tmp_path: Path
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader)
        before = live.snapshot()
        import_catalog_dir(
            indexed, write_catalog(tmp_path / "second", SECOND), prune=True, approve=True, actor="test"
        )
        refresh_index(indexed)
        import_catalog_dir(
            indexed, write_catalog(tmp_path / "third", THIRD), prune=True, approve=True, actor="test"
        )
        live.expire()
        assert live.snapshot() is before  # the new mark is not the catalog's: wait for the next index
        refresh_index(indexed)
        live.expire()
        assert set(live.snapshot().powers) == set(THIRD)


def test_a_revision_reads_the_directory_its_decision_was_made_with_even_when_a_new_index_came_meanwhile(
    indexed: Container, settings: Settings, tmp_path: Path
) -> None:
    seen: list[tuple[Resolution, Decision, Mapping[str, PowerInfo]]] = []

    def revise(resolution: Resolution, decision: Decision, powers: Mapping[str, PowerInfo]) -> Decision:
        seen.append((resolution, decision, powers))
        import_catalog_dir(
            indexed, write_catalog(tmp_path / "second", SECOND), prune=True, approve=True, actor="test"
        )
        refresh_index(indexed)  # a sync marks a new index while the caller revises
        return decision.model_copy(update={"message": "revised"})

    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, check_s=0)  # every read looks at the index
        revised = live.decide("weather alerts", limit=3, revise=revise)
        ((resolution, decision, powers),) = seen
        assert set(powers) == set(FIRST)  # the directory the decision was made with ...
        assert set(live.snapshot().powers) == set(SECOND)  # ... not the one a new look finds
        assert revised == (resolution, decision.model_copy(update={"message": "revised"}))


def test_a_revision_applies_to_every_call_and_the_cache_keeps_the_read_paths_own_answer(
    indexed: Container, settings: Settings
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, cache_size=10)
        revised = live.decide(
            "weather alerts", limit=3, revise=lambda r, d, p: d.model_copy(update={"message": "revised"})
        )
        plain = live.decide("weather alerts", limit=3)
        assert plain.resolution is revised.resolution and plain.decision.message != "revised"
        assert live.cached_answer("weather alerts", "hybrid", 3) is plain
        again = live.decide("weather alerts", limit=3, revise=lambda r, d, p: d)
        assert again == plain


def test_the_users_own_words_reach_the_resolver_only_when_given_and_have_their_own_cache_entry(
    indexed: Container, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: list[dict[str, Any]] = []
    original = Resolver.resolve

    def resolve(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        given.append(dict(kwargs))
        kwargs.pop("request", None)  # whether the resolver reads it is the resolver's concern
        return original(self, query, terms, **kwargs)

    monkeypatch.setattr(Resolver, "resolve", resolve)
    with Container(settings, embedder=EMBEDDER) as reader:
        live = ReadPath(reader, cache_size=10)
        plain = live.decide("weather alerts", limit=3)
        worded = live.decide("weather alerts", limit=3, request="will it storm here tonight?")
        assert "request" not in given[0] and given[1]["request"] == "will it storm here tonight?"
        assert live.cached_answer("weather alerts", "hybrid", 3) is plain
        assert (
            live.cached_answer("weather alerts", "hybrid", 3, request="will it storm here tonight?") is worded
        )
        assert live.decide("weather alerts", limit=3, request="will it storm here tonight?") is worded
        assert len(given) == 2


def test_the_rest_api_and_the_gateway_read_the_same_check_interval_setting(indexed: Container) -> None:
    ops = Operations(indexed)
    try:
        assert isinstance(ops.read_path, ReadPath)
        assert ops.read_path._check_s == indexed.settings.index_check_s == 3600
        assert ops.read_path._cache_size == indexed.settings.api.answer_cache_size
    finally:
        ops.close()


class FailingOnce(EmbeddedBackend):
    """The embedded backend, but the next write fails for one document (as a Weaviate batch can)."""

    fail_next = True

    def upsert(self, docs: Sequence[ToolDocument]) -> UpsertResult:
        if not self.fail_next or not docs:
            return super().upsert(docs)
        self.fail_next = False
        result = super().upsert(docs[1:])
        return UpsertResult(written=result.written, errors={docs[0].id: "the server refused it"})


def test_an_index_written_in_part_is_not_marked_current_and_the_next_refresh_finishes_it(
    settings: Settings, tmp_path: Path
) -> None:
    backend = FailingOnce(tmp_path / "index", model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)
    with Container(settings, embedder=EMBEDDER, backend=backend) as container:
        import_catalog_dir(container, write_catalog(tmp_path / "first", FIRST), approve=True, actor="test")
        partial = refresh_index(container)
        assert len(partial.errors) == 1 and partial.written == 2
        assert indexed_seq(container) is None and not index_is_current(container)
        finished = refresh_index(container, only_if_stale=True)
        assert finished.errors == {} and finished.written == 1  # only the document that failed
        assert index_is_current(container)
        again = refresh_index(container, only_if_stale=True)
        assert again.written == 0 and again.unchanged == 3
