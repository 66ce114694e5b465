from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from eval.quality.dataset import Query
from eval.quality.metrics import EvalReport, Prediction, evaluate, percentile
from eval.quality.ranking import (
    server_of,
    server_recall_at_k,
    slot_servers,
    tool_recall_at_k,
    tool_reciprocal_rank,
)
from eval.quality.reliability import auroc, calibration_error, reliability_bins
from eval.quality.report import format_console, format_markdown

OCTAGON = "Octagon: MCP for Market Data"


def _query(
    qid: str,
    groups: list[list[str]],
    *,
    level: int | None = None,
    expected_tier: str | None = None,
) -> Query:
    tools = sorted({t for slot in groups for t in slot})
    return Query(
        id=qid,
        query=f"text of {qid}",
        gold_servers=sorted({server_of(t) for t in tools}),
        gold_tools=tools,
        gold_tool_groups=groups,
        level=level,
        expected_tier=expected_tier,
    )


def _pred(
    qid: str,
    tools: Sequence[str] = (),
    *,
    servers: Sequence[str] | None = None,
    tier: str = "multiple_matches",
    confidence: float = 0.5,
    latency_ms: float = 10.0,
) -> Prediction:
    if servers is None:
        servers = list(dict.fromkeys(server_of(t) for t in tools))
    n_tools, n_servers = len(tools), len(servers)
    return Prediction.model_validate(
        {
            "id": qid,
            "servers": [{"name": s, "score": float(n_servers - i)} for i, s in enumerate(servers)],
            "tools": [{"id": t, "score": float(n_tools - i)} for i, t in enumerate(tools)],
            "confidence": confidence,
            "tier": tier,
            "latency_ms": latency_ms,
        }
    )


# --------------------------------------------------------------------------- tool recall@k


def test_tool_recall_counts_a_gold_tool_only_from_its_rank_onwards() -> None:
    groups = [["a::x"]]
    tools = ["b::1", "b::2", "a::x", "b::3"]
    assert tool_recall_at_k(groups, tools, 1) == 0.0
    assert tool_recall_at_k(groups, tools, 2) == 0.0
    assert tool_recall_at_k(groups, tools, 3) == 1.0
    assert tool_recall_at_k(groups, tools, 5) == 1.0


def test_tool_recall_at_k_beyond_the_list_length_uses_the_whole_list() -> None:
    assert tool_recall_at_k([["a::x"]], ["a::x"], 5) == 1.0
    assert tool_recall_at_k([["a::x"]], [], 5) == 0.0


def test_a_slot_is_filled_by_any_interchangeable_tool() -> None:
    groups = [["a::x", "a::y", "b::z"]]
    assert tool_recall_at_k(groups, ["b::z"], 1) == 1.0
    assert tool_recall_at_k(groups, ["a::y"], 1) == 1.0
    assert tool_recall_at_k(groups, ["c::w"], 1) == 0.0


def test_multi_slot_recall_is_the_share_of_filled_slots() -> None:
    groups = [["a::x", "a::y"], ["b::z"], ["c::w"]]
    tools = ["a::y", "d::q", "c::w", "a::x"]
    assert tool_recall_at_k(groups, tools, 1) == pytest.approx(1 / 3)
    assert tool_recall_at_k(groups, tools, 3) == pytest.approx(2 / 3)
    # a second tool of an already filled slot adds nothing
    assert tool_recall_at_k(groups, tools, 5) == pytest.approx(2 / 3)


