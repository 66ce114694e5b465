"""The catalog's words are updated by what changed (a registration at 100k tools does not re-read every
tool), and the update gives what building them anew from every document gives."""

from __future__ import annotations

import json
import random

import pytest

from tests.support.paths import BENCHMARKS
from tool_selector.core.models import ToolDocument
from tool_selector.resolve import wordmatrix
from tool_selector.resolve.evidence import RANKED_FIELDS, CatalogTerms
from tool_selector.resolve.wordmatrix import WordMatrix


def _docs(limit: int = 400) -> list[ToolDocument]:
    path = BENCHMARKS / "livemcpbench" / "tools.json"
    if not path.is_file():
        pytest.skip(f"{path} is not here (the shared benchmarks sit beside the project)")
    tools = json.loads(path.read_text())[:limit]
    docs = []
    for n, tool in enumerate(tools):
        words = str(tool.get("description", "")).split()
        fields: dict[str, str | list[str]] = {
            "name": str(tool["name"]).replace("_", " "),
            "description": str(tool.get("description", "")),
            "server_name": str(tool["server"]),
            "server_description": f"the {tool['server']} server",
            "parameter_names": sorted((tool.get("input_schema") or {}).get("properties", {}))[:5],
            "action_entities": [" ".join(words[i : i + 2]) for i in range(0, min(len(words), 6), 2)],
            "semantic_keywords": words[-3:],
            "tags": ["tag" + str(len(str(tool["server"])) % 7)],  # a server's own: the same on each tool
        }
        docs.append(
            ToolDocument(
                id=f"{tool['server']}::{tool['name']}",
                server=str(tool["server"]),
                name=str(tool["name"]),
                fields=fields,
                text_hash=str(n),
            )
        )
    return docs


def _rows(matrix: WordMatrix, rows: dict[str, int], fields: bool, width: int) -> dict[str, list[set[str]]]:
    words = {i: w for w, i in matrix.vocabulary.items()}
    source = matrix.fields if fields else matrix.powers
    out = {}
    for key, first in rows.items():
        out[key] = [
            {words[int(c)] for c in source.indices[source.indptr[r] : source.indptr[r + 1]]}
            for r in range(first, first + width)
        ]
    return out


def _same(a: CatalogTerms, b: CatalogTerms) -> None:
    assert a.tool_words == b.tool_words
    assert a.tool_original_words == b.tool_original_words
    assert a.tool_name_words == b.tool_name_words
    assert a.tool_actions == b.tool_actions
    assert a.power_words == b.power_words
    assert a.power_name_words == b.power_name_words
    assert a.document_frequency == b.document_frequency
    assert a.tool_name_tokens == b.tool_name_tokens
    assert a.power_tools == b.power_tools
    assert (a.tools, a.powers) == (b.tools, b.powers)
    assert a.words is not None and b.words is not None
    width = len(RANKED_FIELDS) + 1  # a row per ranked field, then all the words of the tool
    assert _rows(a.words, a.words.tool_rows, True, width) == _rows(b.words, b.words.tool_rows, True, width)
    assert _rows(a.words, a.words.power_rows, False, 1) == _rows(b.words, b.words.power_rows, False, 1)


def test_updating_the_terms_gives_what_building_them_anew_gives() -> None:
    docs = _docs()
    rng = random.Random(7)
    terms = CatalogTerms.from_documents(docs)
    current = {d.id: d for d in docs}
    for _ in range(12):
        removed = rng.sample(sorted(current), 5)
        changed = []
        for doc_id in rng.sample(sorted(set(current) - set(removed)), 3):  # rewritten in place
            doc = current[doc_id]
            fields = {
                **doc.fields,
                "description": f"{doc.fields['description']} now with zebra {rng.random()}",
            }
            changed.append(doc.model_copy(update={"fields": fields}))
        new = [
            ToolDocument(
                id=f"Brand New {i}::tool", server=f"Brand New {i}", name="tool",
                fields={"name": "tool", "description": "quokka juggling", "server_name": f"Brand New {i}"},
                text_hash="n",
            )
            for i in range(rng.randint(0, 2))
        ]  # fmt: skip
        for doc_id in removed:
            del current[doc_id]
        current.update({d.id: d for d in [*changed, *new]})
        terms = terms.updated([*changed, *new], removed)
        _same(terms, CatalogTerms.from_documents(list(current.values())))


