"""MCP discovery: the listing's rules (pages, names left out or listed twice) against the servers of
``tests/servers/`` in memory (the in-memory connector: the fast loop); against real processes what only
they show: the seven demo servers (PyPI and npm), a crash with its stderr, a hang, a cancelled start,
the child's environment, and the everything server over streamable HTTP."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from services.upstream.connector import StdioHttpConnector
from services.upstream.session import list_all_tools, open_session
from services.write.discovery import DiscoveredServer, discover_one, discover_servers
from tests.servers.paged_server import build_server as paged_server
from tests.support.memory_connector import InMemoryConnector
from tests.support.paths import SERVERS
from tests.support.upstreams import ServerScript
from tool_selector.config.servers import ServerConfig
from tool_selector.core.errors import UpstreamError

EXPECTED_TOOLS = {
    "time": {"get_current_time", "convert_time"},
    "fetch": {"fetch"},
    "git": {"git_status", "git_diff", "git_log", "git_commit", "git_add", "git_checkout"},
    "everything": {"echo", "get-sum", "get-env", "get-tiny-image"},
    "filesystem": {"read_text_file", "read_file", "write_file", "list_directory", "search_files"},
    "memory": {"create_entities", "create_relations", "read_graph", "search_nodes"},
    "sequential-thinking": {"sequentialthinking"},
}


REAL = StdioHttpConnector()
IN_MEMORY = ServerConfig(command="in-memory")  # a name the in-memory connector serves: never started


def paged(name: str, *argv: str) -> InMemoryConnector:
    """``name`` served in memory by tests/servers/paged_server.py with ``argv``; others start for real."""
    return InMemoryConnector({name: lambda: paged_server(list(argv))})


def crashing() -> ServerConfig:
    """tests/servers/crashing_server.py: exits at once with a line on stderr, so it costs no MCP start."""
    return ServerConfig(command=sys.executable, args=[str(SERVERS / "crashing_server.py")])


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def gone(pid: int) -> bool:
    """True when neither the process nor any member of its process group exists any more."""
    for probe in (os.kill, os.killpg):
        try:
            probe(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


@pytest.fixture
def environ(tmp_path: Path) -> dict[str, str]:
    """The real environment, with the demo's folder and memory file under tmp."""
    return dict(os.environ) | {
        "TOOL_SELECTOR_DEMO_ROOT": str(tmp_path),
        "TOOL_SELECTOR_DEMO_MEMORY_FILE": str(tmp_path / "memory.jsonl"),
    }


@pytest.fixture(scope="module")
def everything_http(
    tmp_path_factory: pytest.TempPathFactory, demo_servers: dict[str, ServerConfig]
) -> Iterator[str]:
    """``mcp-server-everything streamableHttp`` on a free port; yields its endpoint url."""
    port = free_port()
    log = tmp_path_factory.mktemp("everything-http") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(demo_servers["everything"].command), "streamableHttp"],
            env=dict(os.environ) | {"PORT": str(port)},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                pass
            try:  # waiting on the process doubles as the pause between attempts
                proc.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                pass
            else:
                pytest.fail(f"the everything server exited at start: {log.read_text(errors='replace')}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the everything server did not listen within 15 s: {log.read_text(errors='replace')}"
                )
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def by_name(found: list[DiscoveredServer]) -> dict[str, DiscoveredServer]:
    return {d.name: d for d in found}


# -- the demo servers ---------------------------------------------------------------------------------


def test_the_seven_demo_servers_are_discovered_concurrently_with_their_real_tools(
    demo_servers: dict[str, ServerConfig], environ: dict[str, str]
) -> None:
    finished: list[str] = []
    found = discover_servers(
        demo_servers,
        connector=REAL,
        concurrency=8,
        timeout_s=30,
        environ=environ,
        on_done=lambda d: finished.append(d.name),
    )
    assert [d.name for d in found] == list(demo_servers)  # input order, whatever the finishing order
    assert sorted(finished) == sorted(demo_servers)
    for d in found:
        assert d.ok, d.error
        assert (d.phase, d.error) == ("done", "")
        names = [t.name for t in d.tools]
        assert EXPECTED_TOOLS[d.name] <= set(names), (d.name, names)
        assert len(names) == len(set(names))
        assert all(t.server == d.name and t.description for t in d.tools)
        assert all(t.input_schema.get("type") == "object" for t in d.tools)
        assert d.server is not None and d.server.name == d.name
        assert d.server.metadata["transport"] == "stdio"
        assert d.server.metadata["steering"] == demo_servers[d.name].steering
        assert 0 < d.seconds < 30


