from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from eval.quality.dataset import (
    DatasetPaths,
    Query,
    catalog_size,
    check_dataset_dir,
    dataset_folders,
    expand_datasets,
    load_queries,
    query_texts,
)
from tests.support.paths import BENCHMARKS
from tool_selector.core.errors import CatalogFileError

OCTAGON = "Octagon: MCP for Market Data"


def _line(**overrides: object) -> str:
    record: dict[str, object] = {
        "id": "q1",
        "query": "get the weather in Paris",
        "gold_servers": ["Weather"],
        "gold_tools": ["Weather::forecast"],
        "gold_tool_groups": [["Weather::forecast", "Weather::now"]],
    }
    record.update(overrides)
    return json.dumps(record)


def _write(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "queries.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _load_error(path: Path) -> CatalogFileError:
    with pytest.raises(CatalogFileError) as info:
        load_queries(path)
    return info.value


# --------------------------------------------------------------------------- loading


def test_a_valid_file_loads_every_query_and_ignores_unknown_fields(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _line(id="a", level=2, split="single", category="misc"),
        _line(id="b", expected_tier="activated"),
    )
    queries = load_queries(path)
    assert [q.id for q in queries] == ["a", "b"]
    assert queries[0].level == 2
    assert queries[0].expected_tier is None
    assert queries[1].level is None
    assert queries[1].expected_tier == "activated"
    assert queries[0].gold_tool_groups == [["Weather::forecast", "Weather::now"]]
    assert not hasattr(queries[0], "split")


def test_blank_lines_are_skipped(tmp_path: Path) -> None:
    path = _write(tmp_path, "", _line(id="a"), "   ", "", _line(id="b"), "")
    assert [q.id for q in load_queries(path)] == ["a", "b"]


def test_a_query_is_answerable_only_when_it_has_a_gold_slot(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        _line(id="yes"),
        _line(id="no", gold_servers=[], gold_tools=[], gold_tool_groups=[], level=5),
    )
    yes, no = load_queries(path)
    assert yes.answerable is True
    assert no.answerable is False


def test_a_server_name_with_single_colons_makes_a_valid_gold_id(tmp_path: Path) -> None:
    tool = f"{OCTAGON}::octagon-sec-agent"
    path = _write(tmp_path, _line(gold_servers=[OCTAGON], gold_tools=[tool], gold_tool_groups=[[tool]]))
    (query,) = load_queries(path)
    assert query.gold_tool_groups == [[tool]]


def test_broken_json_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a"), "", '{"id": "b", "query": ')
    err = _load_error(path)
    assert str(path) in err.message
    assert "line 3" in err.message
    assert "broken JSON" in err.message
    assert err.details["line"] == 3


def test_a_line_that_is_not_an_object_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a"), '["not", "an", "object"]')
    err = _load_error(path)
    assert "line 2" in err.message
    assert "expected a JSON object" in err.message


@pytest.mark.parametrize("field", ["id", "query", "gold_servers", "gold_tools", "gold_tool_groups"])
def test_a_missing_field_is_named_with_its_line(tmp_path: Path, field: str) -> None:
    record = json.loads(_line(id="b"))
    del record[field]
    path = _write(tmp_path, _line(id="a"), json.dumps(record))
    err = _load_error(path)
    assert str(path) in err.message
    assert "line 2" in err.message
    assert f"missing field '{field}'" in err.message


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("id", 7),
        ("gold_tools", "Weather::forecast"),
        ("gold_tool_groups", ["Weather::forecast"]),
        ("level", "1"),
        ("query", ""),
    ],
)
def test_a_field_of_the_wrong_type_is_named_with_its_line(tmp_path: Path, field: str, value: object) -> None:
    overrides: dict[str, object] = {"id": "b", field: value}
    path = _write(tmp_path, _line(id="a"), _line(**overrides))
    err = _load_error(path)
    assert "line 2" in err.message
    assert f"field '{field}" in err.message


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a"), _line(id="b"), "", _line(id="a"))
    err = _load_error(path)
    assert "line 4" in err.message
    assert "duplicate id 'a'" in err.message
    assert "first seen on line 1" in err.message


