"""The ownership rules of ../shared/ARCHITECTURE.md that a reader of the code could break unnoticed:
one place has the catalog's SQL, one marks the index current, one builds components from settings,
and no module grows past what one reader holds in mind."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT
from tool_selector.catalog.store import CatalogStore

PACKAGES = ("tool_selector", "semantic_enrichment", "services", "routes", "eval")
CATALOG = ROOT / "tool_selector" / "catalog"
MAX_LINES = 400
# data tables, not logic: their length is their content
DATA_TABLES = {"semantic_enrichment/lexicon.py"}
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|CREATE TABLE|ALTER TABLE|PRAGMA)\b")


def modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py"))


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def string_constants(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
    ]


def test_only_the_catalog_package_holds_sql() -> None:
    outside = [p for p in modules() if CATALOG not in p.parents]
    found = {
        name(p): [s for s in string_constants(p) if SQL.search(s) and "FROM" in s.upper()] for p in outside
    }
    assert {k: v for k, v in found.items() if v} == {}


def test_no_code_outside_the_catalog_package_reaches_the_store_connection() -> None:
    reach = re.compile(r"\._db\b|\._transaction\(|\bsqlite3\b")
    offenders = [
        name(p) for p in modules() if CATALOG not in p.parents and reach.search(p.read_text("utf-8"))
    ]
    assert offenders == []
    assert not hasattr(CatalogStore, "db") and not hasattr(CatalogStore, "transaction")


def test_only_refresh_index_indexes_and_marks_the_index_current() -> None:
    callers = {
        name(p)
        for p in modules()
        if re.search(r"\bindex_catalog\(|set_meta\(\s*container\.index_key", p.read_text("utf-8"))
    }
    assert callers == {"services/shared/indexing.py", "tool_selector/index/build.py"}


def test_only_the_container_builds_backends_embedders_and_claude_clients() -> None:
    built = re.compile(
        r"(?<!class )"  # a class statement names its bases: it builds nothing
        r"\b(EmbeddedBackend|WeaviateBackend|MiniLMEmbedder|ClaudeClient(\.from_settings)?)\("
    )
    builders = {name(p) for p in modules() if built.search(p.read_text("utf-8"))}
    # the composition root, and the client's own constructor from its settings group
    assert builders == {"services/shared/container.py", "semantic_enrichment/claude_client.py"}


@pytest.mark.parametrize("path", modules(), ids=name)
def test_no_module_is_longer_than_one_reader_holds_in_mind(path: Path) -> None:
    if name(path) in DATA_TABLES:
        pytest.skip("a data table")
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name(path)} has {lines} lines: split it by concern"