def test_a_demo_server_carries_its_server_info_keywords_instructions_and_tool_annotations(
    demo_servers: dict[str, ServerConfig], environ: dict[str, str]
) -> None:
    configs = {n: demo_servers[n] for n in ("time", "everything")}
    found = by_name(discover_servers(configs, connector=REAL, concurrency=2, timeout_s=30, environ=environ))
    time_server = found["time"].server
    assert time_server is not None
    assert time_server.metadata == {
        "transport": "stdio",
        "server_info": {"name": "mcp-time", "version": time_server.metadata["server_info"]["version"]},
        "steering": "Current time and time zone conversion.",
        "keywords": ["clock", "timezone"],
        "instructions": "",  # it gives none: kept empty, so instructions appearing later are a change
    }
    everything = found["everything"].server
    assert everything is not None
    assert everything.description.startswith("# Everything Server")  # from its instructions
    assert len(everything.description) <= 500
    instructions = everything.metadata["instructions"]  # pinned with the description (server_pins.py)
    assert instructions.startswith("# Everything Server") and 500 < len(instructions) <= 2000
    echo = next(t for t in found["everything"].tools if t.name == "echo")
    assert echo.annotations["readOnlyHint"] is True
    assert echo.input_schema["properties"]["message"]["type"] == "string"


# -- failures -----------------------------------------------------------------------------------------


def test_a_server_that_crashes_at_start_fails_with_its_stderr_and_the_others_still_succeed(
    environ: dict[str, str],
) -> None:
    configs = {"crash": crashing(), "paged": IN_MEMORY}  # a real process exiting at once, one in memory
    found = by_name(
        discover_servers(configs, connector=paged("paged", "3"), concurrency=2, timeout_s=30, environ=environ)
    )
    crash = found["crash"]
    assert not crash.ok and crash.server is None and crash.tools == []
    assert crash.phase == "initialize"
    assert "cannot open the database /nonexistent/db.sqlite (permission denied)" in crash.error
    assert "crashing_server.py" in crash.error  # says what to run by hand
    assert found["paged"].ok and len(found["paged"].tools) == 3


def test_a_hanging_server_times_out_in_its_phase_is_killed_and_does_not_hold_up_the_others(
    demo_servers: dict[str, ServerConfig],
    server_script: ServerScript,
    environ: dict[str, str],
    tmp_path: Path,
) -> None:
    pid_file = tmp_path / "hanging.pid"
    configs = {
        "hang": server_script("hanging_server.py", str(pid_file)),
        "time": demo_servers["time"].model_copy(update={"timeout_s": 30.0}),  # its own deadline wins
    }
    found = by_name(discover_servers(configs, connector=REAL, concurrency=2, timeout_s=2.0, environ=environ))
    hang = found["hang"]
    assert not hang.ok
    assert hang.phase == "initialize"
    assert "timed out after 2.0 s while initializing" in hang.error
    assert "timeout_s" in hang.error and "hanging_server.py" in hang.error
    assert 2.0 <= hang.seconds < 10  # the deadline, plus the SDK's bounded shutdown (stdin, TERM, KILL)
    assert found["time"].ok
    assert gone(int(pid_file.read_text()))


def test_cancelling_an_open_session_terminates_the_server_process(
    server_script: ServerScript, tmp_path: Path
) -> None:
    pid_file, sock_path = tmp_path / "hanging.pid", str(tmp_path / "started.sock")
    config = server_script("hanging_server.py", str(pid_file), sock_path)

    async def main() -> int:
        pid = 0
        async with (
            await anyio.create_unix_listener(sock_path) as listener,
            anyio.create_task_group() as group,
        ):

            async def hold_session() -> None:
                async with open_session("hang", config, environ=os.environ):
                    pytest.fail("a server that never answers cannot be initialized")

            group.start_soon(hold_session)
            with anyio.fail_after(15):
                async with await listener.accept() as stream:  # the server has started
                    pid = int((await stream.receive()).decode())
            assert not gone(pid)
            group.cancel_scope.cancel()
        return pid

    assert gone(anyio.run(main))


