"""The README and docs/ are themselves tested: the README opens with the two commands that set up and
run everything, those commands exist and CI runs the test one; every link in the docs resolves, every
`tool-selector ...` command they show exists with the options they give it, and every setting they
name is in the generated settings reference (the generated references themselves are checked in
test_docs_reference.py)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.gen_docs import gen_docs
from tests.support.paths import ROOT

README = ROOT / "README.md"
DOCS = ROOT / "docs"
REFERENCE = DOCS / "reference"
CI = ROOT / ".ci" / "run"
EXPECTED = ["bash scripts/demo.sh", "bash scripts/test.sh"]
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
SCRIPT_CALL = re.compile(r"^\s*bash\s+(scripts/[\w.-]+\.sh)\b", re.MULTILINE)
HAND_WRITTEN = sorted([README, *(p for p in DOCS.rglob("*.md") if REFERENCE not in p.parents)])
ALL_PAGES = sorted([README, *DOCS.rglob("*.md")])


def _page_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


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
        "scripts/vendor_swagger_ui.sh",
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


# -- docs/ --------------------------------------------------------------------------------------------

INLINE_CODE = re.compile(r"(`+)(.+?)\1", re.DOTALL)
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def _prose(text: str) -> str:
    """The page without its code blocks and code spans (links there are not links)."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def _code(text: str) -> list[str]:
    """Every code block line (continuation lines joined) and every code span of a page."""
    pieces: list[str] = []
    for block in FENCE.findall(text):
        pieces += re.sub(r"\\\n\s*", " ", block).splitlines()
    pieces += [" ".join(m.group(2).split()) for m in INLINE_CODE.finditer(FENCE.sub("", text))]
    return pieces


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of a page (a repeated heading gets -1, -2, ...)."""
    seen: dict[str, int] = {}
    for title in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.replace("`", "").strip().lower()).replace(" ", "-")
        seen[slug] = seen.get(slug, -1) + 1
        if seen[slug]:
            seen[f"{slug}-{seen[slug]}"] = 0
    return set(seen)


def test_the_docs_pages_the_readme_promises_exist_and_the_readme_links_them() -> None:
    readme = README.read_text(encoding="utf-8")
    for page in ("user-guide.md", "operator-guide.md", "reference/cli.md", "reference/settings.md"):
        assert (DOCS / page).is_file(), f"docs/{page} is missing"
        assert f"(docs/{page}" in readme, f"the README does not link docs/{page}"


def test_the_readme_stays_short_and_leaves_the_details_to_docs() -> None:
    lines = README.read_text(encoding="utf-8").count("\n")
    assert lines < 200, f"README.md has {lines} lines: move details into docs/"


@pytest.mark.parametrize("page", ALL_PAGES, ids=_page_id)
def test_every_link_in_a_page_resolves_to_a_file_and_heading(page: Path) -> None:
    broken = []
    for target in LINK.findall(_prose(page.read_text(encoding="utf-8"))):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        path_part, _, anchor = target.partition("#")
        linked = (page.parent / path_part).resolve() if path_part else page
        if not linked.exists():
            broken.append(f"{target}: no file {linked}")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"broken links in {_page_id(page)}:\n" + "\n".join(broken)


COMMAND_START = re.compile(
    r"(?:^|[|;(]|&&|\$)\s*(?:[A-Za-z_]\w*=\S*\s+)*(?:(?:[A-Za-z_]\w*=)?\S*/)?tool-selector[ \t]+(?=[a-z])"
)


def _shown_commands(line: str) -> list[list[str]]:
    """The words of each `tool-selector ...` command in a line of code, up to a pipe, `;`, `&&`,
    a comment or a redirection."""
    commands = []
    for match in COMMAND_START.finditer(line):
        rest = re.split(r"\s[|;#>]|&&|\s2>|[)`]", line[match.end() :])[0]
        commands.append([w.strip("[],.:") for w in rest.split()])
    return commands


@pytest.mark.parametrize("page", ALL_PAGES, ids=_page_id)
def test_every_tool_selector_command_a_page_shows_exists_with_its_options(page: Path) -> None:
    known = gen_docs().cli_commands()
    wrong = []
    for piece in _code(page.read_text(encoding="utf-8")):
        for shown in _shown_commands(piece):
            path, words = ("tool-selector",), shown
            while words and (*path, words[0]) in known:
                path, words = (*path, words[0]), words[1:]
            if path == ("tool-selector",):
                wrong.append(f"{piece!r}: no command tool-selector {words[0] if words else ''}")
                continue
            options = words[: words.index("--")] if "--" in words else words
            for option in (w.split("=")[0] for w in options if re.fullmatch(r"--[a-z][\w-]*(=.*)?", w)):
                if option not in known[path]:
                    wrong.append(f"{piece!r}: {' '.join(path)} has no option {option}")
    assert not wrong, f"{_page_id(page)} shows commands the CLI does not have:\n" + "\n".join(wrong)


def test_the_docs_show_the_main_commands_so_the_command_check_is_not_empty() -> None:
    shown = {
        tuple(words[:2])
        for page in HAND_WRITTEN
        for piece in _code(page.read_text(encoding="utf-8"))
        for words in _shown_commands(piece)
    }
    for command in (("sync",), ("serve",), ("api",), ("index", "rebuild"), ("keys", "create")):
        assert any(s[: len(command)] == command for s in shown), f"no page shows tool-selector {command}"


@pytest.mark.parametrize("page", HAND_WRITTEN, ids=_page_id)
def test_every_environment_variable_a_page_names_is_in_the_settings_reference(page: Path) -> None:
    reference = (REFERENCE / "settings.md").read_text(encoding="utf-8")
    named = set(re.findall(r"\bTOOL_SELECTOR_[A-Z0-9_]*[A-Z0-9]\b", page.read_text(encoding="utf-8")))
    missing = sorted(n for n in named if f"`{n}`" not in reference)
    assert not missing, f"{_page_id(page)} names settings the settings reference does not list: {missing}"


# names shaped like a grouped setting that are something else: a lock file, an audit action
NOT_SETTINGS = {"sync.lock", "sync.left_out"}


@pytest.mark.parametrize("page", HAND_WRITTEN, ids=_page_id)
def test_every_grouped_setting_a_page_names_exists(page: Path) -> None:
    module = gen_docs()
    entries = module.settings_entries(*module.project_settings())
    groups = {s.path[0] for s, is_group in entries if is_group}
    settings = {s.dotted for s, _ in entries}
    named = {
        c
        for c in _code(page.read_text(encoding="utf-8"))
        if re.fullmatch(r"[a-z_]+\.[a-z_]+", c) and c.split(".")[0] in groups
    } - NOT_SETTINGS
    assert not named - settings, (
        f"{_page_id(page)} names settings that do not exist: {sorted(named - settings)}"
    )


@pytest.mark.parametrize("page", HAND_WRITTEN, ids=_page_id)
def test_no_hand_written_page_keeps_its_own_settings_table(page: Path) -> None:
    rows = re.findall(
        r"^\|\s*`(?:TOOL_SELECTOR_|WEAVIATE_|ANTHROPIC_)[A-Z0-9_]+`", page.read_text(encoding="utf-8"), re.M
    )
    assert not rows, (
        f"{_page_id(page)} keeps a settings table by hand; link docs/reference/settings.md instead"
    )
