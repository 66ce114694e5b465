"""A server's failure is told without its secrets (issue 39, finding 3): the error names the command or
url with its values hidden, and the server's stderr and the exception's text lose every configured
value, with ``${VAR}`` references resolved from the environment the server was started with. Real
processes that exit at once, and a url nothing listens on."""

from __future__ import annotations

import socket
import sys

import anyio
import httpx2
import pytest
from mcp import MCPError, types

from services.upstream.connector import StdioHttpConnector
from services.upstream.session import open_session, upstream_error
from services.write.discovery import discover_one
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import ForbiddenError

REAL = StdioHttpConnector()
TOKEN = "sk-live-literal-4242"
RESOLVED = "resolved-from-environ-9191"
PASSWORD = "url-password-6464"
QUERY = "query-token-8282"
# exits at once after printing its secrets, as a server does that logs its configuration on failure
PRINTS_ITS_ENV = (
    "import os, sys; "
    "sys.stderr.write('bad token ' + os.environ['API_TOKEN'] + os.environ['REF']); sys.exit(3)"
)


def unused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def test_a_server_that_prints_its_secrets_and_exits_fails_with_an_error_that_holds_none_of_them() -> None:
    config = ServerConfig(
        command=sys.executable,
        args=["-c", PRINTS_ITS_ENV, "--token", "opt-token-7373"],
        env={"API_TOKEN": TOKEN, "REF": "${VAULT_REF}"},
    )
    environ = {"PATH": "/usr/bin:/bin", "VAULT_REF": RESOLVED}
    found = anyio.run(lambda: discover_one("vault", config, connector=REAL, timeout_s=30, environ=environ))
    assert not found.ok and "bad token" in found.error, found.error
    assert TOKEN not in found.error and RESOLVED not in found.error and "opt-token-7373" not in found.error
    assert "--token '***'" in found.error  # what to run by hand, its values hidden


def test_an_http_server_that_cannot_be_reached_is_named_without_its_credentials_or_query_values() -> None:
    url = f"http://deploy:{PASSWORD}@127.0.0.1:{unused_port()}/mcp?token={QUERY}"
    config = ServerConfig(url=url, headers={"Authorization": "Bearer ${DOCS_TOKEN}"})
    environ = {"DOCS_TOKEN": RESOLVED}
    found = anyio.run(lambda: discover_one("docs", config, connector=REAL, timeout_s=30, environ=environ))
    assert not found.ok and "could not be reached" in found.error, found.error
    assert PASSWORD not in found.error and QUERY not in found.error
    assert "http://***:***@127.0.0.1:" in found.error and "/mcp?token=***" in found.error


@pytest.mark.parametrize(
    "exc",
    [
        httpx2.ConnectError(f"cannot connect to https://mcp.test/mcp?key={RESOLVED}"),
        MCPError(types.INTERNAL_ERROR, f"upstream said: invalid key {RESOLVED} / {TOKEN}"),
        RuntimeError(f"Authorization: Bearer {TOKEN}"),
    ],
)
def test_an_upstream_error_scrubs_the_exception_and_the_stderr_of_every_configured_value(
    exc: Exception,
) -> None:
    config = ServerConfig(
        url="https://mcp.test/mcp?key=${DOCS_KEY}", headers={"Authorization": f"Bearer {TOKEN}"}
    )
    error = upstream_error(
        "docs",
        config,
        "call_tool",
        exc,
        stderr=f"using {RESOLVED}\nlogin {TOKEN}",
        environ={"DOCS_KEY": RESOLVED},
    )
    text = str(error) + " " + str(error.details)
    assert RESOLVED not in text and TOKEN not in text, text
    assert "https://mcp.test/mcp?key=${DOCS_KEY}" in error.hint  # the reference, as configured


def test_refusing_to_start_an_imported_entry_names_it_without_its_values() -> None:
    config = ServerConfig(command="server", env={"API_TOKEN": TOKEN}, origin="import")

    async def start() -> None:
        async with open_session("parcel", config, environ={}):
            pass

    with pytest.raises(ForbiddenError) as refused:
        anyio.run(start)
    assert TOKEN not in str(refused.value) and "API_TOKEN=***" in str(refused.value)