def test_a_command_that_does_not_exist_fails_cleanly_at_start(environ: dict[str, str]) -> None:
    config = ServerConfig(command="/nonexistent/bin/mcp-server-nothing", args=["--flag"])
    found = anyio.run(lambda: discover_one("nothing", config, connector=REAL, timeout_s=5, environ=environ))
    assert (found.ok, found.phase) == (False, "start")
    assert "could not be started (No such file or directory)" in found.error
    assert "/nonexistent/bin/mcp-server-nothing --flag" in found.error


def test_a_program_that_prints_something_other_than_mcp_fails_cleanly(environ: dict[str, str]) -> None:
    config = ServerConfig(command=sys.executable, args=["-c", "print('hello, not JSON-RPC')"])
    found = anyio.run(lambda: discover_one("chatty", config, connector=REAL, timeout_s=10, environ=environ))
    assert (found.ok, found.phase) == (False, "initialize")
    assert "closed the connection while initializing" in found.error


def test_a_missing_variable_in_the_configuration_fails_that_server_only(environ: dict[str, str]) -> None:
    script = [str(SERVERS / "env_server.py"), "X"]  # never started: the variable is missing
    config = ServerConfig(command=sys.executable, args=script, env={"X": "${TOOL_SELECTOR_TEST_UNSET}"})
    found = anyio.run(lambda: discover_one("env", config, connector=REAL, timeout_s=10, environ=environ))
    assert (found.ok, found.phase) == (False, "start")
    assert "${TOOL_SELECTOR_TEST_UNSET}" in found.error and "Export TOOL_SELECTOR_TEST_UNSET" in found.error


def test_open_session_raises_an_upstream_error_naming_the_phase_and_the_stderr() -> None:
    async def main() -> None:
        async with open_session("crash", crashing(), environ=os.environ):
            pytest.fail("a crashing server cannot be initialized")

    with pytest.raises(UpstreamError) as caught:
        anyio.run(main)
    assert caught.value.details["phase"] == "initialize"
    assert "permission denied" in caught.value.details["stderr"]


# -- pagination ---------------------------------------------------------------------------------------


def test_tools_listed_in_pages_all_come_back_once_in_order(environ: dict[str, str]) -> None:
    connector = paged("paged", "7")
    found = anyio.run(
        lambda: discover_one("paged", IN_MEMORY, connector=connector, timeout_s=10, environ=environ)
    )
    assert found.ok, found.error
    assert [t.name for t in found.tools] == [f"tool_{i}" for i in range(7)]
    assert found.warnings == []


def test_a_repeated_page_cursor_stops_the_listing_with_a_warning(environ: dict[str, str]) -> None:
    connector = paged("loop", "7", "--repeat-cursor")
    found = anyio.run(
        lambda: discover_one("loop", IN_MEMORY, connector=connector, timeout_s=10, environ=environ)
    )
    assert found.ok, found.error
    assert [t.name for t in found.tools] == ["tool_0", "tool_1", "tool_2", "tool_3"]
    assert found.warnings == ["the server repeated the page cursor '2'; listing stopped there"]


def test_listing_stops_after_the_page_limit_with_a_note() -> None:
    async def main() -> list[str]:
        async with paged("paged", "9").open("paged", IN_MEMORY, environ=os.environ) as upstream:
            listing = await list_all_tools(upstream.session, max_pages=2)
        assert listing.notes == ["the tool list has more than 2 pages; only the first ones were read"]
        return [t.name for t in listing.tools]

    assert anyio.run(main) == ["tool_0", "tool_1", "tool_2", "tool_3"]


# -- environment --------------------------------------------------------------------------------------


def test_variables_in_the_configuration_reach_the_child_and_nothing_else_of_the_environment_does(
    server_script: ServerScript, environ: dict[str, str]
) -> None:
    config = server_script(
        "env_server.py",
        "SHOWN",
        "DEFAULTED",
        "TOOL_SELECTOR_TEST_PRIVATE",
        "PATH",
        env={
            "SHOWN": "token=${TOOL_SELECTOR_TEST_SECRET}",
            "DEFAULTED": "${TOOL_SELECTOR_TEST_UNSET:-fallback}",
        },
    )
    env = environ | {"TOOL_SELECTOR_TEST_SECRET": "s3cr3t", "TOOL_SELECTOR_TEST_PRIVATE": "private"}
    found = anyio.run(lambda: discover_one("env", config, connector=REAL, timeout_s=10, environ=env))
    assert found.ok, found.error
    shown = {t.name: t.description for t in found.tools}
    assert shown["show_SHOWN"] == "token=s3cr3t"
    assert shown["show_DEFAULTED"] == "fallback"
    assert shown["show_TOOL_SELECTOR_TEST_PRIVATE"] == "<TOOL_SELECTOR_TEST_PRIVATE is not set>"
    assert shown["show_PATH"] == env["PATH"]
    assert found.server is not None and found.server.description == "Shows environment variables."


