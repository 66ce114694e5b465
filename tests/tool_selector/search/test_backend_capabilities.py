"""The contract of each optional capability a search backend declares (tool_selector/search/backend.py):
every backend of the contract suite runs the contract of each capability it declares, and which backend
declares which is stated here, so that a capability gained or lost is a decision, not an accident."""

from __future__ import annotations

import numpy as np
import pytest

from tests.support.backends import CATALOG, SERVERS, query
from tests.tool_selector.search.conftest import BackendFactory
from tool_selector.search.backend import (
    HeldDocuments,
    Replaceable,
    RowWriter,
    ScopedIds,
    SearchBackend,
    capabilities,
)

DECLARED = {
    "EmbeddedBackend": ["RowWriter", "ScopedIds", "HeldDocuments", "Replaceable"],
    "WeaviateBackend": [],
}


def declares(backend: SearchBackend, capability: type) -> None:
    if not isinstance(backend, capability):
        pytest.skip(f"{type(backend).__name__} does not declare {capability.__name__}")


def test_each_backend_declares_the_capabilities_it_is_known_to_have(backend: SearchBackend) -> None:
    assert capabilities(backend) == DECLARED[type(backend).__name__]


def test_a_row_writer_writes_documents_with_the_rows_of_one_matrix(make_backend: BackendFactory) -> None:
    opened = make_backend()
    declares(opened, RowWriter)
    assert isinstance(opened, RowWriter)
    documents = [*CATALOG, *SERVERS]
    vectors = np.array([d.vector for d in documents], dtype=np.float32)
    assert opened.write_rows(documents, vectors) == len(documents)
    assert opened.ids() == {d.id: d.text_hash for d in CATALOG}
    assert opened.ids(target="servers") == {d.id: d.text_hash for d in SERVERS}
    assert opened.hybrid_search(query("weather forecast", limit=1))[0].id == "Weather::get_forecast"


def test_scoped_ids_are_the_ids_of_those_servers_documents_only(backend: SearchBackend) -> None:
    declares(backend, ScopedIds)
    assert isinstance(backend, ScopedIds)
    backend.upsert(SERVERS)
    scope = {"Code Host", "Clock"}
    every = backend.ids()
    assert backend.ids_of_servers(scope) == {i: h for i, h in every.items() if i.split("::")[0] in scope}
    servers = backend.ids(target="servers")
    assert backend.ids_of_servers(scope, target="servers") == {s: servers[s] for s in scope}
    assert backend.ids_of_servers(set()) == {}


def test_held_documents_are_the_documents_as_written(backend: SearchBackend) -> None:
    declares(backend, HeldDocuments)
    assert isinstance(backend, HeldDocuments)
    backend.upsert(SERVERS)
    held = {d.id: d for d in backend.documents()}
    assert {i: (d.text_hash, d.fields) for i, d in held.items()} == {
        d.id: (d.text_hash, d.fields) for d in CATALOG
    }
    assert {d.id for d in backend.documents(target="servers")} == {d.id for d in SERVERS}


def test_a_replaceable_backend_stages_an_empty_copy_and_publishes_it_in_one_step(
    backend: SearchBackend,
) -> None:
    declares(backend, Replaceable)
    assert isinstance(backend, Replaceable)
    staged = backend.staged()
    assert staged.count() == 0 and backend.count() == len(CATALOG)  # the current index is untouched
    staged.upsert(CATALOG[:2])
    assert backend.count() == len(CATALOG)  # nothing shows before it is published
    backend.publish(staged)
    assert backend.ids() == {d.id: d.text_hash for d in CATALOG[:2]}
