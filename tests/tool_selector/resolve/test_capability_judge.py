"""The capability judge (issue 41): the packaged cross-encoder says whether a tool can do what a request
asks, the resolver hands its verdict on the top tool to the confidence, and a broken judge or a
calibration that needs a judge that is off is a clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tool_selector.core.errors import CalibrationError
from tool_selector.core.models import MatchType, PowerCandidate, ToolDocument
from tool_selector.resolve.confidence import load_calibration
from tool_selector.resolve.evidence import FEATURES, CatalogTerms
from tool_selector.resolve.judge import PACKAGED, CapabilityJudge, capability_judge, judge_text
from tool_selector.resolve.resolver import Ranking, Resolver

TIME = judge_text("get_current_time", "time", "Get current time in a specific timezones")
MEMORY = judge_text(
    "create_entities", "memory", "Create multiple new entities in the knowledge graph"
)  # the memory server's own words
FETCH = judge_text("fetch", "fetch", "Fetches a URL from the internet and extracts its contents as markdown.")


def test_the_packaged_judge_tells_a_tool_that_does_the_request_from_one_that_only_shares_its_domain() -> None:
    """Requests the issue names: the time tool for the time in Tokyo, not for a flight to Rome; the
    memory server's tool for "remember...", not the time tool."""
    judge = capability_judge()
    assert judge.probability("what time is it in Tokyo right now", TIME) > 0.5
    assert judge.probability("book me a flight to Rome", TIME) < 0.5
    assert judge.probability("remember that my cat is called Miso", MEMORY) > judge.probability(
        "remember that my cat is called Miso", TIME
    )
    assert judge.probability("read the page at https://example.com", FETCH) > judge.probability(
        "book me a flight to Rome", FETCH
    )


def test_the_judge_is_loaded_once_per_process_and_ships_its_licence_and_provenance() -> None:
    assert capability_judge() is capability_judge()
    provenance = json.loads((PACKAGED / "provenance.json").read_text("utf-8"))
    assert provenance["layers"] >= 1 and provenance["families"]
    assert "Apache License" in (PACKAGED / "LICENSE").read_text("utf-8")


def test_an_incomplete_judge_folder_is_a_clear_error_naming_what_is_missing(tmp_path: Path) -> None:
    shutil.copy(PACKAGED / "head.json", tmp_path / "head.json")
    with pytest.raises(CalibrationError, match=r"judge\.onnx") as raised:
        CapabilityJudge(tmp_path)
    assert "lab judge" in (raised.value.hint or "")


def test_a_head_of_another_format_is_refused(tmp_path: Path) -> None:
    for name in ("judge.onnx", "tokenizer.json"):
        (tmp_path / name).symlink_to(PACKAGED / name)
    (tmp_path / "head.json").write_text(json.dumps({"format": "other", "weight": [0.0], "bias": 0}), "utf-8")
    with pytest.raises(CalibrationError, match="format"):
        CapabilityJudge(tmp_path)


def _doc(server: str, name: str, description: str) -> ToolDocument:
    return ToolDocument(
        id=f"{server}::{name}",
        server=server,
        name=name,
        fields={"name": name.replace("_", " "), "description": description},
        text_hash=name,
    )


def test_the_catalog_terms_keep_each_tools_judge_text_and_drop_a_removed_one() -> None:
    terms = CatalogTerms.from_documents(
        [_doc("time", "get_current_time", "Get current time"), _doc("fetch", "fetch", "Fetches a URL")]
    )
    assert terms.tool_texts.get("time::get_current_time") == "get current time (time): Get current time"
    terms = terms.updated([], ["fetch::fetch"])
    assert terms.tool_texts.get("fetch::fetch") is None
    assert "capability" in FEATURES


def test_a_calibration_that_reads_the_judge_refuses_a_resolver_without_one() -> None:
    calibration = load_calibration()
    if "capability" not in calibration.features:
        calibration = calibration.model_copy(update={"features": [*calibration.features, "capability"]})

    class Embedder:
        dim = calibration.reference_vector.size
        model_id = "fake"

    with pytest.raises(CalibrationError, match="capability judge") as raised:
        Resolver(object(), Embedder(), calibration, alpha=0.5, field_boosts={})  # type: ignore[arg-type]
    assert "judge to true" in (raised.value.hint or "")


def test_the_verdict_is_on_the_top_powers_first_tool_and_the_request_as_asked() -> None:
    class Judge:
        def __init__(self) -> None:
            self.asked: list[tuple[str, str]] = []

        def probability(self, request: str, text: str) -> float:
            self.asked.append((request, text))
            return 0.25

    terms = CatalogTerms.from_documents([_doc("t", "a", "does A"), _doc("t", "b", "does B")])
    judge = Judge()
    resolver = Resolver.__new__(Resolver)
    resolver.capability = judge  # type: ignore[assignment]
    top = PowerCandidate(name="t", score=1.0, match_type=MatchType.HYBRID, tools=["t::b", "t::a"])
    ranking = Ranking(text="please do B", vector=np.zeros(3, dtype=np.float32), hits=[], powers=[top])
    assert resolver.verdict(ranking, terms) == 0.25
    assert judge.asked == [("please do B", "b (t): does B")]
    assert resolver.verdict(Ranking(text="x", vector=np.zeros(3), hits=[], powers=[]), terms) == 0.0


def test_the_wheel_ships_the_judges_tokenizer_once_as_the_relevance_models_which_is_the_same(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The wheel leaves out capability/tokenizer.json (pyproject: exclude): the packaged judge then reads
    the relevance model's, which must be the same bytes; any other folder must hold its own."""
    from tool_selector.embedding.embedders import RELEVANCE_DIR
    from tool_selector.resolve import judge

    assert (PACKAGED / "tokenizer.json").read_bytes() == (RELEVANCE_DIR / "tokenizer.json").read_bytes()
    packaged = tmp_path / "capability"
    packaged.mkdir()
    for name in ("judge.onnx", "head.json"):
        (packaged / name).symlink_to(PACKAGED / name)
    monkeypatch.setattr(judge, "PACKAGED", packaged)  # the folder as the wheel installs it
    installed = CapabilityJudge(packaged)
    request, text = "what time is it in Tokyo", judge_text("get_current_time", "time", "Current time.")
    assert installed.probability(request, text) == CapabilityJudge().probability(request, text)
    other = tmp_path / "other"  # a judge `lab judge` wrote, without its tokenizer: incomplete
    shutil.copytree(packaged, other, symlinks=True)
    with pytest.raises(CalibrationError, match=r"tokenizer\.json missing"):
        CapabilityJudge(other)