def test_an_open_session_can_call_a_tool_of_the_real_server(demo_servers: dict[str, ServerConfig]) -> None:
    config = demo_servers["everything"].model_copy(update={"env": {"MARKER": "${TOOL_SELECTOR_TEST_MARKER}"}})

    async def main() -> str:
        env = dict(os.environ) | {"TOOL_SELECTOR_TEST_MARKER": "marker-42"}
        with anyio.fail_after(30):
            async with open_session("everything", config, environ=env) as upstream:
                assert upstream.init_result.server_info.name == "mcp-servers/everything"
                result = await upstream.session.call_tool("get-env", {})
        return "".join(getattr(block, "text", "") for block in result.content)

    assert json.loads(anyio.run(main))["MARKER"] == "marker-42"


# -- streamable HTTP ----------------------------------------------------------------------------------


def test_a_streamable_http_server_is_discovered_by_url(everything_http: str, environ: dict[str, str]) -> None:
    found = discover_servers(
        {
            "everything-http": ServerConfig(
                url=everything_http, headers={"X-Test": "${TOOL_SELECTOR_TEST_H:-h}"}
            )
        },
        connector=REAL,
        concurrency=1,
        timeout_s=30,
        environ=environ,
    )[0]
    assert found.ok, found.error
    assert EXPECTED_TOOLS["everything"] <= {t.name for t in found.tools}
    assert found.server is not None
    assert found.server.metadata["transport"] == "http"
    assert found.server.metadata["server_info"]["name"] == "mcp-servers/everything"


def test_an_http_url_with_nothing_listening_fails_cleanly(environ: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/mcp"
    found = anyio.run(
        lambda: discover_one("nobody", ServerConfig(url=url), connector=REAL, timeout_s=10, environ=environ)
    )
    assert (found.ok, found.phase) == (False, "start")
    assert "could not be reached" in found.error and url in found.error


def test_an_http_server_that_answers_404_fails_naming_the_status_and_the_path(
    everything_http: str, environ: dict[str, str]
) -> None:
    url = everything_http.replace("/mcp", "/not-mcp")
    found = anyio.run(
        lambda: discover_one(
            "wrong-path", ServerConfig(url=url), connector=REAL, timeout_s=10, environ=environ
        )
    )
    assert (found.ok, found.phase) == (False, "initialize")
    assert "answered HTTP 404 while initializing" in found.error
    assert "Check the url's path" in found.error and url in found.error


def test_a_tool_the_catalog_cannot_hold_is_left_out_and_named_with_why(environ: dict[str, str]) -> None:
    connector = paged("long", "3", "--long-name")
    found = anyio.run(
        lambda: discover_one("long", IN_MEMORY, connector=connector, timeout_s=10, environ=environ)
    )
    assert found.ok, found.error
    assert [t.name for t in found.tools] == ["tool_0", "tool_1", "tool_2"]
    assert [(out.server, out.tool) for out in found.left_out] == [("long", "x" * 300)]
    assert "at most 300 characters" in found.left_out[0].reason


def test_a_tool_name_listed_twice_keeps_the_first_with_a_warning(environ: dict[str, str]) -> None:
    connector = paged("twice", "3", "--duplicate")
    found = anyio.run(
        lambda: discover_one("twice", IN_MEMORY, connector=connector, timeout_s=10, environ=environ)
    )
    assert found.ok, found.error
    assert [(t.name, t.description) for t in found.tools] == [
        ("tool_0", "Tool number 0."),
        ("tool_1", "Tool number 1."),
        ("tool_2", "Tool number 2."),
    ]
    assert found.warnings == ["the tool name 'tool_0' was listed twice; the first one is kept"]
