"""The test folders mirror the packages (tests/tool_selector/search tests tool_selector/search) and are
packages themselves (``tests.tool_selector...``), so that none of them shadows the code it tests:
``import tool_selector`` inside a test is the repository's package, never tests/tool_selector."""

from __future__ import annotations

import importlib

import pytest

from tests.support.paths import ROOT, TESTS

NOT_MIRRORS = {"support", "data", "servers"}  # helpers, test data, the MCP server scripts
PACKAGES = ["tool_selector", "tool_selector.search", "semantic_enrichment", "services", "routes", "eval"]


def _test_folders() -> list[str]:
    return sorted(
        str(folder.relative_to(TESTS))
        for folder in TESTS.rglob("*")
        if folder.is_dir() and "__pycache__" not in folder.parts and any(folder.glob("*.py"))
    )


def test_every_test_folder_with_python_files_is_a_package() -> None:
    missing = [f for f in ["", *_test_folders()] if not (TESTS / f / "__init__.py").is_file()]
    assert missing == [], f"add an __init__.py to: {missing}"


def test_every_test_folder_outside_support_mirrors_a_package_of_the_code() -> None:
    mirrors = [f for f in _test_folders() if f.split("/")[0] not in NOT_MIRRORS]
    assert "tool_selector/search" in mirrors
    strays = [f for f in mirrors if not (ROOT / f / "__init__.py").is_file()]
    assert strays == [], f"test folders without a package of the same path: {strays}"


@pytest.mark.parametrize("name", PACKAGES)
def test_the_code_under_test_is_imported_from_the_repository_not_from_tests(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert module.__file__ == str(ROOT / name.replace(".", "/") / "__init__.py")
