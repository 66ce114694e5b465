"""Damage that leaves every file readable: vectors overwritten with NaNs of the same shape, a letter of a
document changed, a byte of the approximate search flipped. meta.json records each file's sha256 when
the file is written; a load checks them, so such damage is named (file and repair) before any search
answers from it, exactly like a cut-off file.

Vectors come from the HashingEmbedder (tests/support/backends.py)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.support.backends import CATALOG, EMBEDDER, SERVERS, query
from tests.support.backends import doc as _doc
from tests.support.index_damage import current_generation
from tool_selector.core.errors import IndexDamagedError, InvalidInputError
from tool_selector.core.models import ToolDocument
from tool_selector.search.embedded import backend as embedded
from tool_selector.search.embedded.backend import EmbeddedBackend

REPAIR = "Run `tool-selector index rebuild`"
CHANGED = "has changed since it was written: its sha256 is not the one meta.json records"


def _backend(directory: Path, **kwargs: int) -> EmbeddedBackend:
    return EmbeddedBackend(directory, model_id=EMBEDDER.model_id, dim=EMBEDDER.dim, **kwargs)


@pytest.fixture
def index(tmp_path: Path) -> Path:
    """An index of tools and servers written as one full generation."""
    backend = _backend(tmp_path / "index")
    backend.upsert([*CATALOG, *SERVERS])
    backend.compact()
    return tmp_path / "index"


def _nans(path: Path) -> None:
    """Overwrite a vectors file with NaNs of the same shape and type: np.load reads it as before."""
    shape = np.load(path).shape
    np.save(path, np.full(shape, np.nan, dtype=np.float32))


def _changed_letter(path: Path) -> None:
    """One letter of a document changed: every line still parses, the counts still agree."""
    text = path.read_text(encoding="utf-8")
    at = text.index("repositor")
    path.write_text(text[:at] + "R" + text[at + 1 :], encoding="utf-8")


def _flipped_byte(path: Path) -> None:
    """The last byte of the file flipped (in a vectors file: the last bits of the last float)."""
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def _refused(directory: Path, hit: Path, problem: str) -> None:
    """Every read of a backend opened on ``directory`` names ``hit``, ``problem`` and the repair."""
    opened = _backend(directory)
    for read in (opened.count, opened.ids, lambda: opened.hybrid_search(query("open an issue"))):
        with pytest.raises(IndexDamagedError) as info:
            read()
        assert info.value.message.startswith(f"The search index is damaged: {hit} {problem}")
        assert info.value.hint.startswith(REPAIR)
        assert info.value.details["path"] == str(hit)


DAMAGE = {
    "vectors.npy": _nans,
    "server_vectors.npy": _nans,
    "docs.jsonl": _changed_letter,
    "servers.jsonl": _changed_letter,
}


@pytest.mark.parametrize("name", DAMAGE)
def test_a_file_changed_after_it_was_written_is_named_with_the_repair_though_it_still_parses(
    index: Path, name: str
) -> None:
    hit = current_generation(index) / name
    DAMAGE[name](hit)
    _refused(index, hit, CHANGED)


def test_vectors_overwritten_with_nans_of_the_same_shape_never_reach_a_search(index: Path) -> None:
    hit = current_generation(index) / "vectors.npy"
    _nans(hit)
    opened = _backend(index)
    with pytest.raises(IndexDamagedError, match=r"vectors\.npy has changed since it was written"):
        opened.hybrid_search(query("weather forecast"))
    opened.drop()  # the repair never reads the damaged files
    opened.upsert(CATALOG)
    assert _backend(index).hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"


def test_meta_json_lists_every_file_of_a_generation_with_its_sha256(index: Path) -> None:
    generation = current_generation(index)
    listed = json.loads((generation / "meta.json").read_text())["sha256"]
    files = {p.name for p in generation.iterdir() if p.name != "meta.json"}
    assert set(listed) == files == {"docs.jsonl", "vectors.npy", "servers.jsonl", "server_vectors.npy"}
    for name, digest in listed.items():
        assert hashlib.sha256((generation / name).read_bytes()).hexdigest() == digest


def _many(count: int) -> list[ToolDocument]:
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    return [
        _doc(f"Server {n % 37}", f"tool_{n}", f"{words[n % 10]} {words[(n // 7) % 10]}") for n in range(count)
    ]


def test_the_approximate_search_a_writer_keeps_with_its_generation_is_checked_too(tmp_path: Path) -> None:
    directory = tmp_path / "index"
    _backend(directory, ann_min=300).upsert(_many(600))  # a first write: a full generation with tools.ivf
    ivf = current_generation(directory) / "tools.ivf"
    assert "tools.ivf" in json.loads((ivf.parent / "meta.json").read_text())["sha256"]
    _flipped_byte(ivf)
    _refused(directory, ivf, CHANGED)


def test_a_delta_changed_after_it_was_written_is_named_with_the_repair(index: Path) -> None:
    _backend(index).upsert([_doc("Notes", "delete_page", "Delete a page")])  # one small write: a delta
    delta = current_generation(index) / "delta-000001"
    assert set(json.loads((delta / "meta.json").read_text())["sha256"]) == {"docs.jsonl", "vectors.npy"}
    _nans(delta / "vectors.npy")
    _refused(index, delta / "vectors.npy", CHANGED)


def test_an_index_written_before_checksums_still_loads_and_its_vectors_are_still_checked_for_nans(
    index: Path,
) -> None:
    meta_file = current_generation(index) / "meta.json"
    meta = json.loads(meta_file.read_text())
    del meta["sha256"]  # what the version before checksums wrote
    meta_file.write_text(json.dumps(meta))
    assert _backend(index).hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"
    _changed_letter(meta_file.parent / "docs.jsonl")  # unchecked: a letter goes unseen ...
    assert _backend(index).count() == len(CATALOG)
    hit = meta_file.parent / "vectors.npy"
    _nans(hit)  # ... but vectors that are not numbers do not
    _refused(index, hit, "holds values that are not numbers (NaN or infinite)")


def test_a_write_refuses_vectors_that_are_not_numbers(tmp_path: Path) -> None:
    backend = _backend(tmp_path / "index")
    bad = CATALOG[0].model_copy(update={"vector": [float("nan")] * EMBEDDER.dim})
    result = backend.upsert([bad, CATALOG[1]])
    assert result.written == 1
    assert result.errors == {bad.id: f"needs a vector of {EMBEDDER.dim} finite floats"}
    rows = np.full((1, EMBEDDER.dim), np.inf, dtype=np.float32)
    with pytest.raises(InvalidInputError, match="finite"):
        backend.write_rows([CATALOG[2].model_copy(update={"vector": None})], rows)
    assert backend.ids().keys() == {CATALOG[1].id}


def test_a_damaged_keyword_index_kept_beside_a_generation_is_made_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cache a reader keeps (not listed in meta.json): its own CRC finds the damage, and it is rebuilt."""
    monkeypatch.setattr(embedded, "PERSIST_MIN", 100)
    directory = tmp_path / "index"
    writer = _backend(directory)
    writer.upsert(_many(300))
    before = [h.id for h in writer.hybrid_search(query("charlie delta", alpha=0.0))]
    [kept] = current_generation(directory).glob("keyword-tools-*.npz")
    data = bytearray(kept.read_bytes())
    data[len(data) // 2] ^= 0xFF
    kept.write_bytes(bytes(data))
    reader = _backend(directory)
    assert [h.id for h in reader.hybrid_search(query("charlie delta", alpha=0.0))] == before
    assert kept.read_bytes() != bytes(data)  # a sound one kept in its place for the next reader


@pytest.mark.parametrize("pointer", ["{gen}+x", "{gen}+0", "../elsewhere"])
def test_the_repair_replaces_an_index_whose_current_file_cannot_be_read_without_reading_it(
    index: Path, pointer: str
) -> None:
    (index / "CURRENT").write_text(pointer.format(gen=current_generation(index).name))
    opened = _backend(index)
    with pytest.raises(IndexDamagedError):
        opened.count()
    staged = opened.staged()  # what `index rebuild` does: build aside, then publish
    staged.upsert(CATALOG)
    opened.publish(staged)
    assert _backend(index).hybrid_search(query("weather forecast"))[0].id == "Weather::get_forecast"
