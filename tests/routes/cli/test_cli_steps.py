"""`tool-selector resolve` on a request of several steps (issue 16), through Typer's CliRunner over the
gateway-demo catalog (time, fetch, git, ...) imported and indexed by the CLI with the real model.

The last test is end to end: the real resolver splits a real two-step request; the others put the
parts in by hand at the service layer, to pin each answer shape."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from routes.cli import app
from tests.support.paths import GATEWAY_DEMO
from tool_selector.core.models import QueryPart, Resolution
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

REQUEST = "get the current time in Tokyo and then fetch the page https://example.com and summarise it"


def _invoke(args: Sequence[str], env: dict[str, str]) -> Result:
    return CliRunner().invoke(app, list(args), env=env)


def _json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def cli_env(tmp_path_factory: pytest.TempPathFactory, real_model: Path) -> dict[str, str]:
    """A data folder where the CLI itself imported the gateway-demo catalog and built the index."""
    env = {
        "TOOL_SELECTOR_DATA_DIR": str(tmp_path_factory.mktemp("cli-steps")),
        "TOOL_SELECTOR_CACHE_DIR": str(real_model),
    }
    _json(_invoke(["catalog", "import", str(GATEWAY_DEMO), "--approve"], env))
    _json(_invoke(["index", "build"], env))
    return env


def test_resolve_prints_each_steps_powers_and_tools_for_a_multi_step_request(
    cli_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    original = Resolver.resolve
    parts = [
        QueryPart(text="get the current time in Tokyo", powers=["time"], tools=["time::get_current_time"]),
        QueryPart(text="fetch the page https://example.com summarise it", powers=["fetch", "gone"]),
    ]

    def resolve(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        return original(self, query, terms, **kwargs).model_copy(update={"parts": parts, "confidence": 0.5})

    monkeypatch.setattr(Resolver, "resolve", resolve)
    decision = _json(_invoke(["resolve", REQUEST], cli_env))
    assert decision["parts"] == [
        {"step": "get the current time in Tokyo", "powers": ["time"], "tools": ["time::get_current_time"]},
        {"step": "fetch the page https://example.com summarise it", "powers": ["fetch"], "tools": []},
    ]
    assert "step 1: 'time'; step 2: 'fetch'" in decision["message"]
    explained = _json(_invoke(["resolve", REQUEST, "--explain"], cli_env))
    assert [p["powers"] for p in explained["resolution"]["parts"]] == [["time"], ["fetch"]]


def test_resolve_prints_no_parts_for_a_one_step_request(cli_env: dict[str, str]) -> None:
    decision = _json(_invoke(["resolve", "what time is it in Tokyo"], cli_env))
    assert "parts" not in decision and "steps" not in decision["message"]


def test_a_real_two_step_request_names_time_for_its_first_step_and_fetch_for_its_second(
    cli_env: dict[str, str],
) -> None:
    """No monkeypatching: the real model and resolver find each step's power."""
    decision = _json(_invoke(["resolve", REQUEST], cli_env))
    assert decision["status"] != "not_found", decision
    steps = decision.get("parts")
    assert steps is not None, f"no parts\n{decision}"
    assert len(steps) == 2 and "Tokyo" in steps[0]["step"] and "example.com" in steps[1]["step"]
    assert steps[0]["powers"][0] == "time" and steps[0]["tools"][0].startswith("time::")
    assert steps[1]["powers"][0] == "fetch" and steps[1]["tools"][0].startswith("fetch::")
    assert "step 1: 'time'; step 2: 'fetch'" in decision["message"]
