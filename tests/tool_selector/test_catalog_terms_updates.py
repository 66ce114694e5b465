"""The catalog's words are updated by what changed (a registration at 100k tools does not re-read every
tool), and the update gives what building them anew from every document gives."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tool_selector.evidence import RANKED_FIELDS, CatalogTerms
from tool_selector.models import ToolDocument
from tool_selector.wordmatrix import WordMatrix

BENCHMARKS = Path(__file__).resolve().parents[2].parent / "shared" / "benchmarks"


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
