"""The ownership rules of ../shared/ARCHITECTURE.md that a reader of the code could break unnoticed:
one place has the catalog's SQL, one marks the index current, one builds components from settings,
adapters reach the catalog through services, no import circles, and no package grows past its budget."""

from __future__ import annotations

import ast
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT
from tool_selector.catalog.store import CatalogStore

PACKAGES = ("tool_selector", "semantic_enrichment", "services", "routes", "eval")
CATALOG = ROOT / "tool_selector" / "catalog"
# Lines of Python per package (its own modules, not its subpackages'): files are cut by meaning, and a
# package that outgrows its budget is split by concern, or its budget raised on purpose, in review.
BUDGETS = {
    "tool_selector/core": 1780,  # issue 39 added json_limits (one JSON limit for every door), disk, names;
    # issue 43 the one loader of learned files (learned.py)
    "tool_selector/config": 1520,  # issue 39 added secrets and switched-off client entries; issue 43 a
    # module per settings group and the old flat names read as the grouped ones (settings.RENAMED)
    "tool_selector/embedding": 600,  # issue 44 intent.py (the learned check over the relevance model)
    "tool_selector/catalog": 3500,  # issue 39: choices' principals, JSON limits, live server text, shadows;
    # issue 43 moved the file readers out (catalog_files) and merged the writer with its approvals mixin
    "tool_selector/catalog_files": 760,  # issue 43: the catalog folder and batch formats, parsers without
    # SQL, moved out of the catalog (the write path and the lab read files; neither needs the database)
    "tool_selector/trust": 3500,  # issue 39 added likeness (shadowing judged by the catalog's meaning),
    # issue 44 intent (the learned check of what a text asks the model to do)
    "tool_selector/search": 1050,
    "tool_selector/search/embedded": 1300,
    "tool_selector/search/weaviate": 950,
    "tool_selector/index": 760,  # issue 43: the index mark (mark.py), from services/shared
    "tool_selector/resolve": 2000,  # issue 40: a request beside the query, the tool order; 41 spelling, the
    # capability judge
    "tool_selector/resolve/rerank": 350,
    "tool_selector/route": 930,  # issue 32 remembered; 40 the steps and every sentence of an answer; 41 need;
    # 42 failure: what an upstream tool's error is about, and its sentence; 43 the memory's judge's loader
    "tool_selector/route/arguments": 2100,  # issue 40: the next call's arguments, taken from the request
    "semantic_enrichment": 2100,
    "services/root": 400,  # issue 43: the composition root alone (services/shared dissolved)
    "services/access": 200,  # issue 43: API keys and principals, out of services/shared
    "services/upstream": 600,  # issue 43: the Connector seam, with the session and the launcher moved from
    # services/shared (about 510 lines)
    "services/resolve": 340,  # issue 40 moved the steps of a multi-step request to the route stage
    "services/write": 3150,  # issue 39: the tools a sync leaves out, a servers file saved with its audit;
    # issue 43: the index refresh, the trust policy, @writes and the scan use case, out of services/shared
    "services/api": 900,
    "services/gateway": 2500,  # issue 32 the memory, 39 per principal and the gate, 40 the typed answer
    "services/gateway/memory": 500,  # issue 42: the memory of confirmed choices, moved
    "services/gateway/catalog_query": 760,
    "routes": 1700,
    "routes/cli": 1560,  # one module a command group; issue 31 added `init` and the lazy dispatch; issue 42
    # the client entry that lasts (entry.py)
    "routes/ui": 200,  # issue 42: the API docs page served from the package (apidocs)
    "eval/quality": 2300,  # issue 32 replay, issue 40 the phrasings, readings of a request, tool order
    "eval/fitting": 2400,  # issue 32 added memory_fit, issue 39 shadow_fit, issue 40 phrasings in lodo,
    # issue 41 a judge per dataset
    "eval/bench": 2600,  # issue 39 shadowing; issue 40 the conversation, the agent's driver, fill_arguments
    "eval/console": 800,
    "eval/cli": 1300,  # issue 31 bench-cold-start, 32 replay, 39 shadow-fit, bench-shadowing, 40 drive
    # and --phrasing, 41 the judge, 44 train-intent
    "eval/relevance": 2150,  # issue 41: the capability judge
    "eval/intent": 700,  # issue 44: the scanner's learned check, fine-tuned (examples, model, the run)
}
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
    reach = re.compile(r"\._db\b|\._transaction\(|\.database\.(connection|transaction|execute)\b|\bsqlite3\b")
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
    assert callers == {"services/write/indexing.py", "tool_selector/index/build.py"}


def test_only_the_container_builds_backends_embedders_and_claude_clients() -> None:
    built = re.compile(
        r"(?<!class )"  # a class statement names its bases: it builds nothing
        r"\b(EmbeddedBackend|WeaviateBackend|MiniLMEmbedder|OnnxFileEmbedder|ClaudeClient(\.from_settings)?)\("
    )
    builders = {name(p) for p in modules() if built.search(p.read_text("utf-8"))}
    # the composition root, the client's own constructor from its settings group, and the lab's
    # relevance training, which needs the base model by name whatever the settings configure
    assert builders == {
        "services/root/container.py",
        "semantic_enrichment/claude_client.py",
        "eval/relevance/lodo.py",
        "eval/relevance/ship.py",
        "eval/relevance/cross.py",
        "eval/relevance/tooltext.py",
        "tool_selector/embedding/embedders.py",  # relevance_embedder(), which only the container calls
    }


