"""The evidence the confidence reads: every feature from hits, powers and the catalog's words."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tool_selector.core.arguments import extract
from tool_selector.core.models import MatchType, PowerCandidate, SearchHit, ToolDocument
from tool_selector.resolve.evidence import FEATURES, CatalogTerms, evidence_of


def _doc(server: str, name: str, description: str, **enriched: str | list[str]) -> ToolDocument:
    fields: dict[str, str | list[str]] = {
        "name": name.replace("_", " "),
        "description": description,
        "server_name": server,
        "parameter_names": [],
        **enriched,
    }
    return ToolDocument(id=f"{server}::{name}", server=server, name=name, fields=fields, text_hash="h")


DOCS = [
    _doc("Weather Station", "get_forecast", "Forecast of the weather for a city",
         action_entities=["get forecast", "show weather"], use_cases=["plan a picnic"]),
    _doc("Weather Station", "get_alerts", "Severe weather alerts for a region"),
    _doc("Clock", "now", "The current time in a timezone"),
    _doc("Clock", "convert_time", "Convert a time between timezones"),
]  # fmt: skip
TERMS = CatalogTerms.from_documents(DOCS)


def _hit(tool: str, score: float, cosine: float | None, keyword: float = 0.0) -> SearchHit:
    server, name = tool.rsplit("::", 1)
    return SearchHit(
        id=tool, server=server, name=name, score=score, keyword_score=keyword, vector_score=cosine
    )


def _power(name: str, score: float) -> PowerCandidate:
    return PowerCandidate(name=name, score=score, match_type=MatchType.HYBRID)


HITS = [
    _hit("Weather Station::get_forecast", 1.0, 0.8, keyword=3.0),
    _hit("Clock::now", 0.6, 0.5, keyword=4.0),
    _hit("Weather Station::get_alerts", 0.5, 0.6),
    _hit("Clock::convert_time", 0.2, None),
]
POWERS = [_power("Weather Station", 1.1), _power("Clock", 0.64)]


def test_catalog_terms_count_tools_powers_and_document_frequencies() -> None:
    assert (TERMS.tools, TERMS.powers) == (4, 2)
    assert TERMS.document_frequency["weather"] == 2
    assert TERMS.document_frequency["forecast"] == 1
    assert "picnic" in TERMS.tool_words["Weather Station::get_forecast"]  # enrichment fields count
    assert "picnic" not in TERMS.tool_original_words["Weather Station::get_forecast"]
    assert TERMS.tool_actions["Weather Station::get_forecast"] == (("get", "forecast"), ("show", "weather"))
    assert "station" in TERMS.power_words["Weather Station"]  # the server's own name belongs to the power
    assert TERMS.idf("forecast") > TERMS.idf("weather") > 0
    assert TERMS.idf("zebra") > TERMS.idf("forecast")  # a word no tool has weighs most


def test_evidence_has_every_feature_and_reads_vectors_scores_and_channels() -> None:
    evidence = evidence_of("get the weather forecast for Paris", HITS, POWERS, TERMS)
    assert list(evidence) == list(FEATURES)
    assert evidence["top_cosine"] == pytest.approx(0.8)
    assert evidence["top_power_cosine"] == pytest.approx(0.8)
    assert evidence["cosine_margin"] == pytest.approx(0.3)  # Weather Station 0.8 - Clock 0.5
    assert evidence["candidate_cosine_mean"] == pytest.approx((0.8 + 0.5 + 0.6) / 3)
    assert evidence["candidate_cosine_std"] == pytest.approx(float(np.std([0.8, 0.5, 0.6])))
    assert (evidence["power_score_1"], evidence["power_score_2"], evidence["power_score_3"]) == (
        1.1,
        0.64,
        0.0,
    )
    assert evidence["power_margin"] == pytest.approx(0.46)
    assert evidence["power_ratio"] == pytest.approx(0.64 / 1.1)
    assert evidence["vector_rank"] == 0.0  # Weather Station has the best cosine
    assert evidence["keyword_rank"] == pytest.approx(math.log1p(1))  # Clock's 4.0 beats its 3.0
    assert evidence["channels_agree"] == 0.0
    assert evidence["catalog_servers_log"] == pytest.approx(math.log1p(2))
    assert evidence["catalog_tools_log"] == pytest.approx(math.log1p(4))
    assert evidence["query_terms_log"] == pytest.approx(math.log1p(4))  # get, weather, forecast, pari


def test_word_coverage_is_weighted_by_rarity_in_the_catalog() -> None:
    evidence = evidence_of("weather forecast Paris", HITS, POWERS, TERMS)
    weight = {w: TERMS.idf(w) for w in ("weather", "forecast", "pari")}
    covered = (weight["weather"] + weight["forecast"]) / sum(weight.values())
    assert evidence["tool_coverage"] == pytest.approx(covered)
    assert evidence["power_coverage"] == pytest.approx(covered)
    assert evidence["catalog_coverage"] == pytest.approx(covered)  # "paris" is nowhere in the catalog
    assert evidence["runner_up_coverage"] == 0.0  # the Clock has neither word


def test_enrichment_words_count_for_the_tool_but_not_for_its_original_fields() -> None:
    evidence = evidence_of("plan a picnic", HITS, POWERS, TERMS)
    assert evidence["tool_coverage"] == 1.0
    assert evidence["tool_coverage_original"] == 0.0


def test_names_said_and_action_pairs_matched() -> None:
    evidence = evidence_of("show me the weather station forecast", HITS, POWERS, TERMS)
    assert evidence["tool_name_overlap"] == 0.5  # "forecast" said, "get" not
    assert evidence["server_name_overlap"] == 1.0
    assert evidence["action_match"] == 1.0  # "show weather": verb and object both said
    half = evidence_of("get me the weather", HITS, POWERS, TERMS)
    assert half["action_match"] == 0.5  # each pair has only its verb or only its object said
    assert evidence_of("about Paris", HITS, POWERS, TERMS)["action_match"] == 0.0


def test_the_reference_cosine_is_the_query_against_the_reference_centroid() -> None:
    query, reference = np.array([0.6, 0.8, 0.0]), np.array([0.5, 0.0, 0.5])
    evidence = evidence_of("forecast", HITS, POWERS, TERMS, query_vector=query, reference=reference)
    assert evidence["reference_cosine"] == pytest.approx(0.3)
    assert evidence["cosine_above_reference"] == pytest.approx(0.8 - 0.3)
    without = evidence_of("forecast", HITS, POWERS, TERMS)
    assert without["reference_cosine"] == 0.0


def test_a_power_a_channel_never_ranked_counts_as_eleventh() -> None:
    hits = [_hit("Clock::now", 1.0, 0.4, keyword=0.0), _hit("Weather Station::get_alerts", 0.9, 0.7, 2.0)]
    evidence = evidence_of("now", hits, [_power("Clock", 1.0), _power("Weather Station", 0.9)], TERMS)
    assert evidence["keyword_rank"] == pytest.approx(math.log1p(10))
    assert evidence["vector_rank"] == pytest.approx(math.log1p(1))
    assert evidence["cosine_margin"] == pytest.approx(-0.3)


def test_agreeing_channels_are_marked() -> None:
    hits = [_hit("Clock::now", 1.0, 0.9, keyword=5.0), _hit("Weather Station::get_alerts", 0.3, 0.2, 1.0)]
    evidence = evidence_of("time now", hits, [_power("Clock", 1.0), _power("Weather Station", 0.3)], TERMS)
    assert evidence["channels_agree"] == 1.0


def test_catalog_sizes_saturate_at_a_hundred_servers_and_five_hundred_tools() -> None:
    docs = [_doc(f"Server {i}", f"tool_{j}", "Does a thing") for i in range(150) for j in range(4)]
    evidence = evidence_of("a thing", [], [], CatalogTerms.from_documents(docs))
    assert evidence["catalog_servers_log"] == pytest.approx(math.log1p(100))
    assert evidence["catalog_tools_log"] == pytest.approx(math.log1p(500))


def test_no_hits_give_only_the_query_and_catalog_sizes() -> None:
    evidence = evidence_of("repair the wall", [], [], TERMS)
    nonzero = {k: v for k, v in evidence.items() if v}
    assert nonzero == {
        "query_terms_log": pytest.approx(math.log1p(2)),
        "catalog_servers_log": pytest.approx(math.log1p(2)),
        "catalog_tools_log": pytest.approx(math.log1p(4)),
    }


def test_argument_fit_is_the_share_of_the_requests_arguments_the_top_tool_takes() -> None:
    fetch = _doc("Fetch", "fetch", "Fetch a web page", argument_kinds=["url"])
    clock = _doc("Clock", "now", "The current time", argument_kinds=["timezone"])
    terms = CatalogTerms.from_documents([fetch, clock])
    hits = [_hit("Fetch::fetch", 1.0, 0.7), _hit("Clock::now", 0.4, 0.3)]
    powers = [_power("Fetch", 1.0), _power("Clock", 0.4)]
    url = extract("grab https://example.org/pricing").arguments
    assert evidence_of("grab", hits, powers, terms, arguments=url)["argument_fit"] == 1.0
    zone = extract("the time in Europe/Paris").arguments
    assert evidence_of("the time in", hits, powers, terms, arguments=zone)["argument_fit"] == 0.0
    assert evidence_of("grab", hits, powers, terms)["argument_fit"] == 0.0  # no argument said


def test_capability_fit_is_the_top_tools_cosine_over_its_server_documents() -> None:
    hits = [_hit("Weather Station::get_forecast", 1.0, 0.62), _hit("Clock::now", 0.5, 0.3)]
    server = [_hit("Weather Station::*", 1.0, 0.7), _hit("Clock::*", 0.4, 0.2)]  # the servers' own documents
    evidence = evidence_of("forecast", hits, POWERS, TERMS, server_hits=server)
    assert evidence["tool_over_server"] == pytest.approx(0.62 - 0.7)  # the domain fits better than any tool
    assert evidence_of("forecast", hits, POWERS, TERMS)["tool_over_server"] == 0.0  # no server document hit
