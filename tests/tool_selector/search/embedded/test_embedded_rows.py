"""``EmbeddedBackend.write_rows``: documents with their vectors as one matrix write what ``upsert`` writes
(the same files, the same index), without a list of floats per document."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.support.backends import CATALOG, EMBEDDER, SERVERS, query
from tests.support.backends import doc as _doc
from tests.support.index_damage import current_generation
from tool_selector.core.errors import InvalidInputError
from tool_selector.core.models import ToolDocument
from tool_selector.search.embedded.backend import EmbeddedBackend

FILES = ("meta.json", "docs.jsonl", "vectors.npy", "servers.jsonl", "server_vectors.npy")


def _backend(directory: Path) -> EmbeddedBackend:
    return EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim)


def _rows(docs: list[ToolDocument]) -> tuple[list[ToolDocument], np.ndarray]:
    matrix = np.array([d.vector for d in docs], dtype=np.float32)
    return [d.model_copy(update={"vector": None}) for d in docs], matrix


def _files(directory: Path) -> dict[str, bytes]:
    generation = current_generation(directory)
    return {name: (generation / name).read_bytes() for name in FILES}


def _hits(backend: EmbeddedBackend, text: str) -> list[tuple[str, float]]:
    return [(h.id, round(h.score, 6)) for h in backend.hybrid_search(query(text))]


def test_rows_written_into_an_empty_index_are_the_files_and_the_index_upsert_makes(tmp_path: Path) -> None:
    documents = [*CATALOG, *SERVERS]
    upserted = _backend(tmp_path / "upsert")
    assert upserted.upsert(documents).written == len(documents)
    written = _backend(tmp_path / "rows")
    assert written.write_rows(*_rows(documents)) == len(documents)
    assert _files(tmp_path / "rows") == _files(tmp_path / "upsert")
    for backend in (written, _backend(tmp_path / "rows")):  # as written, and as a reader loads it
        assert backend.ids() == upserted.ids()
        assert backend.ids(target="servers") == upserted.ids(target="servers")
        assert _hits(backend, "open an issue") == _hits(upserted, "open an issue")


def test_rows_written_after_a_drop_and_on_top_of_rows_follow_upsert(tmp_path: Path) -> None:
    for name, write in (
        ("upsert", lambda b, docs: b.upsert(docs)),
        ("rows", lambda b, docs: b.write_rows(*_rows(docs))),
    ):
        backend = _backend(tmp_path / name)
        backend.drop()  # an empty generation: a small first write is a delta on it
        write(backend, CATALOG[:2])
        write(backend, [*CATALOG[1:], *SERVERS])  # one row replaced, the rest added
    for name in ("rows", "upsert"):  # the same two deltas on the empty generation
        assert (tmp_path / name / "CURRENT").read_text().endswith("+2")
    rows, upserted = _backend(tmp_path / "rows"), _backend(tmp_path / "upsert")
    assert rows.ids() == upserted.ids() and rows.count() == len(CATALOG)
    assert [d.id for d in rows.documents()] == [d.id for d in upserted.documents()]
    assert _hits(rows, "weather forecast") == _hits(upserted, "weather forecast")


def test_an_id_given_twice_keeps_the_last_and_a_matrix_of_another_shape_is_refused(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "index")
    first = _doc("Notes", "create_page", "Create a page in a notebook")
    last = _doc("Notes", "create_page", "Make a new page", text_hash="second")
    assert backend.write_rows(*_rows([first, last])) == 2  # as upsert counts them
    assert backend.ids() == {first.id: "second"}
    docs, matrix = _rows(CATALOG)
    with pytest.raises(InvalidInputError):
        backend.write_rows(docs, matrix[:, :-1])
    with pytest.raises(InvalidInputError):
        backend.write_rows(docs[:-1], matrix)
    assert backend.ids() == {first.id: "second"}
