"""Near-duplicate matching of a batch is one matrix product (services/write/registry.py: DuplicateFinder,
BatchMatches): the same decisions as matching each tool on its own against the store as it is at that
moment (the reference below is the per-tool matching as it was before, reading the store every time),
duplicates within one batch found, tools changed or deleted meanwhile never matched stale.

Vectors come from the HashingEmbedder (bag of words): the texts below are chosen so that each rule
decides at least once (similar >= 0.85; 0.81 with the same name; 0.75 with another name: no match)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.root.container import Container
from services.write import importing, registry
from services.write.catalog import import_catalog_dir
from services.write.duplicates import (
    SIMILAR,
    SIMILAR_WITH_SAME_NAME,
    DuplicateFinder,
    ToolMatch,
    dedup_text,
    same_name,
)
from tool_selector.catalog_files.batch import ImportBatch
from tool_selector.config.settings import Settings, TrustSettings
from tool_selector.core.choices import MatchingMode, MatchScope
from tool_selector.core.models import CreationMethod, ServerSpec, ToolRecord, ToolSpec
from tool_selector.embedding.embedders import HashingEmbedder

EMBEDDER = HashingEmbedder(dim=384)
READ = "read the whole content of one text file from the local disk and return it"
SEND = "send one email message with subject body and attachments to a list of recipients"
SEND_VARIANT = "send one email message with title text and files to a list of recipients"
FORECAST = "forecast of temperature wind and rain for one city over the next seven days"
TRANSLATE = "translate a paragraph of text from one human language into another with glossary"
CATALOG: dict[str, list[tuple[str, str]]] = {
    "files": [("read_file", READ), ("write_file", "write text into one file on the local disk creating it")],
    "mail": [("send_email", SEND), ("read_inbox", "list the newest messages of the inbox and their senders")],
    "weather": [("get_forecast", FORECAST), ("get_alerts", "severe weather alerts issued for one region")],
    "b-copy": [("read_file", READ)],  # two stored tools equally similar to a third copy: the tie goes
    "a-copy": [("read_file", READ)],  # to the first in catalog order (a-copy), as list_tools returns them
}


def _write_catalog(folder: Path, tools: dict[str, list[tuple[str, str]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    servers = [{"name": s, "description": f"{s} service"} for s in tools]
    listed = [{"server": s, "name": n, "description": d} for s, pairs in tools.items() for n, d in pairs]
    (folder / "servers.json").write_text(json.dumps(servers))
    (folder / "tools.json").write_text(json.dumps(listed))
    return folder


def _open(tmp_path: Path, name: str) -> Container:
    settings = Settings(
        data_dir=tmp_path / name / "data",
        cache_dir=tmp_path / name / "cache",
        sync={"enricher": "offline"},
        trust=TrustSettings(registered="tofu", imported="tofu", intent=False),
    )
    container = Container(settings, embedder=EMBEDDER)
    folder = _write_catalog(tmp_path / name / "catalog", CATALOG)
    import_catalog_dir(container, folder, approve=True, actor="t")
    return container


@pytest.fixture
def container(tmp_path: Path) -> Iterator[Container]:
    with _open(tmp_path, "main") as opened:
        yield opened


@pytest.fixture
def twin(tmp_path: Path) -> Iterator[Container]:
    """A second catalog, equal to ``container``'s, for the reference path."""
    with _open(tmp_path, "twin") as opened:
        yield opened


# -- the reference: matching one tool at a time, reading the store each time (the code before) -------


def _old_ranked(container: Container, spec: ToolSpec, scope: MatchScope) -> list[tuple[float, ToolRecord]]:
    candidates = container.store.list_tools(None if scope == "catalog" else spec.server)
    if not candidates:
        return []
    embed = container.embedder.embed_documents
    matrix = embed([dedup_text(t.name, t.description) for t in candidates])
    sims = matrix @ embed([dedup_text(spec.name, spec.description)])[0]
    return sorted(((float(s), t) for s, t in zip(sims, candidates, strict=True)), key=lambda p: -p[0])


def _old_best(container: Container, spec: ToolSpec, scope: MatchScope) -> ToolMatch | None:
    for sim, other in _old_ranked(container, spec, scope):
        if sim >= SIMILAR:
            return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar")
        if sim < SIMILAR_WITH_SAME_NAME:
            break
        if same_name(other.name, spec.name):
            return ToolMatch(tool_id=other.id, similarity=round(sim, 4), rule="similar_same_name")
    return None


def _old_closest(container: Container, spec: ToolSpec, scope: MatchScope) -> tuple[str, float] | None:
    ranked = _old_ranked(container, spec, scope)
    return (ranked[0][1].id, round(ranked[0][0], 4)) if ranked else None