@pytest.mark.parametrize("bad", ["forecast", "::forecast", "Weather::", "Weather:forecast"])
def test_a_malformed_gold_tool_id_in_a_slot_names_the_line(tmp_path: Path, bad: str) -> None:
    path = _write(tmp_path, _line(id="a"), _line(id="b", gold_tool_groups=[["Weather::now", bad]]))
    err = _load_error(path)
    assert "line 2" in err.message
    assert repr(bad) in err.message
    assert "'server::tool'" in err.message


def test_a_malformed_id_in_gold_tools_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a", gold_tools=["forecast"]))
    err = _load_error(path)
    assert "line 1" in err.message
    assert "gold_tools has 'forecast'" in err.message


def test_an_empty_slot_is_rejected_with_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a", gold_tool_groups=[["Weather::now"], []]))
    err = _load_error(path)
    assert "line 1" in err.message
    assert "slot 1 is empty" in err.message


@pytest.mark.parametrize("content", ["", "\n\n  \n"])
def test_a_file_without_queries_is_rejected(tmp_path: Path, content: str) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_text(content, encoding="utf-8")
    err = _load_error(path)
    assert str(path) in err.message
    assert "empty" in err.message


def test_a_missing_query_file_is_reported_by_name(tmp_path: Path) -> None:
    path = tmp_path / "nowhere.jsonl"
    err = _load_error(path)
    assert str(path) in err.message
    assert "does not exist" in err.message


def test_a_file_that_is_not_utf8_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "queries.jsonl"
    path.write_bytes(b'{"id": "\xff"}\n')
    err = _load_error(path)
    assert "cannot be read" in err.message


# --------------------------------------------------------------------------- dataset folder


def _complete_folder(root: Path) -> Path:
    root.mkdir()
    (root / "servers.json").write_text("[]", encoding="utf-8")
    (root / "tools.json").write_text("[]", encoding="utf-8")
    (root / "queries.jsonl").write_text(_line() + "\n", encoding="utf-8")
    return root


def test_a_complete_folder_gives_the_three_paths(tmp_path: Path) -> None:
    root = _complete_folder(tmp_path / "set")
    assert check_dataset_dir(root) == DatasetPaths(
        servers=root / "servers.json", tools=root / "tools.json", queries=root / "queries.jsonl"
    )


def test_a_missing_dataset_folder_is_reported_with_the_expected_format(tmp_path: Path) -> None:
    with pytest.raises(CatalogFileError) as info:
        check_dataset_dir(tmp_path / "absent")
    assert "does not exist" in info.value.message
    assert str(tmp_path / "absent") in info.value.message
    assert "servers.json" in info.value.hint
    assert "README" in info.value.hint


def test_a_file_in_place_of_the_dataset_folder_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "set"
    path.write_text("x", encoding="utf-8")
    with pytest.raises(CatalogFileError) as info:
        check_dataset_dir(path)
    assert "not a directory" in info.value.message


@pytest.mark.parametrize(
    "remove", [("servers.json",), ("tools.json",), ("queries.jsonl",), ("servers.json", "queries.jsonl")]
)
def test_a_folder_lacking_files_names_each_missing_one(tmp_path: Path, remove: tuple[str, ...]) -> None:
    root = _complete_folder(tmp_path / "set")
    for name in remove:
        (root / name).unlink()
    with pytest.raises(CatalogFileError) as info:
        check_dataset_dir(root)
    for name in remove:
        assert name in info.value.message
    assert info.value.details["missing"] == list(remove)
    assert "servers.json" in info.value.hint
    assert "tools.json" in info.value.hint
    assert "queries.jsonl" in info.value.hint


# --------------------------------------------------------------------------- small-catalog roots


