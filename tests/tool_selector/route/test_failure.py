"""What an upstream tool's own error is about (tool_selector/route/failure.py), told from texts real
servers returned, and the sentence the gateway adds after it (route/messages.py ``tool_failed``).

The texts were taken from the servers installed by scripts/setup.sh (mcp-server-fetch 2026.10.24,
mcp-server-time, mcp-server-git, @modelcontextprotocol/server-everything 2.0.0); the gateway test
tests/routes/test_gateway_upstream_failures.py gets them live."""

from __future__ import annotations

import pytest

from tool_selector.route.failure import failure_kind
from tool_selector.route.messages import tool_failed

NETWORK = [
    # mcp-server-fetch, default options, http://127.0.0.1:9/ and an unknown host: its robots.txt check
    "Error executing tool fetch: Failed to fetch robots.txt http://127.0.0.1:9/robots.txt due to a "
    "connection issue",
    # mcp-server-fetch --ignore-robots-txt --allow-private-ips, http://127.0.0.1:9/
    "Error executing tool fetch: Failed to fetch http://127.0.0.1:9/: ConnectError('All connection "
    "attempts failed')",
    # the same, http://no-such-host.invalid/
    "Error executing tool fetch: Failed to fetch http://no-such-host.invalid/: ConnectError('[Errno -2] "
    "Name or service not known')",
    # a Node server's fetch (undici) and its socket errors
    "TypeError: fetch failed",
    "Error: connect ECONNREFUSED 127.0.0.1:9",
]
ARGUMENTS = [
    # mcp-server-fetch, no url / not a url / max_length -5 (pydantic)
    "Error executing tool fetch: 1 validation error for fetchArguments\nurl\n  Field required "
    "[type=missing, input_value={}, input_type=dict]",
    "Error executing tool fetch: 1 validation error for fetchArguments\nurl\n  Input should be a valid "
    "URL, relative URL without a base [type=url_parsing, input_value='not a url', input_type=str]",
    # mcp-server-time: an unknown zone, a malformed time
    "Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Mars/Base'",
    "Error executing tool convert_time: Invalid time format. Expected HH:MM [24-hour format]",
    # the everything server (zod), echo without its message
    "MCP error -32602: Input validation error: Invalid arguments for tool echo: Invalid input: expected "
    "string, received undefined at message",
]
UNKNOWN = [
    "Error executing tool git_status: /nonexistent42",  # mcp-server-git, a folder that does not exist
    # mcp-server-fetch refusing a private address: neither the network failed nor an argument's form
    "Error executing tool fetch: Refused to fetch http://127.0.0.1:9/robots.txt: 127.0.0.1 resolves to "
    "127.0.0.1, which is not a public address. Start the server with --allow-private-ips to allow "
    "private, loopback and link-local addresses.",
    "no such tool",
    "",
    # both kinds named at once: no claim either way
    "validation error: connection refused by the validator service",
]


@pytest.mark.parametrize("text", NETWORK)
def test_a_connection_failure_of_a_real_server_is_a_network_error(text: str) -> None:
    assert failure_kind(text) == "network"


@pytest.mark.parametrize("text", ARGUMENTS)
def test_a_validation_error_of_a_real_server_is_an_argument_error(text: str) -> None:
    assert failure_kind(text) == "arguments"


@pytest.mark.parametrize("text", UNKNOWN)
def test_any_other_error_text_is_unknown(text: str) -> None:
    assert failure_kind(text) == "unknown"


def test_only_the_start_of_a_long_error_text_is_read() -> None:
    assert failure_kind("x" * 5000 + " due to a connection issue") == "unknown"


def test_the_sentence_after_a_network_error_says_the_address_was_unreachable_not_to_fix_the_arguments() -> (
    None
):
    said = tool_failed("fetch", "fetch", "network")
    assert "could not reach the network or the address" in said
    assert "other arguments will not help" in said and "Fix the arguments" not in said


def test_the_sentence_after_an_argument_error_says_to_fix_the_arguments() -> None:
    said = tool_failed("time", "get_current_time", "arguments")
    assert "Fix the arguments as it says and call it again" in said and "could not reach" not in said


def test_the_sentence_after_an_unknown_error_claims_neither_cause() -> None:
    said = tool_failed("git", "git_status", "unknown")
    assert "reported the error above" in said
    assert "Fix the arguments" not in said and "could not reach" not in said and "network" not in said
