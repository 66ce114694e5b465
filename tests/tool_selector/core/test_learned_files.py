"""The learned files the product ships (the confidence calibration, the ranker, the shadowing classifier,
the memory's judge) load one way (tool_selector/core/learned.py): each carries a format field, is checked
for it and validated, and a bad one is a CalibrationError that says how to get a good one."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from tool_selector.core.errors import CalibrationError
from tool_selector.core.learned import read_model_file
from tool_selector.resolve.confidence import FORMAT as CALIBRATION_FORMAT
from tool_selector.resolve.confidence import Calibration, load_calibration
from tool_selector.resolve.rerank.model import RANKER_FORMAT, RankerModel, load_ranker
from tool_selector.route.memory import MEMORY_FORMAT, MemoryModel, load_memory_model
from tool_selector.trust.likeness import FORMAT as SHADOW_FORMAT
from tool_selector.trust.likeness import ShadowModel, load_shadow_model

# (package, file, model, format, the product's own loader)
SHIPPED: list[tuple[str, str, type[Any], str, Callable[[], Any]]] = [
    ("tool_selector.calibration", "confidence-v2.json", Calibration, CALIBRATION_FORMAT, load_calibration),
    ("tool_selector.resolve.rerank", "ranker-v1.json", RankerModel, RANKER_FORMAT, load_ranker),
    ("tool_selector.calibration", "shadow-v1.json", ShadowModel, SHADOW_FORMAT, load_shadow_model),
    ("tool_selector.calibration", "memory-v1.json", MemoryModel, MEMORY_FORMAT, load_memory_model),
]


@pytest.mark.parametrize(
    ("package", "name", "model", "format_", "loader"), SHIPPED, ids=[s[1] for s in SHIPPED]
)
def test_every_shipped_learned_file_names_its_format_and_loads_through_the_one_loader(
    package: str, name: str, model: type[Any], format_: str, loader: Callable[[], Any]
) -> None:
    data = json.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    assert data["format"] == format_
    loaded = loader()
    assert isinstance(loaded, model) and loaded.format == format_


@pytest.mark.parametrize(
    ("package", "name", "model", "format_", "loader"), SHIPPED, ids=[s[1] for s in SHIPPED]
)
def test_a_learned_file_of_another_format_or_too_big_is_refused_saying_how_to_get_a_good_one(
    tmp_path: Path, package: str, name: str, model: type[Any], format_: str, loader: Callable[[], Any]
) -> None:
    data = json.loads(resources.files(package).joinpath(name).read_text("utf-8"))
    old = tmp_path / name
    old.write_text(json.dumps({k: v for k, v in data.items() if k != "format"}), "utf-8")
    common = {"packaged": name, "package": package, "what": "file", "remedy": "`lab fit`", "setting": None}
    with pytest.raises(CalibrationError, match="no format field") as refused:
        read_model_file(model, old, expected_format=format_, **common)
    assert "`lab fit`" in (refused.value.hint or "") and "reinstall tool-selector" in (
        refused.value.hint or ""
    )
    with pytest.raises(CalibrationError, match="bytes"):
        read_model_file(model, old, expected_format=format_, limit_bytes=10, **common)
