"""The embedded index's files, read and checked: a damaged index is named, file and fault, never a traceback.

``<dir>/CURRENT`` names a generation folder holding ``meta.json``, ``docs.jsonl`` and ``vectors.npy``
(the tool documents), and ``servers.jsonl`` and ``server_vectors.npy`` (the server documents, when
``meta.json`` counts them: ``server_count``; a generation written before server documents existed has
neither and loads with none), written by ``EmbeddedBackend``. ``load_generation`` returns the
documents and vectors of both kinds, or raises
``IndexDamagedError`` (a file is missing, cut off, garbage, or changed since it was written) or
``IndexMissingError`` (an index of another format or embedding model). Both name the repair: the index
is made from the catalog database, so ``tool-selector index rebuild`` makes it anew without reading
the old one.

A generation (and a delta) is written whole in a temporary folder, synced and renamed into place
before ``CURRENT`` names it (``write_generation``), and its meta.json records the sha256 of every file
written with it (``sha256``), checked at each load: a file changed later (NaNs over the vectors, a
byte flipped by a disk or a copy) is named like a cut-off one. A load reads and parses the documents
and vectors anyway (they are not mapped); at 100k tools the check hashes 405 MB (with the approximate
search's file) in 0.4 s of CPU, a load of 3.4 s becoming 3.7 s (measured). A folder written before
checksums (no ``sha256``) still loads, its vectors checked for NaN and infinity only.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import ValidationError

from tool_selector.core.errors import IndexDamagedError, IndexMissingError
from tool_selector.core.models import ToolDocument

logger = logging.getLogger(__name__)

FORMAT_VERSION = 1  # server documents came in version 1 as optional files: older folders still load
TOOL_FILES = ("docs.jsonl", "vectors.npy")
SERVER_FILES = ("servers.jsonl", "server_vectors.npy")
REPAIR = (
    "Run `tool-selector index rebuild`: it makes the index anew from the catalog database, which holds "
    "everything the index is made from."
)


def damaged(file: Path, problem: str) -> IndexDamagedError:
    return IndexDamagedError(
        f"The search index is damaged: {file} {problem}.", hint=REPAIR, path=str(file), problem=problem
    )


def read_pointer(directory: Path) -> str | None:
    """What ``CURRENT`` says (stripped), or None when there is no index yet."""
    pointer = directory / "CURRENT"
    try:
        return pointer.read_bytes().decode("utf-8", errors="replace").strip()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise damaged(pointer, f"cannot be read ({exc})") from exc


class Stored(NamedTuple):
    """One kind of document as stored: the documents and their vectors, row for row."""

    docs: list[ToolDocument]
    vectors: np.ndarray


DELTA_SEP = "+"  # CURRENT = "gen-<id>" or "gen-<id>+<n>": that generation and its first n deltas


def parse_pointer(directory: Path, pointer: str) -> tuple[str, int]:
    """(the base generation's folder name, how many of its deltas count)."""
    base, sep, count = pointer.partition(DELTA_SEP)
    if not sep:
        return base, 0
    if not count.isdigit() or int(count) < 1:
        raise damaged(directory / "CURRENT", f"names {pointer[:60]!r}, whose delta count is not a number")
    return base, int(count)


def delta_name(number: int) -> str:
    return f"delta-{number:06d}"


class Delta(NamedTuple):
    """One write on top of a generation: documents added or replaced (both kinds, row for row with
    ``vectors``) and ids deleted per kind."""

    docs: list[ToolDocument]
    vectors: np.ndarray
    deleted: dict[str, list[str]]


def load_delta(directory: Path, base: str, number: int, *, dim: int) -> Delta:
    folder = _generation(directory, base) / delta_name(number)
    if not folder.is_dir():
        raise damaged(folder, "is missing (CURRENT counts it)")
    meta_path = folder / "meta.json"
    meta = _json_object(meta_path)
    count, deleted = meta.get("count"), meta.get("deleted")
    if not isinstance(count, int) or count < 0 or not isinstance(deleted, dict):
        raise damaged(meta_path, "holds no document count or deleted ids")
    if not all(isinstance(v, list) and all(isinstance(i, str) for i in v) for v in deleted.values()):
        raise damaged(meta_path, "holds deleted ids that are not lists of strings")
    delta = Delta(_docs(folder / "docs.jsonl", count), _vectors(folder / "vectors.npy", count, dim), deleted)
    if not verify(folder, meta):
        _unchecked(folder, {"vectors.npy": delta.vectors})
    return delta


def write_rows(
    folder: Path, docs: Sequence[ToolDocument], vectors: np.ndarray, files: tuple[str, str]
) -> None:
    """One kind of document, into a folder being written: a JSON line per document (its vector left
    out) and the vectors, row for row."""
    docs_file, vectors_file = files
    with (folder / docs_file).open("w", encoding="utf-8") as fh:
        for start in range(0, len(docs), 1000):
            lines = (d.model_dump_json(exclude={"vector"}) + "\n" for d in docs[start : start + 1000])
            fh.write("".join(lines))
    np.save(folder / vectors_file, vectors)


def write_meta(folder: Path, model_id: str, dim: int, count: int, server_count: int) -> None:
    """A generation's meta.json: its format, embedding model, document counts, and the sha256 of each
    file written before it."""
    meta = {
        "format_version": FORMAT_VERSION,
        "model_id": model_id,
        "dim": dim,
        "count": count,
        "server_count": server_count,
        "sha256": checksums(folder),
    }
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")


def write_generation(
    directory: Path, fill: Callable[[Path], None], *, model_id: str, dim: int, count: int, server_count: int
) -> str:
    """A new generation folder, written whole before anything names it: ``fill`` writes its files into
    a temporary folder, meta.json records them, every file is synced and the folder renamed into place.
    Returns its name (``write_pointer`` then makes it current). On any failure (a full disk, a write
    error) what it wrote is removed and the error raised: CURRENT still names the old generation."""
    directory.mkdir(parents=True, exist_ok=True)
    name = f"gen-{uuid.uuid4().hex[:12]}"
    tmp = directory / f"{name}.tmp"
    tmp.mkdir()
    try:
        fill(tmp)
        write_meta(tmp, model_id, dim, count, server_count)
        sync_files(tmp)
        os.replace(tmp, directory / name)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _sync_folder(directory)
    return name


def write_pointer(directory: Path, pointer: str) -> None:
    """``CURRENT`` := ``pointer``, swapped atomically (a temporary file, synced, renamed)."""
    pointer_tmp = directory / f"CURRENT.{uuid.uuid4().hex[:8]}.tmp"
    with pointer_tmp.open("w", encoding="utf-8") as fh:
        fh.write(pointer)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(pointer_tmp, directory / "CURRENT")
    _sync_folder(directory)


def _sync_folder(folder: Path) -> None:
    """The folder's entries (a rename) on disk too."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def checksums(folder: Path) -> dict[str, str]:
    """The sha256 of every file of a folder being written (its meta.json aside)."""
    return {p.name: _sha256(p) for p in sorted(folder.iterdir()) if p.is_file() and p.name != "meta.json"}


def _sha256(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def verify(folder: Path, meta: dict[str, Any]) -> bool:
    """Each file meta.json lists has the sha256 it was written with; False (nothing checked) for a
    folder written before checksums. Files a reader added later (a keyword index) are not listed."""
    listed = meta.get("sha256")
    if listed is None:
        return False
    if not isinstance(listed, dict) or not all(isinstance(v, str) for v in listed.values()):
        raise damaged(folder / "meta.json", "holds checksums that are not a map of file names to sha256")
    for name, digest in listed.items():
        path = folder / name
        if "/" in name or name in ("", ".", "..", "meta.json"):
            raise damaged(folder / "meta.json", f"lists {name[:60]!r} as one of its files")
        try:
            found = _sha256(path)
        except FileNotFoundError as exc:
            raise damaged(path, "is missing") from exc
        except OSError as exc:
            raise damaged(path, f"cannot be read ({exc})") from exc
        if found != digest:
            raise damaged(
                path,
                "has changed since it was written: its sha256 is not the one meta.json records "
                "(a disk, copy or restore error, or an edit)",
            )
    return True


def sweep(directory: Path, *, keep: str) -> None:
    """Remove what earlier writes left: older generations and a crashed write's temporary files."""
    for old in directory.iterdir():
        if old.name.startswith("CURRENT.") and old.name.endswith(".tmp"):
            old.unlink(missing_ok=True)
        elif old.name != keep and old.name.startswith("gen-"):
            shutil.rmtree(old, ignore_errors=True)


def sync_files(folder: Path) -> None:
    """Every file of a folder being written on disk (fsync) before the folder is renamed into place."""
    for path in folder.iterdir():
        with path.open("rb") as fh:
            os.fsync(fh.fileno())


def write_delta(generation: Path, number: int, delta: Delta) -> None:
    """One delta folder, written whole (a temporary folder renamed) before CURRENT counts it."""
    folder = generation / delta_name(number)
    tmp = generation / f"{delta_name(number)}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        write_rows(tmp, delta.docs, delta.vectors, ("docs.jsonl", "vectors.npy"))
        meta = {"count": len(delta.docs), "deleted": delta.deleted, "sha256": checksums(tmp)}
        (tmp / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
        sync_files(tmp)
        shutil.rmtree(folder, ignore_errors=True)  # a delta a crashed writer left before counting it
        os.replace(tmp, folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def load_generation(directory: Path, pointer: str, *, model_id: str, dim: int) -> tuple[Stored, Stored]:
    """The tool and the server documents, with their vectors, of the base generation ``pointer``
    names (its deltas are read by ``load_delta``), checked against each other."""
    generation = _generation(directory, parse_pointer(directory, pointer)[0])
    meta = _meta(generation / "meta.json", directory, model_id=model_id, dim=dim)
    count = meta.get("count")
    if not isinstance(count, int) or count < 0:
        raise damaged(generation / "meta.json", "holds no document count")
    tools = Stored(_docs(generation / TOOL_FILES[0], count), _vectors(generation / TOOL_FILES[1], count, dim))
    server_count = meta.get("server_count", 0)  # absent: written before server documents existed
    if not isinstance(server_count, int) or server_count < 0:
        raise damaged(generation / "meta.json", "holds no valid server document count")
    if server_count == 0 and not (generation / SERVER_FILES[0]).exists():
        servers = Stored([], np.zeros((0, dim), dtype=np.float32))
    else:
        servers = Stored(
            _docs(generation / SERVER_FILES[0], server_count),
            _vectors(generation / SERVER_FILES[1], server_count, dim),
        )
    if not verify(generation, meta):  # a cut-off file was named above; now anything else that changed
        logger.warning(
            "The index at %s was written without checksums (by an earlier tool-selector): only its "
            "vectors are checked. `tool-selector index rebuild` writes it with them.",
            directory,
        )
        _unchecked(generation, {TOOL_FILES[1]: tools.vectors, SERVER_FILES[1]: servers.vectors})
    return tools, servers


def _generation(directory: Path, pointer: str) -> Path:
    current = directory / "CURRENT"
    if not pointer:
        raise damaged(current, "is empty: it should name the folder of the current index (gen-...)")
    if pointer in (".", "..") or "/" in pointer or "\\" in pointer or "\ufffd" in pointer:
        raise damaged(current, f"does not name an index folder (it holds {pointer[:60]!r})")
    generation = directory / pointer
    if not generation.is_dir():
        raise damaged(current, f"names the folder {pointer}, which does not exist")
    return generation


def _json_object(path: Path) -> dict[str, Any]:
    """A meta.json read, or the damage named: missing, not JSON, or not an object."""
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise damaged(path, "is missing") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise damaged(path, f"is not valid JSON ({exc})") from exc
    if not isinstance(meta, dict):
        raise damaged(path, "does not hold a JSON object")
    return meta


def _meta(path: Path, directory: Path, *, model_id: str, dim: int) -> dict[str, Any]:
    meta = _json_object(path)
    if meta.get("format_version") != FORMAT_VERSION:
        raise IndexMissingError(
            f"The index at {directory} has format {meta.get('format_version')}, "
            f"this tool-selector reads {FORMAT_VERSION}.",
            hint=REPAIR,
            path=str(path),
        )
    if meta.get("model_id") != model_id or meta.get("dim") != dim:
        raise IndexMissingError(
            f"The index at {directory} holds vectors of {meta.get('model_id')} "
            f"({meta.get('dim')} dimensions), but the embedder is {model_id} ({dim}).",
            hint=REPAIR,
            path=str(path),
            another_model=True,  # a refresh (the sync) makes it anew: services/write/indexing.py
        )
    return meta


def _docs(path: Path, count: int) -> list[ToolDocument]:
    docs: list[ToolDocument] = []
    number = 0
    try:
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                number += 1
                if line.strip():
                    docs.append(ToolDocument.model_validate_json(line))
    except FileNotFoundError as exc:
        raise damaged(path, "is missing") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise damaged(path, f"cannot be read ({exc})") from exc
    except ValidationError as exc:
        raise damaged(path, f"is cut off or corrupt: line {number} is not a whole document") from exc
    if len(docs) != count:
        raise damaged(path, f"holds {len(docs)} documents where meta.json says {count} (it looks cut off)")
    return docs


def _vectors(path: Path, count: int, dim: int) -> np.ndarray:
    try:
        vectors = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise damaged(path, "is missing") from exc
    except (OSError, ValueError, EOFError) as exc:
        raise damaged(path, f"is cut off or corrupt ({' '.join(str(exc).split())})") from exc
    if not isinstance(vectors, np.ndarray) or vectors.shape != (count, dim) or vectors.dtype != np.float32:
        shape = getattr(vectors, "shape", "?")
        raise damaged(
            path, f"holds an array of shape {shape} where {count} x {dim} float32 vectors were expected"
        )
    return vectors


def _unchecked(folder: Path, vectors: dict[str, np.ndarray]) -> None:
    """What can be checked of a folder written before checksums: vectors that are numbers."""
    for name, matrix in vectors.items():
        if not np.isfinite(matrix).all():
            raise damaged(folder / name, "holds values that are not numbers (NaN or infinite)")
