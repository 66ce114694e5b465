"""``tool-selector lab tool-order`` (eval/quality/tool_order.py): how often the first of the right power's
tools is right under several orders, and the order fitted leave-one-dataset-out (each set scored with the
weights chosen on the others only)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from eval.quality.tool_order import GRID, HYBRID, Case, figures, first_tool, leave_one_out, table
from routes.cli import app
from tests.support.paths import DATASETS
from tool_selector.resolve.toolorder import ToolOrder, ToolSignals

WORDY = ToolSignals(cosine=0.0, keyword=1.0, action=0.0, arguments=0.0)  # the words name it
MEANT = ToolSignals(cosine=1.0, keyword=0.0, action=0.0, arguments=0.0)  # the meaning fits it


def _case(family: str, right: str, activated: bool = False) -> Case:
    """A request whose fused order puts the worded tool first; ``right`` is which of the two is gold."""
    return Case(
        set=family,
        family=family,
        id=f"{family}/{right}",
        tools=("s::worded", "s::meant"),
        signals=(WORDY, MEANT),
        rest=("s::other",),
        gold=frozenset({f"s::{right}"}),
        activated=activated,
    )


def test_the_first_tool_is_the_fused_orders_without_weights_and_the_best_scored_with_them() -> None:
    case = _case("a", "meant")
    assert first_tool(case, None) == "s::worded"
    assert first_tool(case, ToolOrder(dense=1.0, action=0.0)) == "s::meant"
    assert first_tool(case, ToolOrder(dense=0.5, action=0.0)) == "s::worded"  # a tie keeps the fused order
    found_none = Case(set="a", family="a", id="x", tools=(), signals=(), rest=("s::other",), gold=frozenset())
    assert first_tool(found_none, ToolOrder()) == "s::other"


def test_each_sets_weights_are_chosen_on_the_other_datasets_only() -> None:
    cases = [_case("a", "meant"), _case("b", "meant"), _case("c", "worded"), _case("c", "worded")]
    chosen = leave_one_out(cases, GRID)
    assert chosen["c"].dense > 0.5  # a and b reward the meaning; c's own cases are not read for c
    assert set(chosen) == {"a", "b", "c"}
    results = figures(cases, {"dense": ToolOrder(dense=1.0, action=0.0)}, GRID)
    assert results["c"].within[HYBRID] == 1.0 and results["c"].within["fitted"] == 0.0
    assert results["a"].within[HYBRID] == 0.0 and results["a"].within["dense"] == 1.0
    assert "| a | 1 | 0.000 | 1.000 |" in table(results, "within")


def test_activations_are_scored_and_never_fitted_on() -> None:
    cases = [
        _case("a", "meant"),
        _case("b", "meant"),
        _case("c", "meant"),
        _case("c", "worded", activated=True),
    ]
    chosen = leave_one_out(cases + [_case("a", "worded", activated=True)] * 5, GRID)
    assert chosen["b"].dense > 0.5  # five activated cases of a rewarding the words changed nothing
    results = figures(cases, {}, GRID)
    assert results["c"].counts == (1, 1) and results["c"].activations[HYBRID] == 1.0
    assert results["c"].activations["fitted"] == 0.0


def test_the_command_prints_both_tables_for_a_real_dataset(tmp_path: Path, real_model: Path) -> None:
    out = tmp_path / "order.md"
    args = ["lab", "tool-order", str(DATASETS / "gateway-demo"), "--enricher", "offline", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "| gateway-demo |" in result.stdout
    assert result.stdout.count("| set | n | hybrid | dense |") == 2
    assert "fitted" not in result.stdout  # one dataset: nothing to leave out
    assert out.read_text().strip() == result.stdout.strip()