def test_a_server_whose_own_fields_change_and_a_server_left_without_tools() -> None:
    docs = _docs(60)
    server = docs[0].server
    own = [d for d in docs if d.server == server]
    renamed = [
        d.model_copy(update={"fields": {**d.fields, "server_description": "a wholly different purpose"}})
        for d in own
    ]
    terms = CatalogTerms.from_documents(docs).updated(renamed, ())
    after = [*[d for d in docs if d.server != server], *renamed]
    _same(terms, CatalogTerms.from_documents(after))
    emptied = terms.updated([], [d.id for d in own])
    assert server not in emptied.power_words and server not in emptied.power_tools
    _same(emptied, CatalogTerms.from_documents([d for d in docs if d.server != server]))


def _rewritten(docs: list[ToolDocument], words: str) -> list[ToolDocument]:
    return [d.model_copy(update={"fields": {**d.fields, "description": words}}) for d in docs]


def _replaced(docs: list[ToolDocument], changed: list[ToolDocument]) -> list[ToolDocument]:
    by_id = {d.id: d for d in changed}
    return [by_id.get(d.id, d) for d in docs]


def test_terms_updated_twice_from_the_same_terms_keep_each_their_own_rows() -> None:
    """Rows are appended in place past the last matrix made: two updates of the same terms (a failed
    update retried, a test) must not write over each other's rows, nor over the terms they came from."""
    docs = _docs(120)
    base = CatalogTerms.from_documents(docs)
    one, two = _rewritten(docs[:4], "alpha zebra crossing"), _rewritten(docs[4:9], "beta quokka jump")
    first = base.updated(one, ())
    second = base.updated(two, [docs[10].id])
    third = first.updated(_rewritten(docs[:2], "gamma walrus"), ())
    _same(base, CatalogTerms.from_documents(docs))
    _same(first, CatalogTerms.from_documents(_replaced(docs, one)))
    expected = [d for d in _replaced(docs, two) if d.id != docs[10].id]
    _same(second, CatalogTerms.from_documents(expected))
    _same(
        third,
        CatalogTerms.from_documents(_replaced(_replaced(docs, one), _rewritten(docs[:2], "gamma walrus"))),
    )


def test_the_maps_are_shared_with_the_terms_they_came_from_not_written_over() -> None:
    docs = _docs(80)
    base = CatalogTerms.from_documents(docs)
    removed = docs[0]
    after = base.updated([], [removed.id])
    assert removed.id in base.tool_words and removed.id not in after.tool_words
    assert (base.tools, after.tools) == (len(docs), len(docs) - 1)
    assert base.words.tool_rows.get(removed.id) is not None and removed.id not in after.words.tool_rows
    kept = docs[1].id
    assert after.tool_words[kept] is base.tool_words[kept]  # shared, not read again


def test_rows_left_behind_by_changes_are_dropped_once_they_outnumber_the_live_ones(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(wordmatrix, "_SLACK", 0)
    docs = _docs(60)
    terms = CatalogTerms.from_documents(docs)
    width = len(RANKED_FIELDS) + 1
    current = list(docs)
    heights = []
    for n in range(10):
        changed = _rewritten(current[:20], f"round {n} of the tapir")
        current = _replaced(current, changed)
        terms = terms.updated(changed, [current[-1 - n].id])
        current = current[: len(current) - 1 - n] + current[len(current) - n :]
        heights.append(terms.words.fields.shape[0])
        _same(terms, CatalogTerms.from_documents(current))
    assert max(heights) <= 2 * len(docs) * width + 20 * width  # compacted on the way
    assert terms.words.powers.shape[0] <= 2 * terms.powers + 1