class _PerTool:
    """Stands in for BatchMatches: decides each tool alone with the reference."""

    def __init__(self, finder: DuplicateFinder, specs: list[ToolSpec], scope: MatchScope) -> None:
        self.finder, self.specs, self.scope = finder, specs, scope

    def best(self, index: int) -> ToolMatch | None:
        return _old_best(self.finder.container, self.specs[index], self.scope)


def _per_tool(finder: DuplicateFinder, specs: list[ToolSpec], scope: MatchScope) -> _PerTool:
    return _PerTool(finder, specs, scope)


def _batch() -> ImportBatch:
    tools = [
        ToolSpec(server="mirror", name="read_file", description=READ),  # copy of a stored tool: tie
        ToolSpec(server="mirror", name="send_email", description=SEND_VARIANT),  # same name, 0.81
        ToolSpec(server="mirror", name="send_mail", description=SEND_VARIANT),  # other name, 0.75
        ToolSpec(server="mirror", name="translate", description=TRANSLATE),  # new
        ToolSpec(server="other", name="translate", description=TRANSLATE),  # duplicate of the one above
        ToolSpec(server="mirror", name="translate_text", description=TRANSLATE),  # the same, same server
        ToolSpec(server="weather", name="get_forecast", description=TRANSLATE + " now"),  # updates
        ToolSpec(server="other", name="weather_forecast", description=FORECAST),  # the old text: stale
        ToolSpec(server="mirror", name="get_forecast", description=TRANSLATE + " now"),  # the new one
        ToolSpec(server="mail", name="send_email", description=SEND),  # same id, same definition
        ToolSpec(server="other", name="geocode", description="coordinates of a street address on a map"),
    ]
    servers = [ServerSpec(name="mirror"), ServerSpec(name="other")]
    return ImportBatch(format="catalog", servers=servers, tools=tools)


def _items(result: importing.ImportResult) -> list[tuple[str, str, str | None, float | None]]:
    return [(i.id, i.outcome, i.matched_to, i.similarity) for i in result.items]


@pytest.mark.parametrize("scope", ["catalog", "server"])
@pytest.mark.parametrize("mode", ["auto", "match_only"])
def test_a_batch_decides_as_matching_each_tool_alone(
    container: Container,
    twin: Container,
    monkeypatch: pytest.MonkeyPatch,
    scope: MatchScope,
    mode: MatchingMode,
) -> None:
    batch = _batch()
    new = importing.import_batch(container, batch, mode=mode, scope=scope, actor="t")
    with monkeypatch.context() as patch:
        patch.setattr(DuplicateFinder, "match_batch", _per_tool)
        old = importing.import_batch(twin, batch, mode=mode, scope=scope, actor="t")
    assert _items(new) == _items(old)
    assert new.counts == old.counts
    assert {t.id: t.description for t in container.store.list_tools()} == {
        t.id: t.description for t in twin.store.list_tools()
    }
    outcome = {i.id: (i.outcome, i.matched_to) for i in new.items}
    if mode == "auto" and scope == "catalog":  # what the batch holds, as decided
        assert outcome["mirror::read_file"] == ("matched", "a-copy::read_file")  # the tie: catalog order
        assert outcome["mirror::send_email"] == ("matched", "mail::send_email")  # same name, 0.81
        assert outcome["mirror::send_mail"] == ("created", None)
        assert outcome["mirror::translate"] == ("created", None)
        assert outcome["other::translate"] == ("matched", "mirror::translate")  # within the batch
        assert outcome["weather::get_forecast"] == ("updated", None)
        assert outcome["other::weather_forecast"] == ("created", None)  # the old text is gone
        assert outcome["mirror::get_forecast"] == ("matched", "weather::get_forecast")  # the new text
    if mode == "auto" and scope == "server":
        assert outcome["mirror::translate_text"] == ("matched", "mirror::translate")  # within the batch
        assert outcome["other::translate"] == ("created", None)


def test_one_tool_alone_best_and_closest_equal_the_reference(container: Container) -> None:
    finder = DuplicateFinder(container)
    specs = [*_batch().tools, ToolSpec(server="mail", name="get_forecast", description=FORECAST)]
    seen = set()
    for scope in ("catalog", "server"):
        for spec in specs:
            assert finder.best(spec, scope) == _old_best(container, spec, scope)
            assert finder.closest(spec, scope) == _old_closest(container, spec, scope)
            match = finder.best(spec, scope)
            seen.add(match.rule if match else None)
    assert seen == {"similar", "similar_same_name", None}


