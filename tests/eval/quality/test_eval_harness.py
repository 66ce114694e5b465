"""The eval harness on a tiny dataset with the real model: predictions, report, workspace reuse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from eval.quality.harness import run_eval
from routes.cli import app
from services.resolve.read_path import ReadPath
from tool_selector.config.settings import Settings
from tool_selector.core.errors import CatalogFileError
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

SERVERS = [
    {"name": "Weather Station", "description": "Weather forecasts and air quality for any city"},
    {"name": "Calendar Planner", "description": "Create and manage calendar events and meetings"},
    {"name": "Code Hosting", "description": "Issues and pull requests of git repositories"},
    {"name": "Music Player", "description": "Play songs and manage playlists"},
    {"name": "Currency Exchange", "description": "Exchange rates and currency conversion"},
]
TOOLS = [
    ("Weather Station", "get_forecast", "Get the weather forecast for a city for the next days"),
    ("Weather Station", "get_air_quality", "Get the air quality index and pollution levels of a city"),
    ("Calendar Planner", "create_event", "Schedule a new meeting or event in the calendar"),
    ("Calendar Planner", "list_events", "List upcoming calendar events"),
    ("Calendar Planner", "delete_event", "Cancel and delete a calendar event"),
    ("Code Hosting", "create_issue", "Open a new issue or bug report in a repository"),
    ("Code Hosting", "list_pull_requests", "List the open pull requests of a repository"),
    ("Code Hosting", "merge_pull_request", "Merge a pull request into the main branch"),
    ("Music Player", "play_song", "Play a song, an album or a genre of music"),
    ("Music Player", "create_playlist", "Create a playlist of songs"),
    ("Currency Exchange", "convert_currency", "Convert an amount of money from one currency to another"),
    ("Currency Exchange", "get_exchange_rate", "Get the exchange rate between two currencies"),
]


def _query(qid: str, text: str, tools: list[list[str]], level: int) -> dict[str, Any]:
    return {
        "id": qid,
        "query": text,
        "gold_servers": sorted({t.rsplit("::", 1)[0] for slot in tools for t in slot}),
        "gold_tools": [t for slot in tools for t in slot],
        "gold_tool_groups": tools,
        "level": level,
    }


QUERIES = [
    _query("q1", "what will the weather be like tomorrow in Oslo", [["Weather Station::get_forecast"]], 1),
    _query("q2", "schedule a meeting with Anna on Friday", [["Calendar Planner::create_event"]], 1),
    _query("q3", "open a bug report about the login crash", [["Code Hosting::create_issue"]], 2),
    _query("q4", "play some jazz music", [["Music Player::play_song"]], 2),
    _query(
        "q5",
        "how many yen is 100 euros",
        [["Currency Exchange::convert_currency", "Currency Exchange::get_exchange_rate"]],
        3,
    ),
    _query("q6", "bake a sourdough bread at home", [], 5),
]
GOLD_STRINGS = {t for q in QUERIES for slot in q["gold_tool_groups"] for t in slot}


def _dataset(folder: Path, queries: list[dict[str, Any]] | None = None) -> Path:
    folder.mkdir(parents=True)
    (folder / "servers.json").write_text(json.dumps(SERVERS), encoding="utf-8")
    tools = [{"server": s, "name": n, "description": d, "input_schema": {}} for s, n, d in TOOLS]
    (folder / "tools.json").write_text(json.dumps(tools), encoding="utf-8")
    lines = [json.dumps(q) for q in (QUERIES if queries is None else queries)]
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def eval_settings(tmp_path: Path, cache_dir: Path) -> Settings:
    """Settings whose cache (where eval workspaces live) belongs to this test alone."""
    return Settings(data_dir=tmp_path / "data", cache_dir=cache_dir)


def _read_predictions(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_run_eval_writes_one_prediction_per_query_and_a_markdown_report(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    dataset = _dataset(tmp_path / "tiny")
    predictions_path = tmp_path / "out" / "predictions.jsonl"
    report_path = tmp_path / "out" / "report.md"
    report, queries = run_eval(
        eval_settings, dataset, predictions_path, report_path=report_path, embedder=embedder
    )
    assert [q.id for q in queries] == [q["id"] for q in QUERIES]

    lines = _read_predictions(predictions_path)
    assert [p["id"] for p in lines] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    for p in lines:
        assert len(p["servers"]) == 5  # fewer than 10 servers: all of them
        assert len(p["tools"]) == 10  # 12 tools: the best 10
        assert len({s["name"] for s in p["servers"]}) == 5
        assert [s["score"] for s in p["servers"]] == sorted((s["score"] for s in p["servers"]), reverse=True)
        assert 0.0 <= p["confidence"] <= 1.0
        assert p["tier"] in {"activated", "multiple_matches", "weak_matches", "not_found"}
        assert isinstance(p["latency_ms"], float)
        assert p["latency_ms"] > 0.0
    top_servers = {p["id"]: p["servers"][0]["name"] for p in lines}
    assert top_servers["q1"] == "Weather Station"
    assert top_servers["q3"] == "Code Hosting"
    assert top_servers["q4"] == "Music Player"

    assert report.groups["all"].count == 6
    assert report.groups["L1-4"].count == 5
    assert report.groups["L1-4"].server_recall_at_5 == 1.0  # every server is in the top 5 of 5

    markdown = report_path.read_text(encoding="utf-8")
    assert markdown.startswith("# tool-selector lab eval: tiny\n")
    assert "## Results" in markdown
    assert "## Definitions" in markdown
    assert "- `indexes`: 1 built, 0 reused" in markdown
    assert "- `calibration`: confidence-v4" in markdown
    assert "## Calibration" in markdown
    assert "![reliability diagram](report.reliability.png)" in markdown
    assert (tmp_path / "out" / "report.reliability.png").read_bytes().startswith(b"\x89PNG")


def test_a_second_run_reuses_the_workspace_without_rebuilding_the_index(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    dataset = _dataset(tmp_path / "tiny")
    first_report = tmp_path / "first.md"
    second_report = tmp_path / "second.md"
    run_eval(eval_settings, dataset, tmp_path / "p1.jsonl", report_path=first_report, embedder=embedder)
    (workspace,) = (eval_settings.cache_dir / "eval").iterdir()
    generation = (workspace / "index" / "CURRENT").read_text()

    run_eval(eval_settings, dataset, tmp_path / "p2.jsonl", report_path=second_report, embedder=embedder)
    assert "- `indexes`: 1 built, 0 reused" in first_report.read_text()
    assert "- `indexes`: 0 built, 1 reused" in second_report.read_text()
    assert [p.name for p in (eval_settings.cache_dir / "eval").iterdir()] == [workspace.name]
    assert (workspace / "index" / "CURRENT").read_text() == generation  # no new index generation
    first = _read_predictions(tmp_path / "p1.jsonl")
    second = _read_predictions(tmp_path / "p2.jsonl")
    assert [(p["id"], p["tools"], p["confidence"], p["tier"]) for p in first] == [
        (p["id"], p["tools"], p["confidence"], p["tier"]) for p in second
    ]


def test_a_changed_catalog_gets_a_fresh_workspace(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    dataset = _dataset(tmp_path / "tiny")
    run_eval(eval_settings, dataset, tmp_path / "p1.jsonl", embedder=embedder)
    tools = json.loads((dataset / "tools.json").read_text())
    tools.append({"server": "Music Player", "name": "pause", "description": "Pause the music"})
    (dataset / "tools.json").write_text(json.dumps(tools))
    report_path = tmp_path / "r.md"
    run_eval(eval_settings, dataset, tmp_path / "p2.jsonl", report_path=report_path, embedder=embedder)
    assert len(list((eval_settings.cache_dir / "eval").iterdir())) == 2
    assert "- `indexes`: 1 built, 0 reused" in report_path.read_text()


def test_a_broken_queries_file_fails_before_anything_is_built(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    dataset = _dataset(tmp_path / "tiny")
    with (dataset / "queries.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"id": "q7", "query": "half a line\n')
    predictions = tmp_path / "p.jsonl"
    with pytest.raises(CatalogFileError) as info:
        run_eval(eval_settings, dataset, predictions, report_path=tmp_path / "r.md", embedder=embedder)
    assert "line 7" in info.value.message
    assert str(dataset / "queries.jsonl") in info.value.message
    assert not (eval_settings.cache_dir / "eval").exists()
    assert not predictions.exists()
    assert not (tmp_path / "r.md").exists()


def test_the_harness_hands_the_resolver_query_texts_and_nothing_else(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    original_resolver = Resolver.resolve
    original_read_path = ReadPath.decide

    def recording_resolver(self: Resolver, *args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return original_resolver(self, *args, **kwargs)

    def recording_read_path(self: ReadPath, *args: Any, **kwargs: Any) -> Any:
        calls.append((args, kwargs))
        return original_read_path(self, *args, **kwargs)

    monkeypatch.setattr(Resolver, "resolve", recording_resolver)
    monkeypatch.setattr(ReadPath, "decide", recording_read_path)
    run_eval(eval_settings, _dataset(tmp_path / "tiny"), tmp_path / "p.jsonl", embedder=embedder)

    texts = [q["query"] for q in QUERIES]
    assert calls, "the resolver was never called"
    catalog_ids = {f"{server}::{name}" for server, name, _ in TOOLS}
    seen = []
    for args, kwargs in calls:
        text, *rest = args
        assert text in texts
        assert set(kwargs) <= {"mode", "tools", "powers", "limit", "request"}
        assert kwargs.get("request") is None  # people's words: no second text beside the query
        assert all(isinstance(v, (str, int)) or v is None for v in kwargs.values())
        if rest:  # the resolver itself also gets the catalog's words, built from the catalog alone
            (terms,) = rest
            assert isinstance(terms, CatalogTerms)
            assert set(terms.tool_words) == catalog_ids
            seen.append(text)
    assert set(seen) == set(texts)
    assert seen[-len(texts) :] == texts  # in file order, after any warm-up
    for gold in GOLD_STRINGS:
        assert all(gold not in repr((args[0], kwargs)) for args, kwargs in calls)


@pytest.mark.usefixtures("real_model")  # the CLI loads it
def test_the_cli_eval_command_prints_the_recall_table(tmp_path: Path, cache_dir: Path) -> None:
    dataset = _dataset(tmp_path / "tiny")
    predictions = tmp_path / "preds.jsonl"
    report = tmp_path / "report.md"
    result = CliRunner().invoke(
        app,
        ["lab", "eval", str(dataset), "--predictions", str(predictions), "--report", str(report)],
        env={"TOOL_SELECTOR_CACHE_DIR": str(cache_dir)},
    )
    assert result.exit_code == 0, result.output
    header = result.stdout.splitlines()[0].split()
    assert header[:4] == ["group", "n", "tool", "R@1"]
    assert "MRR" in header
    table = result.stdout.split("\n\n", 1)[0].splitlines()[2:]
    rows = {line.split()[0]: line.split() for line in table}
    assert list(rows) == ["all", "L1", "L2", "L3", "L5", "L1-4"]
    assert rows["all"][1] == "6"
    assert 0.0 <= float(rows["L1-4"][2]) <= 1.0  # tool R@1
    assert rows["L5"][2] == "-"  # no recall for unanswerable queries
    assert rows["L1-4"][1] == "5"
    assert "tier counts, answerable/unanswerable" in result.stdout
    assert len(predictions.read_text().splitlines()) == 6
    assert report.read_text().startswith("# tool-selector lab eval: tiny")


def test_the_cli_eval_command_names_a_missing_dataset(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["lab", "eval", str(tmp_path / "nothing"), "--predictions", str(tmp_path / "p")]
    )
    assert result.exit_code == 3
    assert f"Dataset folder {tmp_path / 'nothing'} does not exist" in result.stderr


# --------------------------------------------------------------------------- small-catalog roots


def _small_root(root: Path, groups: list[list[str]]) -> Path:
    """A make_subcatalogs.py-style root: each catalog's servers, with answerable requests cut to it and
    the other requests labelled gold-removed."""
    for n, members in enumerate(groups):
        folder = root / f"k{len(members)}-{n:02d}"
        folder.mkdir(parents=True)
        (folder / "servers.json").write_text(json.dumps([s for s in SERVERS if s["name"] in members]))
        tools = [
            {"server": s, "name": t, "description": d, "input_schema": {}}
            for s, t, d in TOOLS
            if s in members
        ]
        (folder / "tools.json").write_text(json.dumps(tools))
        lines = []
        for q in QUERIES[:5]:
            inside = q["gold_servers"][0] in members
            lines.append(
                {**q, "id": f"{folder.name}:{q['id']}"}
                if inside
                else {**q, "id": f"{folder.name}:{q['id']}", "gold_servers": [], "gold_tools": [],
                      "gold_tool_groups": [], "origin": "gold-removed"}
            )  # fmt: skip
        (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in lines) + "\n")
    return root


def test_a_small_catalog_root_is_scored_together_and_per_catalog_size(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    root = _small_root(
        tmp_path / "mini_k",
        [["Weather Station", "Calendar Planner"], ["Code Hosting", "Music Player", "Currency Exchange"]],
    )
    predictions_path = tmp_path / "p.jsonl"
    report, queries = run_eval(
        eval_settings, root, predictions_path, embedder=embedder, report_path=tmp_path / "r.md"
    )
    assert len(queries) == 10
    assert list(report.groups) == ["all", "2 servers", "3 servers", "L1", "L2", "L3", "L1-4"]
    assert report.group("2 servers").answerable == 2
    assert report.group("3 servers").answerable == 3
    assert report.group("all").gold_removed_activated is not None
    assert report.group("all").ece is not None
    lines = _read_predictions(predictions_path)
    assert {(p["catalog"], p["catalog_servers"]) for p in lines} == {("k2-00", 2), ("k3-01", 3)}
    assert all(p["dataset"] == "mini_k" for p in lines)
    top = {p["id"]: p["servers"][0]["name"] for p in lines}
    assert top["k2-00:q1"] == "Weather Station"
    assert top["k3-01:q4"] == "Music Player"
    markdown = (tmp_path / "r.md").read_text()
    assert "- **2 servers**: ECE" in markdown
    assert (tmp_path / "r.reliability.png").read_bytes().startswith(b"\x89PNG")


def test_several_datasets_are_scored_together_with_their_names_on_the_ids(
    tmp_path: Path, eval_settings: Settings, embedder: MiniLMEmbedder
) -> None:
    first = _dataset(tmp_path / "first")
    second = _small_root(tmp_path / "second", [["Weather Station", "Music Player"]])
    report, queries = run_eval(eval_settings, [first, second], tmp_path / "p.jsonl", embedder=embedder)
    assert [q.id for q in queries][:2] == ["first/q1", "first/q2"]
    assert queries[-1].id == "second/k2-00:q5"
    assert report.group("first").count == 6
    assert report.group("second").count == 5
    assert report.group("all").count == 11
