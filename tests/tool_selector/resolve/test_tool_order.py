"""The order of a power's tools (tool_selector/resolve/toolorder.py, issue 40): inside each power the tools
are ordered by their own score, the cosine weighing more than in the fused search, so the first tool (the
gateway's next call) is the one that does what the request asks; the powers, their order and scores, and
the confidence are the fused search's, untouched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from tests.support.api_helpers import make_template
from tool_selector.config.settings import Settings
from tool_selector.core.models import PowerCandidate, SearchHit
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver
from tool_selector.resolve.toolorder import ToolOrder, ToolSignals, order_tools, tool_signals


def _power(name: str, tools: list[str], score: float = 0.5) -> PowerCandidate:
    return PowerCandidate(name=name, score=score, match_type="hybrid", tools=tools)


def test_only_the_tools_inside_each_power_move_and_ties_keep_the_fused_order() -> None:
    powers = [
        _power("git", ["git::commit", "git::log", "git::status"], 0.9),
        _power("time", ["time::now"], 0.4),
    ]
    scores = {"git::commit": 0.2, "git::log": 0.8, "git::status": 0.2, "time::now": 1.0}
    ordered = order_tools(powers, scores)
    assert [(p.name, p.score) for p in ordered] == [("git", 0.9), ("time", 0.4)]
    assert ordered[0].tools == ["git::log", "git::commit", "git::status"]  # commit before status: a tie
    assert ordered[1] is powers[1]  # nothing moved: the same candidate


def test_a_tool_the_search_did_not_score_keeps_its_place_after_the_scored_ones() -> None:
    (power,) = order_tools([_power("git", ["git::diff", "git::log", "git::show"])], {"git::show": 0.3})
    assert power.tools == ["git::show", "git::diff", "git::log"]


def test_a_tools_score_weighs_the_cosine_the_keywords_the_action_and_the_arguments() -> None:
    signals = ToolSignals(cosine=1.0, keyword=0.0, action=1.0, arguments=0.5)
    assert ToolOrder(dense=0.9, action=0.1).score(signals, 0.2) == pytest.approx(0.9 + 0.1 + 0.1)
    worded = ToolSignals(cosine=0.0, keyword=1.0, action=0.0, arguments=0.0)
    assert ToolOrder(dense=0.9, action=0.1).score(worded, 0.2) == pytest.approx(0.1)


def test_the_signals_are_scaled_over_the_candidates_and_a_tool_no_word_found_has_no_keyword_share() -> None:
    hits = [
        SearchHit(
            id="git::git_commit",
            server="git",
            name="git_commit",
            score=0.9,
            vector_score=0.40,
            keyword_score=3.0,
        ),
        SearchHit(
            id="git::git_log", server="git", name="git_log", score=0.8, vector_score=0.60, keyword_score=1.0
        ),
        SearchHit(
            id="git::git_show", server="git", name="git_show", score=0.1, vector_score=0.50, keyword_score=0.0
        ),
    ]
    terms = CatalogTerms.empty()
    signals = tool_signals(hits, {"list", "commits"}, terms)
    assert signals["git::git_log"].cosine == 1.0 and signals["git::git_commit"].cosine == 0.0
    assert signals["git::git_commit"].keyword == 1.0 and signals["git::git_log"].keyword == 0.0
    assert signals["git::git_show"].keyword == 0.0 and signals["git::git_show"].cosine == pytest.approx(0.5)


CONVERT = "If it's 9:30 in the morning in New York, what time is that in Berlin?"


def _decide(settings: Settings, data: Path, embedder: MiniLMEmbedder, query: str) -> Any:
    with Container(settings.model_copy(update={"data_dir": data}), embedder=embedder) as container:
        return ReadPath.fixed(container).decide(query)


def test_the_next_tool_of_a_time_conversion_is_convert_time_and_the_powers_are_the_fused_searchs(
    tmp_path: Path, embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache")
    data = make_template(tmp_path, settings, embedder)
    ordered = _decide(settings, data, embedder, CONVERT)
    assert (ordered.decision.status, ordered.decision.power) == ("activated", "time")
    assert ordered.decision.tools[0].name == "convert_time"

    def fused(self: Resolver, powers: list[PowerCandidate], *args: object) -> list[PowerCandidate]:
        return powers  # the fused search's order of each power's tools, as before issue 40

    monkeypatch.setattr(Resolver, "_ordered", fused)
    before = _decide(settings, data, embedder, CONVERT)
    assert before.decision.tools[0].name == "get_current_time"  # the keyword channel's pick: "time"
    for resolution in (ordered.resolution, before.resolution):
        assert [(p.name, p.score) for p in resolution.powers] == [
            (p.name, p.score) for p in before.resolution.powers
        ]
        assert sorted(resolution.powers[0].tools) == sorted(before.resolution.powers[0].tools)
    # the tier is the same; the confidence reads the capability judge's verdict on the first tool the
    # order names (convert_time here, get_current_time before), so its value may differ
    assert ordered.decision.status == before.decision.status
