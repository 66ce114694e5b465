"""Token accounting with the Claude tokenizer, offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from routes.cli import app
from services.gateway.service import render_answer
from services.gateway.tokens import (
    account_tokens,
    all_tools_tokens,
    first_answer,
    gateway_definitions_tokens,
    read_queries,
)
from services.resolve.read_path import ReadPath
from services.root.container import Container
from tool_selector.core.tokens import count_tokens


def test_the_vendored_claude_tokenizer_gives_the_counts_of_its_own_published_tests() -> None:
    # the cases of @anthropic-ai/tokenizer's test suite: plain text, NFKC normalising, special tokens
    assert count_tokens("hello world!") == 3
    assert count_tokens("™") == 1 and count_tokens("ϰ") == 1
    assert count_tokens("<EOT>") == 1


def test_each_line_counts_the_definitions_the_call_the_answer_and_the_tools_an_activation_lists(
    demo_container: Container,
) -> None:
    read_path = ReadPath.fixed(demo_container)
    queries = ["list the open issues of my GitHub project", "how do I get red wine out of a carpet"]
    report = account_tokens(read_path, queries)
    own = gateway_definitions_tokens()
    assert report.all_tools_tokens == all_tools_tokens(read_path.snapshot().powers) > 5 * own
    for query, line in zip(queries, report.lines, strict=True):
        decision = read_path.decide(query).decision
        call = json.dumps({"name": "resolve_intent", "arguments": {"query": query}}, ensure_ascii=False)
        answer = first_answer(read_path.snapshot().powers, decision, query)
        expected = own + count_tokens(call) + count_tokens(render_answer(answer.as_json()))
        if decision.status == "activated":
            assert answer.shown  # the tools the answer names are listed: their definitions come on top
            assert line.gateway_tokens > expected
        else:
            assert line.gateway_tokens == expected
        assert line.saved == pytest.approx(1 - line.gateway_tokens / report.all_tools_tokens, abs=1e-4)
    assert report.lines[0].status == "activated" and report.lines[1].status == "not_found"
    assert report.total_all_tools_tokens == 2 * report.all_tools_tokens


def test_the_tokens_command_reads_plain_lines_and_jsonl_and_prints_the_total(
    demo_container: Container, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOL_SELECTOR_DATA_DIR", str(demo_container.settings.data_dir))
    plain = tmp_path / "q.txt"
    plain.write_text("list the open issues of my GitHub project\n\nwhat time is it\n", encoding="utf-8")
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps({"id": "1", "query": "what time is it"}) + "\n", encoding="utf-8")
    assert read_queries(plain) == ["list the open issues of my GitHub project", "what time is it"]
    assert read_queries(jsonl) == ["what time is it"]
    result = CliRunner().invoke(app, ["tokens", str(plain)])
    assert result.exit_code == 0, result.output
    assert "claude (legacy" in result.output and "fewer" in result.output.splitlines()[-1]


def test_a_queries_file_without_queries_is_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "q.jsonl"
    bad.write_text('{"id": "1"}\n', encoding="utf-8")
    result = CliRunner().invoke(app, ["tokens", str(bad)])
    assert result.exit_code == 3 and "without a text 'query' field" in result.output
