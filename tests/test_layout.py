"""The test folders mirror the packages (tests/tool_selector/search tests tool_selector/search) and are
packages themselves (``tests.tool_selector...``), so that none of them shadows the code it tests:
``import tool_selector`` inside a test is the repository's package, never tests/tool_selector.

Each test module sits in the folder of the package it tests, read from what it imports: the code's
modules it imports itself, through the helpers of tests/support it imports, or through its folder's
conftest.py. Running the ``tool-selector`` command (tests.support's ``CLI``) counts as using routes and
routes/cli both (the process may be the REST API or the gateway as well as a command), and loading a
dataset's script (tests.support.scripts) as using eval, whose datasets folder is no package. Two rules
follow:

- a test module uses a module of its own folder's package (not only of a package below it): nothing
  sits flat in tests/tool_selector or tests/services, whose code lives in subpackages;
- a test module whose uses of the code under its folder all fall in one subpackage sits in that
  subpackage's folder (a test of routes/cli alone is in tests/routes/cli, not tests/routes).

The modules at the top of tests/ check the repository as a whole (architecture, layout, docs, the slow
marker)."""

from __future__ import annotations

import ast
import importlib
from functools import cache
from pathlib import Path

import pytest

from tests.support.paths import ROOT, TESTS

NOT_MIRRORS = {"support", "data", "servers"}  # helpers, test data, the MCP server scripts
PACKAGES = ["tool_selector", "tool_selector.search", "semantic_enrichment", "services", "routes", "eval"]
CODE = ("tool_selector", "semantic_enrichment", "services", "routes", "eval")

# Test modules whose subject their imports do not show: each drives a process or a browser.
DRIVEN = {
    "eval/fitting/test_train_ranker.py": "`lab train-ranker` (eval/fitting/train_ranker.py) through the CLI",
}

# Left where they are for the steps of issue 43 that rewrite them at the same time: they move with
# the code they test once those steps are in.
LEFT_FOR_OTHER_STEPS: dict[str, str] = {}  # a test module a step in flight still moves: none


def _test_folders() -> list[str]:
    return sorted(
        str(folder.relative_to(TESTS))
        for folder in TESTS.rglob("*")
        if folder.is_dir() and "__pycache__" not in folder.parts and any(folder.glob("*.py"))
    )


def _mirror_modules() -> list[str]:
    return sorted(
        str(path.relative_to(TESTS))
        for path in TESTS.rglob("test_*.py")
        if len(path.relative_to(TESTS).parts) > 1 and path.relative_to(TESTS).parts[0] not in NOT_MIRRORS
    )


def _is_package(dotted: str) -> bool:
    return (ROOT / dotted.replace(".", "/") / "__init__.py").is_file()


def _named(module: str, names: list[str]) -> set[str]:
    """``from module import a, b``: the submodules among a and b, else the module itself."""
    folder = ROOT / module.replace(".", "/")
    found = {f"{module}.{name}" for name in names if _is_package(f"{module}.{name}")}
    found |= {f"{module}.{name}" for name in names if (folder / f"{name}.py").is_file()}
    return found or {module}


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """The modules of the code and the helpers of tests/ that the file imports (anywhere in it)."""
    code: set[str] = set()
    helpers: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [alias.name for alias in node.names]
            if node.module.split(".")[0] in CODE:
                code |= _named(node.module, names)
            elif node.module.startswith("tests.support"):
                helpers.add(node.module)
                code |= {"routes", "routes.cli"} if "CLI" in names else set()  # runs `tool-selector`
                code |= {"eval"} if "load_script" in names else set()  # a script of eval/datasets
        elif isinstance(node, ast.Import):
            code |= {alias.name for alias in node.names if alias.name.split(".")[0] in CODE}
    return code, helpers


@cache
def _through_helpers(helper: str) -> frozenset[str]:
    code, helpers = _imports(ROOT / (helper.replace(".", "/") + ".py"))
    for deeper in helpers:
        code |= _through_helpers(deeper)
    return frozenset(code)


def _uses(relative: str) -> set[str]:
    """The modules of the code the test module at tests/``relative`` uses, itself or through helpers."""
    reached, helpers = _imports(TESTS / relative)
    for helper in helpers:
        reached |= _through_helpers(helper)
    conftest = (TESTS / relative).parent / "conftest.py"
    if conftest.is_file():
        code, helpers = _imports(conftest)
        reached |= code.union(*(_through_helpers(helper) for helper in helpers))
    return reached


def _package_of(module: str) -> str:
    return module if _is_package(module) else module.rpartition(".")[0]


def test_every_test_folder_with_python_files_is_a_package() -> None:
    missing = [f for f in ["", *_test_folders()] if not (TESTS / f / "__init__.py").is_file()]
    assert missing == [], f"add an __init__.py to: {missing}"


def test_every_test_folder_outside_support_mirrors_a_package_of_the_code() -> None:
    mirrors = [f for f in _test_folders() if f.split("/")[0] not in NOT_MIRRORS]
    assert {"tool_selector/search/embedded", "services/gateway", "routes/cli", "eval/quality"} <= set(mirrors)
    strays = [f for f in mirrors if not (ROOT / f / "__init__.py").is_file()]
    assert strays == [], f"test folders without a package of the same path: {strays}"


def test_every_test_module_uses_a_module_of_its_own_folders_package() -> None:
    misplaced = []
    for relative in _mirror_modules():
        if relative in DRIVEN or relative in LEFT_FOR_OTHER_STEPS:
            continue
        package = str(Path(relative).parent).replace("/", ".")
        reached = _uses(relative)
        if not any(_package_of(module) == package for module in reached):
            below = sorted(m for m in reached if m.startswith(f"{package}."))
            misplaced.append(f"{relative} (of {package} it uses only {below or 'nothing'})")
    assert misplaced == [], "move each into the folder of the package it tests: " + "; ".join(misplaced)


def test_a_test_module_that_uses_one_subpackage_alone_sits_in_its_folder() -> None:
    flat = []
    for relative in _mirror_modules():
        if relative in LEFT_FOR_OTHER_STEPS:
            continue
        package = str(Path(relative).parent).replace("/", ".")
        reached = _uses(relative)
        under = {_package_of(m) for m in reached if m == package or m.startswith(f"{package}.")}
        if package in under or not under:
            continue
        subpackages = {".".join(p.split(".")[: package.count(".") + 2]) for p in under}
        if len(subpackages) == 1:
            flat.append(f"{relative} -> tests/{subpackages.pop().replace('.', '/')}/")
    assert flat == [], "move each into the folder of the one subpackage it tests: " + "; ".join(flat)


def test_every_listed_exception_is_a_test_module_that_still_exists() -> None:
    listed = [*DRIVEN, *LEFT_FOR_OTHER_STEPS]
    assert [name for name in listed if not (TESTS / name).is_file()] == []


@pytest.mark.parametrize("name", PACKAGES)
def test_the_code_under_test_is_imported_from_the_repository_not_from_tests(name: str) -> None:
    module = importlib.import_module(name)
    assert module.__file__ is not None
    assert module.__file__ == str(ROOT / name.replace(".", "/") / "__init__.py")