def test_a_dataset_folder_stands_for_itself(tmp_path: Path) -> None:
    root = _complete_folder(tmp_path / "set")
    assert dataset_folders(root) == [root]


def test_a_small_catalog_root_stands_for_its_dataset_folders_in_order(tmp_path: Path) -> None:
    root = tmp_path / "msc_k10"
    root.mkdir()
    for name in ("k10-01", "k10-00", "k10-10"):
        _complete_folder(root / name)
    (root / "all").mkdir()  # make_subcatalogs.py's merged queries: not a catalog
    (root / "all" / "queries.jsonl").write_text(_line() + "\n", encoding="utf-8")
    assert [p.name for p in dataset_folders(root)] == ["k10-00", "k10-01", "k10-10"]


def test_a_folder_of_neither_kind_says_what_a_dataset_is(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(CatalogFileError) as info:
        dataset_folders(tmp_path / "empty")
    assert "neither a dataset folder nor a folder of dataset folders" in info.value.message
    assert "make_subcatalogs.py" in info.value.hint


def test_a_root_with_a_broken_catalog_names_it(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    _complete_folder(root / "k5-00")
    (_complete_folder(root / "k5-01") / "tools.json").unlink()
    with pytest.raises(CatalogFileError, match=r"k5-01 lacks tools\.json"):
        dataset_folders(root)


def test_datasets_with_one_folder_name_are_told_apart(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _complete_folder(tmp_path / "a" / "set"), _complete_folder(tmp_path / "b" / "set")
    assert [a.name for a in expand_datasets([first])] == ["set"]
    assert [a.name for a in expand_datasets([first, second])] == ["set@0", "set@1"]


def test_the_catalog_size_is_the_number_of_servers(tmp_path: Path) -> None:
    root = _complete_folder(tmp_path / "set")
    (root / "servers.json").write_text('[{"name": "a"}, {"name": "b"}]', encoding="utf-8")
    assert catalog_size(check_dataset_dir(root)) == 2
    (root / "servers.json").write_text('{"name": "a"}', encoding="utf-8")
    with pytest.raises(CatalogFileError, match="must hold a JSON list"):
        catalog_size(check_dataset_dir(root))


def test_a_small_catalog_request_keeps_its_origin(tmp_path: Path) -> None:
    path = _write(
        tmp_path, _line(id="a", gold_servers=[], gold_tools=[], gold_tool_groups=[], origin="gold-removed")
    )
    (query,) = load_queries(path)
    assert query.origin == "gold-removed"
    assert not query.answerable


# --------------------------------------------------------------------------- what the resolver sees


def test_the_resolver_view_carries_only_ids_and_query_texts(tmp_path: Path) -> None:
    path = _write(tmp_path, _line(id="a", query="first"), _line(id="b", query="second", level=3))
    texts = query_texts(load_queries(path))
    assert texts == [("a", "first"), ("b", "second")]
    assert all(isinstance(pair, tuple) and len(pair) == 2 for pair in texts)
    assert all("Weather" not in part for pair in texts for part in pair)


def test_queries_can_be_built_directly_and_are_immutable() -> None:
    query = Query(id="x", query="q", gold_servers=[], gold_tools=[], gold_tool_groups=[])
    with pytest.raises(ValueError, match="frozen"):
        query.id = "y"


# --------------------------------------------------------------------------- real benchmark


def test_the_real_msc_bench_dev_queries_load_with_five_levels_and_27_unanswerable() -> None:
    path = BENCHMARKS / "msc_bench_dev" / "queries.jsonl"
    if not path.is_file():
        pytest.skip(f"benchmark data not present at {path}")
    queries = load_queries(path)
    assert len(queries) == 622
    assert {q.level for q in queries} == {1, 2, 3, 4, 5}
    unanswerable = [q for q in queries if not q.answerable]
    assert len(unanswerable) == 27
    assert {q.level for q in unanswerable} == {5}
    assert Counter(q.level for q in queries)[5] == 27
    assert check_dataset_dir(path.parent).queries == path
