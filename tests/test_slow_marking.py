"""The ``slow`` marker comes from the fixtures a test uses (tests/conftest.py): a test is marked when a
slow fixture is in its fixture closure, however it gets there, and only then; ``-m "not slow"`` leaves
it out; and a fast test cannot load the real embedding model behind the marker's back.

Each test runs a small pytest session of its own (pytester) whose conftest takes the hook, the guard
and the list of slow fixtures from tests/conftest.py, with cheap stand-ins for the fixtures."""

from __future__ import annotations

import ast

import pytest

from tests.conftest import SLOW_FIXTURES
from tests.support.paths import TESTS

CONFTEST = """
import pytest
from tests.conftest import SLOW_FIXTURES, pytest_collection_modifyitems, pytest_runtest_protocol

for _name in SLOW_FIXTURES:  # stand-ins: what counts is the name, not the work
    globals()[_name] = pytest.fixture(name=_name)(lambda: None)
"""

INI = """
[pytest]
addopts = --strict-markers -p no:cacheprovider
markers =
    slow: a slow test
"""


def _session(pytester: pytest.Pytester, tests: str) -> None:
    pytester.makeconftest(CONFTEST)
    pytester.makeini(INI)
    pytester.makepyfile(test_sample=tests)


SAMPLE = """
import pytest

def test_pure_logic():
    pass

def test_with_the_model(embedder):
    pass

@pytest.fixture
def catalog_on_the_model(embedder):
    return None

@pytest.fixture
def deeper(catalog_on_the_model, tmp_path):
    return None

def test_through_two_fixtures(deeper):
    pass

@pytest.mark.usefixtures("real_model")
def test_declaring_that_the_product_loads_the_model():
    pass

@pytest.mark.parametrize("n", [1, 2])
def test_parametrized_on_real_servers(server_script, n):
    pass

def test_with_the_tmp_path_only(tmp_path):
    pass
"""


def test_a_test_is_marked_slow_exactly_when_a_slow_fixture_is_in_its_closure(
    pytester: pytest.Pytester,
) -> None:
    _session(pytester, SAMPLE)
    fast = pytester.runpytest("-m", "not slow", "-v")
    fast.assert_outcomes(passed=2, deselected=5)
    fast.stdout.fnmatch_lines(["*test_pure_logic PASSED*", "*test_with_the_tmp_path_only PASSED*"])
    slow = pytester.runpytest("-m", "slow", "-v")
    slow.assert_outcomes(passed=5, deselected=2)
    slow.stdout.fnmatch_lines(
        [
            "*test_with_the_model PASSED*",
            "*test_through_two_fixtures PASSED*",
            "*test_declaring_that_the_product_loads_the_model PASSED*",
            "*test_parametrized_on_real_servers?1? PASSED*",
            "*test_parametrized_on_real_servers?2? PASSED*",
        ]
    )


def test_the_marker_names_the_slow_fixtures_that_put_it_there(pytester: pytest.Pytester) -> None:
    _session(
        pytester,
        """
def test_many(deeper, server_script):
    pass

import pytest

@pytest.fixture
def deeper(embedder, real_model):
    return None
""",
    )
    items, _ = pytester.inline_genitems()
    (item,) = items
    marker = item.get_closest_marker("slow")
    assert marker is not None
    assert marker.kwargs == {"fixtures": ("embedder", "real_model", "server_script")}


def test_a_fast_test_that_builds_the_real_model_fails_naming_the_fixture_to_request(
    pytester: pytest.Pytester,
) -> None:
    _session(
        pytester,
        """
import pytest

from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.core.errors import EmbedderError

# an engine that does not exist: the real constructor refuses it at once, without loading anything

def test_sneaks_the_model_in(tmp_path):
    MiniLMEmbedder(tmp_path, engine="telepathic")

@pytest.fixture(scope="module")
def model_of_the_module(tmp_path_factory):
    return MiniLMEmbedder(tmp_path_factory.mktemp("m"), engine="telepathic")

def test_through_a_module_fixture(model_of_the_module):
    pass

def test_declares_it(real_model, tmp_path):
    with pytest.raises(EmbedderError, match="Unknown embedding engine"):
        MiniLMEmbedder(tmp_path, engine="telepathic")
""",
    )
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1, errors=1)
    result.stdout.fnmatch_lines(["E *loads the real embedding model without declaring it*`real_model`*"])


def test_every_declared_slow_fixture_is_a_fixture_of_the_root_conftest() -> None:
    """So that renaming one cannot silently move its tests into the fast loop."""
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    fixtures = {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and any("fixture" in ast.unparse(decorator) for decorator in node.decorator_list)
    }
    assert set(SLOW_FIXTURES) <= fixtures, set(SLOW_FIXTURES) - fixtures
    assert all(reason.strip() for reason in SLOW_FIXTURES.values())
