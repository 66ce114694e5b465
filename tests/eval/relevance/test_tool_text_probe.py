"""``lab tool-text``: the three tool texts are the index's own text and longer ones made from the catalog
only, an unknown one is refused before any training, and the dense scoring ranks every tool of the
left-out catalog for each answerable request with its arguments taken out."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eval.relevance import data
from eval.relevance.lodo import Scored
from eval.relevance.tooltext import dense_figures
from tests.eval.relevance.test_relevance_protocol import _dataset
from tool_selector.core.errors import InvalidInputError
from tool_selector.index.build import tool_vector_text


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = _dataset(
        tmp_path / "set",
        {"web": ["fetch_page"], "notes": ["create_note", "search_notes"]},
        [
            ("fetch page https://example.org", [["web::fetch_page"]]),
            ("create note on notes", [["notes::create_note"]]),
            ("order a pizza", []),  # unanswerable: not scored
        ],
    )
    tools = json.loads((made / "tools.json").read_text("utf-8"))
    tools[0]["input_schema"] = {"type": "object", "properties": {"url": {"type": "string"}, "maxLength": {}}}
    (made / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    return made


def test_the_plain_text_is_the_index_text_and_the_longer_ones_add_parameters_then_actions(
    folder: Path,
) -> None:
    plain = data.tool_texts(folder)["web::fetch_page"]
    assert plain == tool_vector_text("fetch_page", "web", "fetch page on web")
    parameters = data.tool_texts(folder, "parameters")["web::fetch_page"]
    assert parameters == plain + " Parameters: url, max Length."  # split as the index splits names
    enriched = data.tool_texts(folder, "enriched")["web::fetch_page"]
    assert enriched.startswith(parameters + " Does: fetch page")
    assert (
        data.tool_texts(folder, "parameters")["notes::create_note"]
        == data.tool_texts(folder)["notes::create_note"]
    )


def test_an_unknown_tool_text_is_refused_with_the_known_ones(folder: Path) -> None:
    with pytest.raises(InvalidInputError) as caught:
        data.tool_texts(folder, "everything")
    assert "plain, parameters, enriched" in caught.value.hint


class _Words:
    """Embeds a text as its bag of words (normalised): a request matches the tool that says its words."""

    def __init__(self) -> None:
        self.vocabulary: dict[str, int] = {}
        self.seen: list[str] = []

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        self.seen += texts
        rows = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in text.lower().replace(":", " ").split():
                rows[i, self.vocabulary.setdefault(word, len(self.vocabulary) % 64)] += 1
        return rows / np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-9)


def test_dense_scoring_ranks_every_tool_for_each_answerable_request_without_its_arguments(
    folder: Path,
) -> None:
    words = _Words()
    got = dense_figures(words, Scored("set", folder, "all"), "plain")  # type: ignore[arg-type]
    assert got == {
        "tool_recall_at_1": 1.0,
        "tool_recall_at_5": 1.0,
        "server_recall_at_1": 1.0,
        "server_recall_at_3": 1.0,
    }
    assert not any("example.org" in text or "pizza" in text for text in words.seen)
    assert len(words.seen) == 3 + 2  # the three tools, the two answerable requests
