"""One owner of "is the index current?": refresh_index marks an index current only after a full write,
and the live resolver that the REST API and the gateway share notices a new mark, at most once per
check interval, without any database read where an event loop calls it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from services.api.operations import Operations
from services.resolve import live as live_module
from services.resolve.live import LiveResolver
from services.shared.container import Container
from services.shared.indexing import index_is_current, indexed_seq, refresh_index
from services.write.catalog import import_catalog_dir
from tests.support.catalogs import write_catalog
from tool_selector.config.settings import Settings
from tool_selector.core.models import ToolDocument
from tool_selector.embedding.embedders import HashingEmbedder
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
        live = LiveResolver(reader, cache_size=10)
        before = live.service()
        assert set(before.powers) == set(FIRST)
        answer = live.resolve_and_route("send an email", limit=5)
        assert live.cached_answer("send an email", "hybrid", 5) is answer

        import_catalog_dir(
            indexed, write_catalog(tmp_path / "second", SECOND), prune=True, approve=True, actor="test"
        )
        refresh_index(indexed)  # the "sync" marks a new index

        assert live.service() is before  # within the interval: not looked at
        live.expire()  # the interval has passed
        after = live.service()
        assert after is not before and set(after.powers) == set(SECOND)
        assert live.generation == 2
        assert live.cached_answer("send an email", "hybrid", 5) is None  # answers of the old index forgotten
        assert live.resolve_and_route("send an email", limit=5)[1].power == "mail"


def test_the_index_mark_is_read_at_most_once_per_check_interval(
    indexed: Container, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str | None] = []

    def counting(container: Container) -> str | None:
        reads.append(indexed_seq(container))
        return reads[-1]

    monkeypatch.setattr(live_module, "indexed_seq", counting)
    with Container(settings, embedder=EMBEDDER) as reader:
        live = LiveResolver(reader, cache_size=10)
        for _ in range(20):
            live.decide("what time is it")
        assert len(reads) == 1
        every_time = LiveResolver(reader, check_s=0)
        for _ in range(3):
            every_time.service()
        assert len(reads) == 4


def test_a_cached_answer_is_read_without_the_database_and_not_at_all_when_a_look_is_due(
    indexed: Container, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = LiveResolver(reader, cache_size=10)
        answer = live.resolve_and_route("weather alerts", limit=3)

        def no_database(container: Container) -> str | None:
            raise AssertionError("an event loop must not read the database")

        monkeypatch.setattr(live_module, "indexed_seq", no_database)
        assert live.cached_answer("weather alerts", "hybrid", 3) is answer
        live.expire()
        assert live.cached_answer("weather alerts", "hybrid", 3) is None  # the caller goes to a worker thread


def test_an_index_marked_while_the_catalog_moved_on_again_keeps_the_previous_one_serving(
    indexed: Container, settings: Settings, tmp_path: Path
) -> None:
    with Container(settings, embedder=EMBEDDER) as reader:
        live = LiveResolver(reader)
        before = live.service()
        import_catalog_dir(
            indexed, write_catalog(tmp_path / "second", SECOND), prune=True, approve=True, actor="test"
        )
        refresh_index(indexed)
        import_catalog_dir(
            indexed, write_catalog(tmp_path / "third", THIRD), prune=True, approve=True, actor="test"
        )
        live.expire()
        assert live.service() is before  # the new mark is not the catalog's: wait for the next index
        refresh_index(indexed)
        live.expire()
        assert set(live.service().powers) == set(THIRD)


def test_the_rest_api_and_the_gateway_read_the_same_check_interval_setting(indexed: Container) -> None:
    ops = Operations(indexed)
    try:
        assert isinstance(ops.live, LiveResolver)
        assert ops.live._check_s == indexed.settings.index_check_s == 3600
        assert ops.live._cache_size == indexed.settings.api.answer_cache_size
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
