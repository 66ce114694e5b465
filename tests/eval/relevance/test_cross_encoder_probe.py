"""``lab cross-encoder``'s parts: a fold's training groups never hold a left-out tool, the rescoring
reads the predictions as the harness does and reorders only the first candidates, and a trained
cross-encoder gives the same scores once saved and loaded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.relevance import cross, data
from eval.relevance.lodo import Scored
from tests.eval.relevance.test_relevance_protocol import _dataset


def _pair(dataset: str, query_id: str, tool_id: str) -> data.Pair:
    return data.Pair(dataset, query_id, f"request {query_id}", tool_id, f"text of {tool_id}")


def test_a_fold_group_never_holds_a_wrong_tool_of_the_left_out_catalog() -> None:
    pairs = [_pair("a", "q1", "s::right"), _pair("a", "q2", "s::other")]
    wrong = {
        "q1": [("left::x", "text of left::x"), ("s::w1", "w1"), ("s::w2", "w2"), ("s::w3", "w3")],
        "q2": [("left::y", "text of left::y")],  # only a left-out tool: no group at all
    }
    groups = cross.fold_groups(pairs, wrong, banned={"left::x", "left::y"})
    assert len(groups) == 1
    request, right, negatives = groups[0]
    assert (request, right) == ("request q1", "text of s::right")
    assert negatives[0] == "w1"  # the best-ranked wrong tool that is allowed comes first
    assert len(negatives) == cross.NEGATIVES and "text of left::x" not in negatives


def test_fusion_keeps_the_candidates_and_breaks_ties_by_the_first_order() -> None:
    # a and c sum the same two reciprocal ranks (a tie, kept in the first order); b's two middles sum less
    assert cross._fuse(["a", "b", "c"], ["c", "b", "a"]) == ["a", "c", "b"]
    assert cross._fuse(["a", "b", "c"], ["b", "c", "a"])[0] == "b"


class _Oracle:
    """Scores a tool 1 when it is right for the request, else 0 (knows the gold by request text)."""

    def __init__(self, gold: dict[str, set[str]], texts: dict[str, str]) -> None:
        self.right = {request: {texts[t] for t in tools} for request, tools in gold.items()}

    def score(self, request: str, texts: list[str]) -> list[float]:
        return [1.0 if t in self.right.get(request, set()) else 0.0 for t in texts]


def test_rescoring_moves_only_the_first_candidates_and_is_measured_like_the_ranking(tmp_path: Path) -> None:
    folder = _dataset(
        tmp_path / "set",
        {"fetch": ["fetch_page"], "notes": ["add_note", "find_note"], "mail": ["send_mail"]},
        [
            ("jot down that the meeting moved", [["notes::add_note"]]),
            ("email the report to Alice", [["mail::send_mail"]]),
            ("order a pizza", []),  # unanswerable: not measured
        ],
    )
    tools = ["fetch::fetch_page", "notes::find_note", "mail::send_mail", "notes::add_note"]
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": q, "tools": [{"id": t, "score": 1.0} for t in order]}) + "\n"
            for q, order in (("q0", tools), ("q1", tools), ("q2", tools))
        ),
        encoding="utf-8",
    )
    texts = data.tool_texts(folder)
    oracle = _Oracle(
        {
            "jot down that the meeting moved": {"notes::add_note"},
            "email the report to Alice": {"mail::send_mail"},
        },
        texts,
    )
    out = cross.rescore(oracle, Scored("set", folder, "all"), predictions)  # type: ignore[arg-type]
    assert out["as ranked"]["tool_recall_at_1"] == 0.0  # neither right tool is first as ranked
    assert out["as ranked"]["tool_recall_at_5"] == 1.0
    assert out["as ranked"]["server_recall_at_1"] == 0.0
    assert out["cross"]["tool_recall_at_1"] == 1.0  # the oracle puts each right tool first
    assert out["cross"]["server_recall_at_1"] == 1.0

    with pytest.raises(Exception, match="No predictions"):
        cross.rescore(oracle, Scored("set", folder, "all"), tmp_path / "missing.jsonl")  # type: ignore[arg-type]


@pytest.mark.usefixtures("real_model")  # trains from the packaged base model
def test_a_trained_cross_encoder_scores_the_same_once_saved_and_loaded(tmp_path: Path) -> None:
    groups = [
        (
            "what time is it in Tokyo",
            "time get_current_time: current time in a timezone",
            ["fetch: get a page"],
        ),
        ("save this page", "fetch fetch: get a page", ["time convert_time: convert between zones"]),
    ]
    result = cross.train_cross(groups, tmp_path / "model", max_steps=1)
    assert result.steps == 1 and len(result.losses) == 1
    loaded = cross.CrossEncoder(tmp_path / "model")
    again = cross.CrossEncoder(tmp_path / "model")
    texts = [groups[0][1], groups[0][2][0]]
    first = loaded.score(groups[0][0], texts)
    assert first == pytest.approx(again.score(groups[0][0], texts), abs=1e-6)
