"""The one error table: every error has its own row, and the MCP text tells the model what to do next."""

from __future__ import annotations

import inspect

import pytest

from routes.errors import ERROR_TABLE, ErrorMapping, mapping_for, mcp_text
from tool_selector.core import errors as e


def _all_errors() -> list[type[e.ToolSelectorError]]:
    return [
        cls
        for _, cls in inspect.getmembers(e, inspect.isclass)
        if issubclass(cls, e.ToolSelectorError) and cls.__module__ == e.__name__
    ]


ALL = _all_errors()
CONCRETE = [cls for cls in ALL if not any(other is not cls and issubclass(other, cls) for other in ALL)]
CONFIGURATION = [cls for cls in CONCRETE if issubclass(cls, e.ConfigurationError)]
WORLD = [cls for cls in CONCRETE if issubclass(cls, e.WorldError)]
ROWS = dict(ERROR_TABLE)


def test_the_tree_has_the_documented_concrete_errors() -> None:
    assert {cls.__name__ for cls in CONFIGURATION} >= {
        "InvalidInputError",
        "CatalogFileError",
        "NotFoundError",
        "IndexMissingError",
        "CalibrationError",
    }
    assert {cls.__name__ for cls in WORLD} >= {
        "BackendUnavailableError",
        "EmbedderError",
        "StoreError",
        "LockedError",
    }
    assert set(CONCRETE) == set(CONFIGURATION) | set(WORLD)  # every leaf is one or the other


@pytest.mark.parametrize("cls", ALL, ids=lambda c: c.__name__)
def test_every_error_class_is_drawn_in_the_docstring_tree(cls: type[e.ToolSelectorError]) -> None:
    assert e.__doc__ is not None
    assert f" {cls.__name__} " in e.__doc__


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda c: c.__name__)
def test_every_concrete_error_maps_to_its_own_row(cls: type[e.ToolSelectorError]) -> None:
    assert cls in ROWS, f"{cls.__name__} has no row in routes/errors.py"
    assert mapping_for(cls("boom")) is ROWS[cls]


def test_a_subclass_row_comes_before_its_base_row() -> None:
    order = [cls for cls, _ in ERROR_TABLE]
    for i, cls in enumerate(order):
        for base in order[:i]:
            assert not issubclass(cls, base), f"{cls.__name__} is shadowed by the earlier row {base.__name__}"
    assert order[-1] is e.ToolSelectorError


def test_codes_and_exit_codes_are_unique_and_exit_codes_are_failures() -> None:
    mappings = [m for _, m in ERROR_TABLE]
    assert len({m.code for m in mappings}) == len(mappings)
    assert len({m.exit_code for m in mappings}) == len(mappings)
    assert all(m.exit_code != 0 for m in mappings)
    assert all(400 <= m.http_status < 600 for m in mappings)


def test_configuration_errors_and_world_errors_get_different_codes() -> None:
    config = {ROWS[cls] for cls in CONFIGURATION} | {ROWS[e.ConfigurationError]}
    world = {ROWS[cls] for cls in WORLD} | {ROWS[e.WorldError]}
    assert {m.code for m in config}.isdisjoint({m.code for m in world})
    assert {m.exit_code for m in config}.isdisjoint({m.exit_code for m in world})
    assert max(m.exit_code for m in config) < min(m.exit_code for m in world)


def test_invalid_input_is_a_client_error_and_a_backend_outage_a_server_error() -> None:
    assert ROWS[e.InvalidInputError].http_status == 422
    assert ROWS[e.NotFoundError].http_status == 404
    assert ROWS[e.BackendUnavailableError].http_status == 503
    assert ROWS[e.InvalidInputError].exit_code == 2


@pytest.mark.parametrize("cls", CONCRETE, ids=lambda c: c.__name__)
def test_the_mcp_text_says_what_went_wrong_then_ends_with_a_next_step(cls: type[e.ToolSelectorError]) -> None:
    error = cls("The index is gone.", hint="Run `tool-selector index build`.")
    text = mcp_text(error)
    mapping: ErrorMapping = mapping_for(error)
    assert text.startswith("The index is gone. Run `tool-selector index build`.")
    assert text.endswith(f"Next step: {mapping.next_step}")
    assert mapping.next_step.endswith(".")
    assert len(mapping.next_step.split()) >= 4


def test_an_error_carries_its_message_hint_and_details() -> None:
    error = e.CatalogFileError("Bad file.", hint="Fix it.", path="/x", line=3)
    assert (error.message, error.hint, error.details) == ("Bad file.", "Fix it.", {"path": "/x", "line": 3})
    assert str(error) == "Bad file. Fix it."
    assert str(e.StoreError("Disk full.")) == "Disk full."
