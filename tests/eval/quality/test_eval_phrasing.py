"""The lab reads a request in either phrasing (issue 40): the person's words (queries.jsonl), the agent's
query (queries-agent.jsonl), or the agent's query with the person's words beside it as the request; the
eval harness, calibrate-lodo and replay take the choice, people's words by default."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.fitting import calibrate_lodo
from eval.fitting.calibrate_evidence import Example
from eval.fitting.calibrate_fit import LOGISTIC
from eval.fitting.calibrate_lodo import Labelled, run_lodo
from eval.quality.dataset import AGENT_FILE, Asked, check_dataset_dir, load_phrased
from eval.quality.harness import run_eval
from routes.cli import app
from tests.eval.quality.test_eval_harness import QUERIES, _dataset
from tests.support.paths import GATEWAY_DEMO as DEMO
from tool_selector.config.settings import Settings, TierThresholds
from tool_selector.core.errors import CatalogFileError
from tool_selector.embedding.embedders import MiniLMEmbedder

AGENT = {  # the agent's query of each request: the capability, in its words
    "q1": "get the weather forecast for a city",
    "q2": "create a calendar event",
    "q3": "open an issue in a repository",
    "q4": "play a music genre",
    "q5": "convert an amount between currencies",
    "q6": "bake bread",
}


def _with_agent(folder: Path, lines: dict[str, str] | None = None) -> Path:
    _dataset(folder)
    rows = [
        q | {"id": f"{q['id']}-a", "rephrases": q["id"], "phrasing": "agent", "query": text}
        for q in QUERIES
        for text in [(lines or AGENT).get(q["id"], "")]
        if text
    ]
    (folder / AGENT_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return folder


def test_each_phrasing_gives_the_resolver_its_words_and_the_same_labels(tmp_path: Path) -> None:
    paths = check_dataset_dir(_with_agent(tmp_path / "tiny"))
    user, asked_user = load_phrased(paths, "user")
    agent, asked_agent = load_phrased(paths, "agent")
    both, asked_both = load_phrased(paths, "both")
    assert asked_user[0] == Asked("q1", QUERIES[0]["query"])
    assert asked_agent[0] == Asked("q1-a", AGENT["q1"])
    assert asked_both[0] == Asked("q1-a", AGENT["q1"], QUERIES[0]["query"])
    assert [q.gold_tool_groups for q in agent] == [q.gold_tool_groups for q in user]
    assert [q.id for q in both] == [q.id for q in agent]


def test_a_folder_without_the_agents_phrasing_is_refused_saying_to_read_peoples_words(tmp_path: Path) -> None:
    paths = check_dataset_dir(_dataset(tmp_path / "tiny"))
    with pytest.raises(CatalogFileError) as info:
        load_phrased(paths, "agent")
    assert "has no queries-agent.jsonl" in str(info.value)
    assert "--phrasing user" in (info.value.hint or "")


def test_an_agent_line_that_names_no_request_is_refused_for_both(tmp_path: Path) -> None:
    folder = _with_agent(tmp_path / "tiny")
    rows = [json.loads(line) for line in (folder / AGENT_FILE).read_text("utf-8").splitlines()]
    rows[2]["rephrases"] = "q99"
    (folder / AGENT_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    load_phrased(check_dataset_dir(folder), "agent")  # the agent's words alone need no pairing
    with pytest.raises(CatalogFileError) as info:
        load_phrased(check_dataset_dir(folder), "both")
    assert "'q3-a'" in str(info.value)
    assert "rephrases" in (info.value.hint or "")


def _predictions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_the_eval_scores_the_agents_lines_and_with_both_the_product_reads_the_querys_words(
    tmp_path: Path, cache_dir: Path, embedder: MiniLMEmbedder
) -> None:
    settings = Settings(data_dir=tmp_path / "data", cache_dir=cache_dir)
    folder = _with_agent(tmp_path / "tiny")
    report, queries = run_eval(
        settings, folder, tmp_path / "agent.jsonl", embedder=embedder, phrasing="agent"
    )
    assert [q.id for q in queries] == [f"q{i}-a" for i in range(1, 7)]
    assert report.groups["all"].count == 6
    agent = _predictions(tmp_path / "agent.jsonl")
    assert agent[0]["servers"][0]["name"] == "Weather Station"
    run_eval(settings, folder, tmp_path / "both.jsonl", embedder=embedder, phrasing="both")
    both = _predictions(tmp_path / "both.jsonl")
    # the person's words add no argument here: the same ranking and confidence as the agent's alone
    assert [(p["servers"], p["confidence"], p["tier"]) for p in both] == [
        (p["servers"], p["confidence"], p["tier"]) for p in agent
    ]
    run_eval(
        settings, folder, tmp_path / "joined.jsonl", embedder=embedder, phrasing="both", reading="joined"
    )
    joined = _predictions(tmp_path / "joined.jsonl")
    assert [p["confidence"] for p in joined] != [p["confidence"] for p in agent]  # the request's words read


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_lab_eval_in_the_agents_phrasing_of_a_folder_without_one_fails_as_a_file_error_with_what_to_do(
    tmp_path: Path,
) -> None:
    folder = _dataset(tmp_path / "tiny")
    result = CliRunner().invoke(
        app, ["lab", "eval", str(folder), "--predictions", str(tmp_path / "p.jsonl"), "--phrasing", "agent"]
    )
    assert result.exit_code == 3  # the error table's code for a catalog or dataset file (routes/errors.py)
    assert "has no queries-agent.jsonl" in result.stderr
    assert "--phrasing user" in result.stderr
    wrong = CliRunner().invoke(
        app, ["lab", "calibrate-lodo", str(folder), "--work", str(tmp_path / "w"), "--phrasing", "person"]
    )
    assert wrong.exit_code == 2
    assert "--phrasing 'person' is not one of user, agent, both" in wrong.stderr


def _rows(dataset: str, phrasing: str, n: int = 40) -> list[Labelled]:
    out = []
    for i in range(n):
        right = i % 3 != 0
        example = Example(
            dataset=dataset,
            catalog=f"{dataset}/k-{i % 4}",
            catalog_servers=10,
            id=f"{dataset}-{i}-{phrasing}",
            level=None,
            origin=None,
            answerable=True,
            correct=right,
            top3=right,
            evidence={"cosine_margin": 0.5 if right else 0.1},
            phrasing=phrasing,  # type: ignore[arg-type]
        )
        out.append(Labelled(example, None, False))
    return out


def test_calibrate_lodo_fits_the_phrasings_asked_and_never_any_row_of_the_left_out_dataset(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    examples = {
        "shared": _rows("shared", "user"),
        "setups/a": _rows("setups/a", "user") + _rows("setups/a", "agent"),
        "setups/b": _rows("setups/b", "user") + _rows("setups/b", "agent"),
    }
    seen: list[set[tuple[str, str]]] = []
    real = calibrate_lodo.fit_heads

    def spy(fitted: list[Example], **kwargs: Any) -> Any:
        seen.append({(e.dataset, e.phrasing) for e in fitted})
        return real(fitted, **kwargs)

    monkeypatch.setattr(calibrate_lodo, "fit_heads", spy)
    recipe = LOGISTIC
    scored = run_lodo(examples, TierThresholds(), [recipe], folds=3, say=lambda _: None, scored="agent")
    assert set(scored) == {"setups/a", "setups/b"}  # the shared set has no agent phrasing to score
    assert scored["setups/a"][recipe.name]["requests"] == 40
    assert seen == [{("shared", "user"), ("setups/b", "user")}, {("shared", "user"), ("setups/a", "user")}]
    seen.clear()
    run_lodo(
        examples,
        TierThresholds(),
        [recipe],
        folds=3,
        say=lambda _: None,
        scored="user",
        fitted=("user", "agent"),
    )
    assert seen[0] == {
        ("setups/a", "user"),
        ("setups/a", "agent"),
        ("setups/b", "user"),
        ("setups/b", "agent"),
    }
    assert all(("setups/a", "agent") not in fit for fit in seen[1:2])


@pytest.mark.usefixtures("real_model")
def test_a_replay_in_the_agents_phrasing_sends_the_agents_query_of_each_request(
    tmp_path: Path, cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from eval.quality import replay as replaying

    folder = tmp_path / "demo"
    folder.mkdir()
    for name in ("servers.json", "tools.json"):
        (folder / name).write_text((DEMO / name).read_text("utf-8"), encoding="utf-8")
    people = [json.loads(line) for line in (DEMO / "queries.jsonl").read_text("utf-8").splitlines()[:3]]
    agent = [
        q | {"id": f"{q['id']}-a", "rephrases": q["id"], "query": f"agent words {i}"}
        for i, q in enumerate(people)
    ]
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in people), encoding="utf-8")
    (folder / AGENT_FILE).write_text("".join(json.dumps(q) + "\n" for q in agent), encoding="utf-8")
    sent: list[str] = []
    real = replaying._agent

    async def spy(service: Any, session: str, query: Any, text: str) -> dict[str, Any]:
        sent.append(text)
        return await real(service, session, query, text)

    monkeypatch.setattr(replaying, "_agent", spy)
    settings = Settings(data_dir=tmp_path / "data", cache_dir=cache_dir)
    replaying.replay(settings, [folder], passes=1, phrasing="agent")
    assert sorted(sent) == ["agent words 0", "agent words 1", "agent words 2"]
    sent.clear()
    replaying.replay(settings, [folder], passes=1)
    assert sorted(sent) == sorted(q["query"] for q in people)
