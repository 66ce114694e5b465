"""The ``Connector`` contract (services/upstream/connector.py), one suite every connector inherits: the
real one (a tests/servers script as a process: slow) and the in-memory one the fast tests stand on
(tests/support/memory_connector.py). Both must give the same session for the same server, refuse the
same configurations before anything starts, and tell the same phases."""

from __future__ import annotations

import anyio
import pytest

from services.upstream.connector import Connector, StdioHttpConnector
from services.upstream.session import Phase, list_all_tools
from tests.servers.paged_server import build_server as paged_server
from tests.support.memory_connector import InMemoryConnector
from tests.support.upstreams import ServerScript
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import ForbiddenError, InvalidInputError

NAME = "paged"
ARGS = ("5", "--duplicate")


class ConnectorContract:
    """The tests; a subclass gives ``connector`` and ``config`` (a config it serves as NAME)."""

    def test_a_session_is_initialized_and_lists_the_servers_tools_page_by_page(
        self, connector: Connector, config: ServerConfig
    ) -> None:
        phases: list[Phase] = []

        async def main() -> tuple[str, list[str], list[str]]:
            with anyio.fail_after(30):
                async with connector.open(NAME, config, environ={}, on_phase=phases.append) as upstream:
                    listing = await list_all_tools(upstream.session)
                    return (
                        upstream.init_result.server_info.name,
                        [t.name for t in listing.tools],
                        listing.notes,
                    )

        server, tools, notes = anyio.run(main)
        assert server == "paged"
        assert tools == [f"tool_{i}" for i in range(5)]
        assert notes == ["the tool name 'tool_0' was listed twice; the first one is kept"]
        assert phases == ["start", "initialize"]

    def test_an_imported_entry_is_refused_before_anything_starts(
        self, connector: Connector, config: ServerConfig
    ) -> None:
        async def main() -> None:
            async with connector.open(NAME, config.model_copy(update={"origin": "import"}), environ={}):
                pytest.fail("an imported entry the operator did not adopt must not start")

        with pytest.raises(ForbiddenError, match="servers enable paged"):
            anyio.run(main)

    def test_a_variable_the_environment_lacks_is_refused_before_anything_starts(
        self, connector: Connector, config: ServerConfig
    ) -> None:
        phases: list[Phase] = []
        missing = config.model_copy(update={"env": {"TOKEN": "${TOOL_SELECTOR_TEST_UNSET}"}})

        async def main() -> None:
            async with connector.open(NAME, missing, environ={}, on_phase=phases.append):
                pytest.fail("a configuration with a missing variable must not start")

        with pytest.raises(InvalidInputError, match="TOOL_SELECTOR_TEST_UNSET"):
            anyio.run(main)
        assert phases == []


class TestTheRealConnector(ConnectorContract):
    @pytest.fixture
    def connector(self) -> Connector:
        return StdioHttpConnector()

    @pytest.fixture
    def config(self, server_script: ServerScript) -> ServerConfig:
        return server_script("paged_server.py", *ARGS)


class TestTheInMemoryConnector(ConnectorContract):
    @pytest.fixture
    def connector(self) -> Connector:
        return InMemoryConnector({NAME: lambda: paged_server(list(ARGS))})

    @pytest.fixture
    def config(self) -> ServerConfig:
        return ServerConfig(command="in-memory")