def packages() -> list[Path]:
    return sorted({p.parent for p in modules() if (p.parent / "__init__.py").exists()})


@pytest.mark.parametrize("package", packages(), ids=name)
def test_no_package_grows_past_its_size_budget(package: Path) -> None:
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in package.glob("*.py"))
    if lines <= 50 and name(package) not in BUDGETS:
        return  # a package of an __init__ only
    assert name(package) in BUDGETS, f"{name(package)} ({lines} lines) has no size budget: give it one"
    budget = BUDGETS[name(package)]
    assert lines <= budget, f"{name(package)} has {lines} lines, over its budget of {budget}: split it"


@pytest.mark.parametrize("path", modules(), ids=name)
def test_every_module_opens_with_what_it_owns(path: Path) -> None:
    """A module's docstring says what it is for: the first thing a newcomer reads of it."""
    if not (path.parent / "__init__.py").exists():
        pytest.skip("a script beside a dataset, not a module of a package")
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring and len(docstring.split()) >= 4, f"{name(path)} does not say what it owns"


def test_no_module_of_tool_selector_lies_outside_a_package_of_its_stage() -> None:
    loose = [p.name for p in (ROOT / "tool_selector").glob("*.py") if p.name != "__init__.py"]
    assert loose == []


PARTS = ("store", "writer")  # the catalog's connection and its one writer


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _handed_to_services(tree: ast.AST) -> set[int]:
    """The ids of the ``.store`` and ``.writer`` nodes that are an argument of a call into services (a
    use case that says in its signature it needs the store or the writer, and gets it from the adapter)."""
    services = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "services"
        for alias in node.names
    }
    handed: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _root_name(node.func) in services:
            arguments = [*node.args, *(k.value for k in node.keywords)]
            handed |= {id(a) for a in arguments if isinstance(a, ast.Attribute) and a.attr in PARTS}
    return handed


def test_adapters_reach_the_catalog_through_services_only() -> None:
    """Routes never use the store or the writer themselves, nor call the catalog's functions (its models
    they may name); they may hand the store or the writer to a use case that takes it."""
    offenders = []
    for path in (ROOT / "routes").rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        handed = _handed_to_services(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in PARTS and id(node) not in handed:
                offenders.append(f"{name(path)}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tool_selector.catalog"):
                functions = [a.name for a in node.names if not a.name[0].isupper()]
                offenders += [f"{name(path)}:{node.lineno} {node.module}.{f}" for f in functions]
    assert offenders == []


def test_inside_the_catalog_no_module_reaches_another_objects_private_connection() -> None:
    reach = re.compile(r"(?<!\bself)\._(db|transaction)\b")
    offenders = [name(p) for p in CATALOG.glob("*.py") if reach.search(p.read_text("utf-8"))]
    assert offenders == []


def test_no_product_package_imports_in_a_circle() -> None:
    """Strongly connected modules of the product's packages, function-level imports included."""
    import grimp

    circles = []
    for package in ("tool_selector", "semantic_enrichment", "services", "routes"):
        graph = grimp.build_graph(package)
        circles += _circles(graph)
    assert circles == []


def _circles(graph: Any) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:  # Tarjan's strongly connected components
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in graph.find_modules_directly_imported_by(module):
            if other not in graph.modules:
                continue
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            part = []
            while True:
                other = stack.pop()
                part.append(other)
                if other == module:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def _whole_container_for_a_part() -> list[str]:
    """Functions outside the composition root that take the whole Container, read at most two of its parts
    and neither pass it on nor keep it: their signature should name those parts instead."""
    found = []
    for package in ("services", "routes", "semantic_enrichment", "tool_selector"):
        for path in sorted((ROOT / package).rglob("*.py")):
            if path.relative_to(ROOT).as_posix() == "services/root/container.py":
                continue
            for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                if any("writes" in ast.unparse(d) for d in fn.decorator_list):
                    continue  # @writes holds the container's writer lock around the use case
                for arg in [*fn.args.args, *fn.args.kwonlyargs]:
                    if arg.annotation is None or ast.unparse(arg.annotation).strip("'\"") != "Container":
                        continue
                    parts, handed = set(), False
                    for node in ast.walk(fn):
                        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                            if node.value.id == arg.arg:
                                parts.add(node.attr)
                        elif isinstance(node, ast.Call):
                            values = [*node.args, *(k.value for k in node.keywords)]
                            handed |= any(isinstance(v, ast.Name) and v.id == arg.arg for v in values)
                        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.Return | ast.Yield):
                            value = node.value
                            handed |= isinstance(value, ast.Name) and value.id == arg.arg
                    if not handed and len(parts) <= 2:
                        where = path.relative_to(ROOT).as_posix()
                        found.append(f"{where}:{fn.lineno} {fn.name} ({arg.arg}: {sorted(parts)})")
    return found


def test_a_use_case_takes_the_parts_it_reads_not_the_whole_container() -> None:
    """Issue 43: a signature says what a use case needs. Taking the Container is for what builds (the
    composition root), passes it on, keeps it, holds its writer lock (@writes), or reads three parts
    or more."""
    assert _whole_container_for_a_part() == []
