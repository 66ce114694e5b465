"""The README's commands are themselves tested: they exist, parse, and CI runs the test command."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CI = ROOT / ".ci" / "run"
EXPECTED = ["bash scripts/demo.sh", "bash scripts/test.sh"]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCRIPT_CALL = re.compile(r"^\s*bash\s+(scripts/[\w.-]+\.sh)\b", re.MULTILINE)


def _commands(block: str) -> list[str]:
    """Non-comment lines, without a leading prompt or a trailing comment."""
    lines = (re.sub(r"\s+#.*$", "", line).strip().removeprefix("$ ") for line in block.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def readme_commands() -> list[str]:
    """The first two commands of the README's first code block(s)."""
    assert README.is_file(), f"{README} is missing; it must open with the demo and test commands"
    commands: list[str] = []
    for block in FENCE.findall(README.read_text(encoding="utf-8")):
        commands.extend(_commands(block))
        if len(commands) >= 2:
            break
    return commands[:2]


def _code_lines(path: Path) -> str:
    return "\n".join(
        line for line in path.read_text(encoding="utf-8").splitlines() if not line.lstrip().startswith("#")
    )


def test_the_readme_opens_with_the_demo_and_the_test_command() -> None:
    assert sorted(readme_commands()) == EXPECTED


@pytest.mark.parametrize("command", EXPECTED)
def test_each_readme_command_is_an_executable_bash_script_that_fails_fast(command: str) -> None:
    assert command in readme_commands()
    script = ROOT / command.split()[1]
    assert script.is_file()
    assert os.access(script, os.X_OK), f"{script} is not executable"
    text = script.read_text(encoding="utf-8")
    assert text.splitlines()[0] in {"#!/usr/bin/env bash", "#!/bin/bash"}
    assert re.search(r"^set -[a-z]*e[a-z]*( -o pipefail| -u)*", _code_lines(script), re.MULTILINE)


@pytest.mark.parametrize(
    "script",
    [
        "scripts/demo.sh",
        "scripts/test.sh",
        "scripts/setup.sh",
        ".ci/run",
        "scripts/calibrate.sh",
        "scripts/make_calibration_sets.sh",
    ],
)
def test_each_script_parses_as_bash(script: str) -> None:
    run = subprocess.run(["bash", "-n", str(ROOT / script)], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("script", ["scripts/demo.sh", "scripts/test.sh", ".ci/run"])
def test_the_scripts_a_script_calls_exist(script: str) -> None:
    called = SCRIPT_CALL.findall(_code_lines(ROOT / script))
    assert called, f"{script} calls no other script"
    for path in called:
        assert (ROOT / path).is_file(), f"{script} calls {path}, which does not exist"


def test_ci_runs_the_readme_test_command() -> None:
    assert CI.is_file()
    assert os.access(CI, os.X_OK)
    assert "scripts/test.sh" in SCRIPT_CALL.findall(_code_lines(CI))


def test_the_test_command_runs_the_linters_the_types_and_the_suite() -> None:
    code = _code_lines(ROOT / "scripts" / "test.sh")
    for tool in ("ruff check", "mypy", "lint-imports", "pytest"):
        assert tool in code, f"scripts/test.sh does not run {tool}"


def test_the_demo_command_defaults_to_the_demo_catalog() -> None:
    code = _code_lines(ROOT / "scripts" / "demo.sh")
    assert "examples/demo-catalog" in code
    assert (ROOT / "examples" / "demo-catalog" / "servers.json").is_file()
    assert (ROOT / "examples" / "demo-catalog" / "tools.json").is_file()
