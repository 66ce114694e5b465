"""What an upstream tool's own error (a result with ``isError``) is about, read from its text: the network
(the server could not reach an address), the arguments (they failed the tool's validation), or unknown
(anything else). The sentence the gateway adds after the error, for its kind, is
``messages.tool_failed``; after an unknown one it claims neither.

Small explicit patterns, each taken from a real server's text (in tests/tool_selector/route/
test_failure.py); a text that matches both kinds counts as unknown. Plain rules, no model.
"""

from __future__ import annotations

import re
from typing import Literal

FailureKind = Literal["network", "arguments", "unknown"]
READ_CHARS = 2000  # the start of the error text is where servers say what failed

_NETWORK = re.compile(
    r"due to a connection issue"  # mcp-server-fetch, robots.txt: "Failed to fetch robots.txt ... due to ..."
    r"|\bConnect(Error|Timeout)\b|connection attempts failed"  # httpx (Python servers: mcp-server-fetch)
    r"|connection (refused|reset|timed out)|network is unreachable|no route to host"
    r"|name or service not known|temporary failure in name resolution|nodename nor servname|getaddrinfo"
    r"|\bE(CONNREFUSED|CONNRESET|NOTFOUND|TIMEDOUT|AI_AGAIN|HOSTUNREACH|NETUNREACH)\b"  # Node servers
    r"|\bfetch failed\b",  # Node's fetch (undici)
    re.IGNORECASE,
)
_ARGUMENTS = re.compile(
    r"validation error"  # pydantic (mcp-server-fetch, -time), the SDKs' "Input validation error"
    r"|\binvalid (arguments?|params|parameters?|input|values?|timezone|time format)\b"  # zod, -time
    r"|is a required property|\bfield required\b|missing required (argument|parameter|property)",
    re.IGNORECASE,
)


def failure_kind(text: str) -> FailureKind:
    """The kind of an upstream tool's error text; ``unknown`` unless exactly one kind's pattern matches."""
    start = text[:READ_CHARS]
    network, arguments = bool(_NETWORK.search(start)), bool(_ARGUMENTS.search(start))
    if network == arguments:
        return "unknown"
    return "network" if network else "arguments"