def test_recall_rejects_an_unanswerable_query_and_a_k_below_one() -> None:
    with pytest.raises(ValueError, match="no gold slots"):
        tool_recall_at_k([], ["a::x"], 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        tool_recall_at_k([["a::x"]], ["a::x"], 0)
    with pytest.raises(ValueError, match="no gold slots"):
        server_recall_at_k([], ["a"], 1)


# --------------------------------------------------------------------------- server recall@k


def test_a_tool_id_splits_on_its_last_double_colon() -> None:
    assert server_of(f"{OCTAGON}::octagon-sec-agent") == OCTAGON
    assert server_of("A::B::tool") == "A::B"


def test_a_slot_maps_to_the_servers_of_all_its_tools() -> None:
    slot = [f"{OCTAGON}::octagon-sec-agent", "Other::search", f"{OCTAGON}::octagon-agent"]
    assert slot_servers(slot) == {OCTAGON, "Other"}


def test_a_server_name_with_single_colons_fills_its_slot() -> None:
    groups = [[f"{OCTAGON}::octagon-sec-agent"]]
    assert server_recall_at_k(groups, [OCTAGON], 1) == 1.0
    assert server_recall_at_k(groups, ["Octagon", "MCP for Market Data"], 5) == 0.0


def test_a_slot_is_filled_by_the_server_of_any_interchangeable_tool() -> None:
    groups = [[f"{OCTAGON}::octagon-sec-agent", "Other::filings"]]
    assert server_recall_at_k(groups, ["Other", OCTAGON], 1) == 1.0
    assert server_recall_at_k(groups, ["Third", OCTAGON], 1) == 0.0
    assert server_recall_at_k(groups, ["Third", OCTAGON], 2) == 1.0


def test_multi_slot_server_recall_is_the_share_of_slots_whose_server_is_ranked() -> None:
    groups = [["a::x"], ["b::y"], ["a::z"]]
    servers = ["b", "c", "a"]
    assert server_recall_at_k(groups, servers, 1) == pytest.approx(1 / 3)
    assert server_recall_at_k(groups, servers, 2) == pytest.approx(1 / 3)
    assert server_recall_at_k(groups, servers, 3) == 1.0


# --------------------------------------------------------------------------- reciprocal rank / MRR


def test_reciprocal_rank_is_one_over_the_rank_of_the_first_tool_filling_any_slot() -> None:
    groups = [["a::x"], ["b::y"]]
    assert tool_reciprocal_rank(groups, ["a::x"]) == 1.0
    assert tool_reciprocal_rank(groups, ["z::1", "b::y", "a::x"]) == 0.5
    assert tool_reciprocal_rank(groups, ["z::1", "z::2", "z::3", "a::x"]) == 0.25
    assert tool_reciprocal_rank(groups, ["z::1", "z::2"]) == 0.0
    assert tool_reciprocal_rank(groups, []) == 0.0


def test_mrr_averages_over_answerable_queries_only() -> None:
    queries = [
        _query("q1", [["a::x"]]),
        _query("q2", [["a::x"]]),
        _query("q3", [["a::x"]]),
        _query("none", []),
    ]
    predictions = [
        _pred("q1", ["a::x"]),
        _pred("q2", ["b::1", "a::x"]),
        _pred("q3", ["b::1"]),
        _pred("none", ["a::x"]),
    ]
    group = evaluate(queries, predictions).group("all")
    assert group.mrr == pytest.approx((1 + 0.5 + 0) / 3)
    assert group.tool_recall_at_1 == pytest.approx(1 / 3)
    assert group.tool_recall_at_3 == pytest.approx(2 / 3)
    assert group.count == 4
    assert group.answerable == 3
    assert group.unanswerable == 1


# --------------------------------------------------------------------------- routing figures


def test_activated_precision_counts_answerable_activated_queries_whose_top_server_fills_a_slot() -> None:
    queries = [
        _query("hit", [["a::x"]]),
        _query("hit-second-slot", [["a::x"], ["b::y"]]),
        _query("miss", [["a::x"]]),
        _query("not-activated", [["a::x"]]),
        _query("unanswerable", []),
    ]
    predictions = [
        _pred("hit", servers=["a", "b"], tier="activated"),
        _pred("hit-second-slot", servers=["b", "a"], tier="activated"),
        _pred("miss", servers=["b", "a"], tier="activated"),
        _pred("not-activated", servers=["c"], tier="weak_matches"),
        _pred("unanswerable", servers=["c"], tier="activated"),
    ]
    group = evaluate(queries, predictions).group("all")
    assert group.activated_count == 3
    assert group.activated_precision == pytest.approx(2 / 3)


def test_activated_precision_is_none_when_no_answerable_query_is_activated() -> None:
    report = evaluate([_query("q", [["a::x"]])], [_pred("q", ["a::x"], tier="multiple_matches")])
    assert report.group("all").activated_precision is None
    assert report.group("all").activated_count == 0


def test_unanswerable_caught_is_the_share_of_empty_gold_routed_to_not_found_or_weak_matches() -> None:
    tiers = ["not_found", "weak_matches", "multiple_matches", "activated"]
    queries = [_query(f"u{i}", []) for i in range(4)] + [_query("a", [["a::x"]])]
    predictions = [_pred(f"u{i}", tier=t) for i, t in enumerate(tiers)] + [_pred("a", tier="not_found")]
    group = evaluate(queries, predictions).group("all")
    assert group.unanswerable_caught == 0.5
    assert group.answerable_not_found == 1.0
    assert group.tiers_unanswerable == {
        "activated": 1,
        "multiple_matches": 1,
        "weak_matches": 1,
        "not_found": 1,
    }
    assert group.tiers_answerable == {"not_found": 1}


# --------------------------------------------------------------------------- small catalogs, calibration


def test_answerable_activated_and_gold_removed_activated_are_shares_of_their_own_queries() -> None:
    removed = Query(
        id="r", query="q", gold_servers=[], gold_tools=[], gold_tool_groups=[], origin="gold-removed"
    )
    no_gold = Query(id="n", query="q", gold_servers=[], gold_tools=[], gold_tool_groups=[], origin="no-gold")
    queries = [_query("a", [["a::x"]]), _query("b", [["b::x"]]), removed, no_gold]
    predictions = [
        _pred("a", ["a::x"], tier="activated"),
        _pred("b", ["a::x"], tier="weak_matches"),
        _pred("r", ["a::x"], tier="activated"),
        _pred("n", ["a::x"], tier="activated"),
    ]
    group = evaluate(queries, predictions).group("all")
    assert group.answerable_activated == 0.5
    assert group.gold_removed_activated == 1.0  # of 1 gold-removed request; the no-gold one is not counted


def test_the_calibration_error_weighs_each_tenth_by_its_share_of_queries() -> None:
    confidences = [0.95, 0.95, 0.95, 0.95, 0.15, 0.15]
    outcomes = [True, True, True, False, False, False]
    # bin 0.9: mean 0.95, right 0.75 -> gap 0.2, weight 4/6; bin 0.1: mean 0.15, right 0 -> gap 0.15, 2/6
    assert calibration_error(confidences, outcomes) == pytest.approx(4 / 6 * 0.2 + 2 / 6 * 0.15)
    assert calibration_error([], []) == 0.0
    assert calibration_error([1.0, 0.0], [True, False]) == 0.0  # 1.0 falls in the last tenth


def test_reliability_bins_list_each_non_empty_tenth() -> None:
    bins = reliability_bins([0.05, 0.51, 0.59, 1.0], [False, True, False, True])
    assert bins == [
        (0.0, pytest.approx(0.05), 0.0, 1),
        (0.5, pytest.approx(0.55), 0.5, 2),
        (0.9, 1.0, 1.0, 1),
    ]
    with pytest.raises(ValueError, match="one outcome per confidence"):
        reliability_bins([0.5], [])


def test_the_report_ece_counts_unanswerable_queries_as_never_right() -> None:
    queries = [
        _query("a", [["a::x"]]),
        Query(id="u", query="q", gold_servers=[], gold_tools=[], gold_tool_groups=[]),
    ]
    predictions = [_pred("a", ["a::x"], confidence=0.95), _pred("u", ["a::x"], confidence=0.95)]
    assert evaluate(queries, predictions).group("all").ece == pytest.approx(0.45)


def test_groups_by_dataset_and_catalog_size_appear_when_predictions_come_from_several() -> None:
    queries = [_query(f"q{i}", [["a::x"]]) for i in range(4)]
    where = [("msc", "k5-00", 5), ("msc", "k5-01", 5), ("meta", "k10-00", 10), ("meta", "k10-00", 10)]
    predictions = [
        _pred(f"q{i}", ["a::x"]).model_copy(update={"dataset": d, "catalog": c, "catalog_servers": n})
        for i, (d, c, n) in enumerate(where)
    ]
    report = evaluate(queries, predictions)
    assert list(report.groups) == ["all", "meta", "msc", "5 servers", "10 servers"]
    assert report.group("5 servers").count == 2
    one_catalog = [p.model_copy(update={"dataset": "meta", "catalog": "k10-00"}) for p in predictions]
    assert list(evaluate(queries, one_catalog).groups) == ["all"]


def test_unanswerable_figures_are_none_without_unanswerable_queries() -> None:
    group = evaluate([_query("a", [["a::x"]])], [_pred("a", ["a::x"])]).group("all")
    assert group.unanswerable_caught is None
    assert group.confidence_auroc is None
    assert group.answerable_not_found == 0.0


def test_answerable_figures_are_none_without_answerable_queries() -> None:
    group = evaluate([_query("u", [])], [_pred("u", ["a::x"], tier="not_found")]).group("all")
    assert group.tool_recall_at_1 is None
    assert group.server_recall_at_5 is None
    assert group.mrr is None
    assert group.answerable_not_found is None
    assert group.unanswerable_caught == 1.0


# --------------------------------------------------------------------------- AUROC


def test_auroc_counts_a_tied_pair_as_one_half() -> None:
    # pairs (pos, neg): (.9,.5)=1 (.9,.1)=1 (.5,.5)=.5 (.5,.1)=1 (.5,.5)=.5 (.5,.1)=1 -> 5/6
    assert auroc([0.9, 0.5, 0.5], [0.5, 0.1]) == pytest.approx(5 / 6)


def test_auroc_is_one_half_when_every_confidence_is_equal() -> None:
    assert auroc([0.3, 0.3], [0.3, 0.3, 0.3]) == 0.5


def test_auroc_is_one_for_perfect_separation_and_zero_for_inverted() -> None:
    assert auroc([0.8, 0.9], [0.1, 0.2]) == 1.0
    assert auroc([0.1, 0.2], [0.8, 0.9]) == 0.0


def test_auroc_is_none_when_a_class_is_absent() -> None:
    assert auroc([0.5], []) is None
    assert auroc([], [0.5]) is None


def test_the_report_auroc_uses_answerable_as_positive_and_unanswerable_as_negative() -> None:
    queries = [_query("a1", [["a::x"]]), _query("a2", [["a::x"]]), _query("u1", []), _query("u2", [])]
    predictions = [
        _pred("a1", confidence=0.9),
        _pred("a2", confidence=0.4),
        _pred("u1", confidence=0.4),
        _pred("u2", confidence=0.1),
    ]
    # (.9,.4)=1 (.9,.1)=1 (.4,.4)=.5 (.4,.1)=1 -> 3.5/4
    assert evaluate(queries, predictions).group("all").confidence_auroc == pytest.approx(0.875)


# --------------------------------------------------------------------------- latency


def test_latency_percentiles_interpolate_linearly_between_closest_ranks() -> None:
    values = [50.0, 10.0, 40.0, 20.0, 30.0]
    assert percentile(values, 50) == 30.0
    assert percentile(values, 95) == pytest.approx(48.0)  # position 3.8: 40 + 0.8 * 10
    assert percentile(values, 0) == 10.0
    assert percentile(values, 100) == 50.0
    assert percentile([10.0, 20.0], 50) == 15.0
    assert percentile([7.0], 95) == 7.0
    assert percentile([], 50) is None
    with pytest.raises(ValueError, match=r"0\.\.100"):
        percentile(values, 101)


def test_the_report_gives_latency_p50_and_p95_over_all_queries_of_a_group() -> None:
    queries = [_query(f"q{i}", [["a::x"]]) for i in range(5)]
    predictions = [_pred(f"q{i}", latency_ms=ms) for i, ms in enumerate([50.0, 10.0, 40.0, 20.0, 30.0])]
    group = evaluate(queries, predictions).group("all")
    assert group.latency_p50_ms == 30.0
    assert group.latency_p95_ms == pytest.approx(48.0)


# --------------------------------------------------------------------------- groups


def _levelled() -> tuple[list[Query], list[Prediction]]:
    queries = [
        _query("l1a", [["a::x"]], level=1),
        _query("l1b", [["b::y"]], level=1),
        _query("l3", [["a::x"], ["c::z"]], level=3),
        _query("l5", [], level=5),
    ]
    predictions = [
        _pred("l1a", ["a::x", "b::y"], tier="activated", confidence=0.9),
        _pred("l1b", ["a::x", "b::y"], tier="multiple_matches", confidence=0.6),
        _pred("l3", ["c::z", "q::q", "q::r", "q::s", "a::x"], tier="multiple_matches", confidence=0.5),
        _pred("l5", ["a::x"], tier="weak_matches", confidence=0.2),
    ]
    return queries, predictions


def test_levelled_queries_get_one_group_per_level_and_a_combined_answerable_group() -> None:
    report = evaluate(*_levelled())
    assert list(report.groups) == ["all", "L1", "L3", "L5", "L1-4"]
    assert report.group("L1").count == 2
    assert report.group("L1").tool_recall_at_1 == 0.5
    assert report.group("L1").mrr == pytest.approx(0.75)
    assert report.group("L3").tool_recall_at_1 == 0.5
    assert report.group("L3").tool_recall_at_3 == 0.5
    assert report.group("L3").tool_recall_at_5 == 1.0
    # servers a, b for L1; c, q, a for L3 (first occurrence order of the tool list)
    assert report.group("L3").server_recall_at_1 == 0.5
    assert report.group("L3").server_recall_at_3 == 1.0
    l14 = report.group("L1-4")
    assert l14.count == 3
    assert l14.unanswerable == 0
    assert l14.tool_recall_at_1 == pytest.approx((1 + 0 + 0.5) / 3)
    assert l14.tool_recall_at_5 == 1.0
    assert l14.mrr == pytest.approx((1 + 0.5 + 1) / 3)
    l5 = report.group("L5")
    assert l5.tool_recall_at_1 is None
    assert l5.unanswerable_caught == 1.0
    assert report.group("all").confidence_auroc == 1.0
    assert report.group("all").activated_precision == 1.0


def test_queries_without_levels_give_only_the_all_group() -> None:
    report = evaluate([_query("q", [["a::x"]])], [_pred("q", ["a::x"])])
    assert list(report.groups) == ["all"]
    with pytest.raises(KeyError, match="no group 'L1'"):
        report.group("L1")


def test_per_query_scores_are_kept_in_query_order() -> None:
    report = evaluate(*_levelled())
    assert [s.id for s in report.per_query] == ["l1a", "l1b", "l3", "l5"]
    l3 = report.per_query[2]
    assert (l3.tool_recall_at_1, l3.reciprocal_rank, l3.top_server_hit) == (0.5, 1.0, True)
    assert report.per_query[3].tool_recall_at_1 is None


# --------------------------------------------------------------------------- expected tiers


def test_expected_tiers_give_accuracy_a_confusion_table_and_top3_server_accuracy() -> None:
    queries = [
        _query("a1", [["a::x"]], expected_tier="activated"),
        _query("a2", [["a::x"]], expected_tier="activated"),
        _query("m1", [["b::y"]], expected_tier="multiple_matches"),
        _query("n1", [], expected_tier="not_found"),
        _query("n2", [], expected_tier="not_found"),
    ]
    predictions = [
        _pred("a1", servers=["a"], tier="activated"),
        _pred("a2", servers=["b", "c", "d", "a"], tier="multiple_matches"),
        _pred("m1", servers=["c", "b"], tier="multiple_matches"),
        _pred("n1", servers=["a"], tier="not_found"),
        _pred("n2", servers=["a"], tier="weak_matches"),
    ]
    group = evaluate(queries, predictions).group("all")
    assert group.tier_accuracy == pytest.approx(3 / 5)
    assert group.tier_confusion == {
        "activated": {"activated": 1, "multiple_matches": 1},
        "multiple_matches": {"multiple_matches": 1},
        "not_found": {"weak_matches": 1, "not_found": 1},
    }
    assert group.top3_server_accuracy == pytest.approx(2 / 3)


def test_tier_figures_are_absent_without_expected_tiers() -> None:
    group = evaluate([_query("q", [["a::x"]])], [_pred("q", ["a::x"])]).group("all")
    assert group.tier_accuracy is None
    assert group.tier_confusion is None
    assert group.top3_server_accuracy is None


# --------------------------------------------------------------------------- matching predictions


def test_a_missing_prediction_is_an_error_naming_its_id() -> None:
    queries = [_query("q1", [["a::x"]]), _query("q2", [["a::x"]])]
    with pytest.raises(ValueError, match=r"no prediction: 'q2'"):
        evaluate(queries, [_pred("q1")])


def test_an_extra_prediction_is_an_error_naming_its_id() -> None:
    with pytest.raises(ValueError, match=r"match no query: 'stray'"):
        evaluate([_query("q1", [["a::x"]])], [_pred("q1"), _pred("stray")])


def test_a_duplicate_prediction_is_an_error_naming_its_id() -> None:
    with pytest.raises(ValueError, match=r"more than one prediction for ids: 'q1'"):
        evaluate([_query("q1", [["a::x"]])], [_pred("q1"), _pred("q1")])


def test_many_missing_ids_are_named_up_to_a_limit() -> None:
    queries = [_query(f"q{i:02d}", [["a::x"]]) for i in range(25)]
    with pytest.raises(ValueError, match=r"25 queries have no prediction: 'q00', .* and 5 more"):
        evaluate(queries, [])


# --------------------------------------------------------------------------- serialisation


def test_a_prediction_line_parses_and_the_report_round_trips_through_json() -> None:
    line = json.dumps(
        {
            "id": "l1a",
            "servers": [{"name": OCTAGON, "score": 0.9}],
            "tools": [{"id": f"{OCTAGON}::octagon-sec-agent", "score": 0.8}],
            "confidence": 0.7,
            "tier": "activated",
            "latency_ms": 12.5,
        }
    )
    prediction = Prediction.model_validate_json(line)
    assert prediction.server_names == [OCTAGON]
    assert prediction.tool_ids == [f"{OCTAGON}::octagon-sec-agent"]
    report = evaluate(*_levelled())
    assert EvalReport.model_validate_json(report.model_dump_json()) == report


# --------------------------------------------------------------------------- rendering


def test_the_console_table_has_one_row_per_group_with_three_decimals() -> None:
    text = format_console(evaluate(*_levelled()))
    lines = text.splitlines()
    assert lines[0].split()[:3] == ["group", "n", "tool"]
    rows = [line.split()[0] for line in lines[2:7]]
    assert rows == ["all", "L1", "L3", "L5", "L1-4"]
    assert "0.500" in lines[3]  # L1 tool R@1
    assert "tier counts, answerable/unanswerable" in text
    tier_rows = {line.split()[0]: line.split()[1:] for line in lines[11:16]}
    assert lines[9].split() == ["group", "activated", "multiple_matches", "weak_matches", "not_found"]
    assert tier_rows["all"] == ["1/0", "2/0", "0/1", "0/0"]
    assert tier_rows["L5"] == ["0/0", "0/0", "0/1", "0/0"]
    assert "tier confusion" not in text


def test_the_console_table_shows_the_tier_confusion_when_present() -> None:
    queries = [_query("a", [["a::x"]], expected_tier="activated"), _query("n", [], expected_tier="not_found")]
    predictions = [_pred("a", ["a::x"], tier="activated"), _pred("n", tier="weak_matches")]
    text = format_console(evaluate(queries, predictions))
    assert "tier acc" in text
    assert "tier confusion, group all (accuracy 0.500)" in text


def test_the_markdown_report_has_results_definitions_and_settings() -> None:
    text = format_markdown(
        evaluate(*_levelled()),
        title="msc_bench_dev, hybrid",
        settings_summary={"mode": "hybrid", "top_k": 5, "weights": {"bm25": 0.5}},
    )
    assert text.startswith("# msc_bench_dev, hybrid\n")
    assert "## Results" in text
    assert "| L1-4 | 3 |" in text
    assert "## Definitions" in text
    assert "retrieving any one of them fills it" in text
    assert "| all | 1 | 2 | 0 | 0 | 0 | 0 | 1 | 0 |" in text  # tier counts: answerable then unanswerable
    assert "- `mode`: hybrid" in text
    assert '- `weights`: {"bm25": 0.5}' in text