def test_the_catalog_is_read_once_per_batch(container: Container, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str | None] = []
    list_tools = type(container.store).list_tools

    def counted(store: Any, server: str | None = None, **kwargs: Any) -> list[ToolRecord]:
        reads.append(server)
        return list_tools(store, server, **kwargs)

    monkeypatch.setattr(type(container.store), "list_tools", counted)
    monkeypatch.setattr(importing, "refresh", lambda *args, **kwargs: None)  # the index reads on its own
    batch = _batch()
    importing.import_batch(container, batch, mode="auto", scope="catalog", actor="t")
    assert reads.count(None) == 1  # once, not once per tool
    # the servers the batch wrote before its tools (created or changed: mirror, other), read again once
    assert len(reads) <= 1 + len(batch.servers)


def test_duplicates_within_one_batch_are_found(container: Container) -> None:
    specs = [
        ToolSpec(server="mail", name="translate", description=TRANSLATE),
        ToolSpec(server="weather", name="translate", description=TRANSLATE),
        ToolSpec(server="mail", name="translate_paragraph", description=TRANSLATE),
    ]
    cases: list[tuple[MatchScope, str | None, str]] = [
        ("catalog", "mail::translate", "mail::translate"),  # the copy on another server: catalog only
        ("server", None, "mail::translate"),
    ]
    for scope, second, third in cases:
        finder = DuplicateFinder(container)
        matches = finder.match_batch(specs, scope)
        assert matches.best(0) is None
        with container.writer.batch(), finder.writing("mail", "mail::translate"):
            container.writer.create_tool(specs[0], method=CreationMethod.IMPORTED, actor="t")
        found = matches.best(1)
        assert (found.tool_id if found else None) == second
        found = matches.best(2)
        assert (found.tool_id if found else None) == third
        container.writer.delete_tool("mail::translate", actor="t")


def test_a_tool_deleted_or_changed_during_the_finders_life_is_not_matched(container: Container) -> None:
    spec = ToolSpec(server="other", name="get_weather", description=FORECAST)
    finder = DuplicateFinder(container)
    matches = finder.match_batch([spec], "catalog")
    assert matches.best(0) == ToolMatch(tool_id="weather::get_forecast", similarity=0.9428, rule="similar")
    # changed by another writer (not through the finder): the change log has it
    container.writer.update_tool(
        "weather::get_forecast", description=TRANSLATE, input_schema=None, annotations=None, actor="t"
    )
    assert matches.best(0) is None
    assert finder.best(spec, "catalog") is None
    # a copy created elsewhere is found; deleted, it is gone again
    copy = ToolSpec(server="files", name="forecast", description=FORECAST)
    container.writer.create_tool(copy, method=CreationMethod.MANUAL_API, actor="t")
    assert (matches.best(0) or ToolMatch(tool_id="", similarity=0, rule="similar")).tool_id == copy.id
    container.writer.delete_tool(copy.id, actor="t")
    assert matches.best(0) is None
    assert finder.best(spec, "catalog") is None
    assert finder.closest(spec, "catalog") == _old_closest(container, spec, "catalog")


def test_a_pruned_change_log_reads_everything_again(container: Container) -> None:
    spec = ToolSpec(server="other", name="get_weather", description=FORECAST)
    finder = DuplicateFinder(container)
    matches = finder.match_batch([spec], "catalog")
    assert matches.best(0) is not None
    container.writer.delete_tool("weather::get_forecast", actor="t")
    container.store.prune_changes(container.store.change_seq())  # the finder's number is gone
    assert matches.best(0) is None
    assert finder.best(spec, "catalog") is None


def test_scope_server_looks_in_the_tools_server_only(container: Container) -> None:
    spec = ToolSpec(server="mail", name="read_file", description=READ)  # a copy of files::read_file
    finder = DuplicateFinder(container)
    assert finder.best(spec, "server") is None
    assert finder.closest(spec, "server") == _old_closest(container, spec, "server")
    match = finder.best(spec, "catalog")
    assert match is not None and match.tool_id == "a-copy::read_file" and match.rule == "similar"
    assert finder.match_batch([spec], "server").best(0) is None
    assert finder.match_batch([spec], "catalog").best(0) == match


def test_registration_matches_with_the_finder(container: Container) -> None:
    spec = ToolSpec(server="mirror", name="read_file", description=READ)
    container.writer.create_server(ServerSpec(name="mirror"), method=CreationMethod.MANUAL_API, actor="t")
    outcome = registry.register_tool(
        container, spec, mode="auto", scope="catalog", method=CreationMethod.MANUAL_API, actor="t"
    )
    assert outcome.outcome == "matched" and outcome.match is not None
    assert outcome.match.tool_id == "a-copy::read_file"
