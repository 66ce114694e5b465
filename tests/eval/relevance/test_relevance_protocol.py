"""The relevance model's training data and its leave-one-dataset-out rule, on small written datasets:
what a pair is, what leaving a dataset out drops, the batches, and the ship rule of the LODO table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval.relevance import data
from eval.relevance.lodo import chosen_alphas, table, verdicts
from eval.relevance.train import batches
from tool_selector.index.build import tool_vector_text


def _dataset(folder: Path, tools: dict[str, list[str]], queries: list[tuple[str, list[list[str]]]]) -> Path:
    folder.mkdir(parents=True)
    servers = [{"name": s, "description": f"the {s} server"} for s in tools]
    listed = [
        {"server": s, "name": t, "description": f"{t.replace('_', ' ')} on {s}", "input_schema": {}}
        for s, names in tools.items()
        for t in names
    ]
    (folder / "servers.json").write_text(json.dumps(servers), encoding="utf-8")
    (folder / "tools.json").write_text(json.dumps(listed), encoding="utf-8")
    lines = []
    for n, (text, slots) in enumerate(queries):
        gold = sorted({t for slot in slots for t in slot})
        lines.append(
            json.dumps(
                {
                    "id": f"q{n}",
                    "query": text,
                    "gold_servers": sorted({t.split("::")[0] for t in gold}),
                    "gold_tools": gold,
                    "gold_tool_groups": slots,
                }
            )
        )
    (folder / "queries.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.fixture
def two_sets(tmp_path: Path) -> tuple[data.Source, data.Source]:
    web = _dataset(
        tmp_path / "web",
        {"fetch": ["fetch_page"], "notes": ["add_note", "find_note"]},
        [
            ("grab https://example.org/pricing for me", [["fetch::fetch_page"]]),
            ("jot down 'buy milk'", [["notes::add_note"]]),
            ("what did I write about taxes", [["notes::find_note"]]),
            ("order a pizza", []),
        ],
    )
    # a second family whose catalog shares the notes server with the first
    shared = _dataset(
        tmp_path / "shared",
        {"notes": ["add_note", "find_note"], "mail": ["send_mail"]},
        [
            ("remember that the meeting moved", [["notes::add_note"]]),
            ("email alice@example.com the report", [["mail::send_mail"]]),
        ],
    )
    return data.source("web", web), data.source("shared", shared)


def test_a_pair_is_the_request_without_its_arguments_and_the_text_the_index_embeds(
    two_sets: tuple[data.Source, data.Source],
) -> None:
    web, _ = two_sets
    pairs = {p.tool_id: p for p in data.pairs_of(web)}
    assert set(pairs) == {"fetch::fetch_page", "notes::add_note", "notes::find_note"}  # no unanswerable
    fetch = pairs["fetch::fetch_page"]
    assert "example.org" not in fetch.query and "pricing" not in fetch.query
    assert fetch.text == tool_vector_text("fetch_page", "fetch", "fetch page on fetch")
    assert "milk" not in pairs["notes::add_note"].query


def test_leaving_a_dataset_out_drops_its_queries_and_every_pair_whose_tool_is_in_its_catalog(
    two_sets: tuple[data.Source, data.Source],
) -> None:
    web, shared = two_sets
    kept = data.training_pairs([web, shared], left_out=shared)
    assert kept, "the other set's pairs stay"
    assert all(p.dataset == "web" for p in kept)
    assert not {p.tool_id for p in kept} & shared.tool_ids()  # web's notes pairs go too
    assert {p.tool_id for p in kept} == {"fetch::fetch_page"}
    everything = data.training_pairs([web, shared])
    assert len(everything) == 5


def test_a_batch_never_holds_a_tool_or_a_request_twice_and_every_pair_is_used(
    two_sets: tuple[data.Source, data.Source],
) -> None:
    web, shared = two_sets
    pairs = data.training_pairs([web, shared])
    planned = batches(pairs, size=3, seed=0)
    seen = [p for batch in planned for p in batch]
    assert sorted(seen, key=id) == sorted(pairs, key=id)
    for batch in planned:
        assert len({p.tool_id for p in batch}) == len(batch)
        assert len({p.query_id for p in batch}) == len(batch)
    assert batches(pairs, size=3, seed=0) == planned  # seeded


def _row(r5: float, s1: float) -> dict[str, float | None]:
    return {
        "tool_recall_at_1": r5 - 0.2,
        "tool_recall_at_5": r5,
        "server_recall_at_1": s1,
        "server_recall_at_3": s1,
        "server_recall_at_5": None,
    }


def test_the_ship_rule_wants_the_mean_up_and_no_left_out_set_down_more_than_a_hundredth() -> None:
    rows = {
        "a": {"today": _row(0.80, 0.7), "better": _row(0.90, 0.8), "uneven": _row(0.99, 0.9)},
        "b": {"today": _row(0.60, 0.5), "better": _row(0.595, 0.5), "uneven": _row(0.58, 0.5)},
    }
    text = verdicts(rows, ["today", "better", "uneven"])
    better = next(line for line in text.splitlines() if line.startswith("| better "))
    uneven = next(line for line in text.splitlines() if line.startswith("| uneven "))
    assert better.endswith("| yes |") and "+0.048" in better  # mean 0.7475 vs 0.70
    assert uneven.endswith("| no |") and "-0.0200 (b)" in uneven  # mean up, but b lost 0.02
    results = {"configs": ["today", "better"], "folds": {"x": {"scores": rows}}}
    shown = table(results)
    assert "| a | better | 0.700 | 0.900 | 0.800 | 0.800 | – |" in shown


def test_the_alpha_used_on_a_left_out_set_is_chosen_on_the_other_sets_only() -> None:
    def fold(a05: float, a065: float, a08: float) -> dict[str, object]:
        rows = {"model + arguments": _row(a05, a05), "model + arguments a0.65": _row(a065, a065)}
        rows["model + arguments a0.8"] = _row(a08, a08)
        return {"scores": {"set": rows}}

    results = {
        "folds": {
            "x": fold(0.9, 0.5, 0.5),  # x alone would pick 0.5 ...
            "y": fold(0.5, 0.6, 0.9),  # ... the others prefer 0.8
            "z": fold(0.5, 0.6, 0.8),
        }
    }
    chosen = chosen_alphas(results)
    assert chosen["x"] == ("model + arguments a0.8", 0.8)  # never its own best
    assert chosen["y"][1] == chosen["z"][1] == 0.5  # x's 0.9 at 0.5 outweighs the other's preference
    assert chosen_alphas({"folds": {"x": fold(0.9, 0.5, 0.5)}}) == {}  # needs two folds


def _graph(path: Path, weight: list[float], steps: list[int], name: str = "w") -> Path:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    inits = [
        numpy_helper.from_array(np.asarray(weight, dtype=np.float32), name),
        numpy_helper.from_array(np.asarray(steps, dtype=np.int64), "shape"),
    ]
    node = helper.make_node("Mul", ["x", name], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [len(weight)])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [len(weight)])],
        inits,
    )
    onnx.save(helper.make_model(graph), str(path))
    return path


def test_weight_space_ensembling_moves_every_float_weight_towards_the_base_and_refuses_other_graphs(
    tmp_path: Path,
) -> None:
    import onnx
    from onnx import numpy_helper

    from eval.relevance.train import interpolate_onnx

    base = _graph(tmp_path / "base.onnx", [0.0, 2.0], [1, 2])
    tuned = _graph(tmp_path / "tuned.onnx", [1.0, 4.0], [3, 4])
    interpolate_onnx(base, tuned, tmp_path / "wise.onnx", 0.25)
    mixed = {
        i.name: numpy_helper.to_array(i).tolist()
        for i in onnx.load(str(tmp_path / "wise.onnx")).graph.initializer
    }
    assert mixed["w"] == pytest.approx([0.25, 2.5])  # 0.75 * base + 0.25 * tuned
    assert mixed["shape"] == [3, 4]  # integers are not weights: the tuned graph's, never averaged

    other = _graph(tmp_path / "other.onnx", [1.0, 4.0], [1, 2], name="v")
    with pytest.raises(ValueError, match="not exports of one graph"):
        interpolate_onnx(base, other, tmp_path / "bad.onnx")
    assert not (tmp_path / "bad.onnx").exists()


def test_a_shipped_model_carries_only_the_lodo_judgement_of_its_own_recipe(tmp_path: Path) -> None:
    """The step budget and the extra training folders are part of the recipe: a LODO table of folds
    trained otherwise judged another model, and the ship refuses it with what to pass."""
    from eval.relevance.ship import _check_judged
    from tool_selector.core.errors import InvalidInputError

    def judged(max_steps: int | None, datasets: list[str]) -> dict[str, object]:
        fold = {"training": {"max_steps": max_steps, "datasets": datasets}}
        return {"folds": {"toolalpaca": fold, "restbench": fold}}

    file = tmp_path / "lodo.json"
    team = [tmp_path / "team-msc", tmp_path / "team-demo"]
    names = ["msc_bench_dev", "extra:team-msc", "extra:team-demo"]
    _check_judged(judged(120, names), file, team, 120)  # the same recipe
    _check_judged(judged(None, names[:1]), file, [], None)  # a full epoch, no extras
    _check_judged(None, None, team, 120)  # no table stored
    with pytest.raises(InvalidInputError, match="another step budget"):
        _check_judged(judged(120, names), file, team, None)
    with pytest.raises(InvalidInputError, match="another step budget"):
        _check_judged(judged(None, names), file, team, 120)
    with pytest.raises(InvalidInputError, match="other extra folders"):
        _check_judged(judged(120, names[:2]), file, team, 120)  # a fold without one of them
    with pytest.raises(InvalidInputError, match="other extra folders"):
        _check_judged(judged(120, names), file, [], 120)  # judged with extras, shipped without
