"""No orphans: upstream servers die with the process that started them (services/upstream/lifeline.py),
also when it is killed with SIGKILL and cannot shut them down; tested with real ``tool-selector
sync`` and ``serve`` processes and a server that ignores a closed stdin and SIGTERM, as does its
child. And the launcher in front of a server changes nothing the server sees."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from services.upstream import lifeline
from tests.support.gateway_helpers import CLI, wait_exited
from tests.support.orphans import pid_reports
from tests.support.upstreams import ServerScript
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers

pytestmark = pytest.mark.skipif(not lifeline.available(), reason="the lifeline launcher is Linux only")


def _configure(
    tmp_path: Path, server_script: ServerScript, *args: str, **others: ServerConfig
) -> dict[str, str]:
    """servers.json with the orphaning server (and ``others``); the environment of a CLI process."""
    servers = tmp_path / "servers.json"
    configs = others | {"orphaning": server_script("orphaning_server.py", *args, timeout_s=120)}
    save_servers(servers, ServersFile(mcpServers=configs))
    return os.environ | {
        "TOOL_SELECTOR_SERVERS_FILE": str(servers),
        "TOOL_SELECTOR_SYNC__ENRICHER": "offline",
    }


def _kill_and_expect_gone(process: subprocess.Popen[bytes], pids: set[int]) -> None:
    assert wait_exited(pids, 0) == pids, "the server and its child run when tool-selector is killed"
    process.send_signal(signal.SIGKILL)
    assert process.wait(10) == -signal.SIGKILL
    assert wait_exited(pids, 15) == set(), "the server or its child outlived tool-selector"


def test_a_sync_killed_with_sigkill_takes_the_server_it_started_and_the_servers_child_along(
    tmp_path: Path, server_script: ServerScript
) -> None:
    sock = tmp_path / "started.sock"
    env = _configure(tmp_path, server_script, str(sock))  # never answers: discovery waits on it
    with pid_reports(sock) as reports, (tmp_path / "sync.log").open("wb") as log:
        sync = subprocess.Popen([str(CLI), "sync"], env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        try:
            pids = reports.wait(60, starter=sync)
            _kill_and_expect_gone(sync, pids)
        finally:
            sync.kill()
            sync.wait()


def test_a_gateway_killed_with_sigkill_takes_its_active_power_and_the_powers_child_along(
    tmp_path: Path, server_script: ServerScript, real_model: Path
) -> None:
    sock, weather = tmp_path / "started.sock", server_script("flaky_server.py")
    first = tmp_path / "first.json"  # the weather station only: a catalog and an index for the gateway
    save_servers(first, ServersFile(mcpServers={"weather": weather}))
    env = os.environ | {"TOOL_SELECTOR_SERVERS_FILE": str(first), "TOOL_SELECTOR_SYNC__ENRICHER": "offline"}
    subprocess.run([str(CLI), "sync"], env=env, capture_output=True, check=True)
    env = _configure(tmp_path, server_script, str(sock), "--answer", weather=weather)
    session = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "activate_power", "arguments": {"name": "orphaning"}},
        },
    ]
    with pid_reports(sock) as reports, (tmp_path / "serve.log").open("wb") as log:
        # stdin stays open: the gateway must not get the end of its input, which would stop the power
        serve = subprocess.Popen(
            [str(CLI), "serve"], env=env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=log
        )
        assert serve.stdin is not None
        try:
            serve.stdin.write(b"".join(json.dumps(m).encode() + b"\n" for m in session))
            serve.stdin.flush()
            pids = reports.wait(120, starter=serve)  # sent once the gateway has listed the power's tools
            _kill_and_expect_gone(serve, pids)
        finally:
            serve.kill()
            serve.wait()
            serve.stdin.close()


# -- the launcher changes nothing the server sees --------------------------------------------------


def _launch(*command: str, env: dict[str, str], stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    real, args = lifeline.guarded(command[0], command[1:], env=env, cwd=None)
    return subprocess.run([real, *args], env=env, input=stdin, capture_output=True, check=False, timeout=30)


def test_the_launched_command_gets_exactly_the_environment_the_launcher_was_given() -> None:
    env = {"PATH": os.environ["PATH"], "SHOWN": "token=s3cr3t"}  # no LANG: Python would coerce C to UTF-8
    done = _launch("env", env=env)
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.decode().splitlines()) == ["PATH=" + env["PATH"], "SHOWN=token=s3cr3t"]


def test_stdin_and_stdout_pass_straight_through_and_the_exit_status_is_the_commands() -> None:
    env = {"PATH": os.environ["PATH"]}
    done = _launch("sh", "-c", 'read line; echo "got $line"; echo oops >&2; exit 3', env=env, stdin=b"hi\n")
    assert (done.returncode, done.stdout, done.stderr) == (3, b"got hi\n", b"oops\n")
    killed = _launch(sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)", env=env)
    assert killed.returncode == 128 + signal.SIGTERM


def test_a_command_that_cannot_be_run_raises_before_the_launcher_starts(tmp_path: Path) -> None:
    env = {"PATH": str(tmp_path)}
    (tmp_path / "not-executable").write_text("#!/bin/sh\n", encoding="utf-8")
    with pytest.raises(FileNotFoundError):
        lifeline.guarded("mcp-server-nothing", [], env=env, cwd=None)
    with pytest.raises(PermissionError):
        lifeline.guarded("not-executable", [], env=env, cwd=None)
    with pytest.raises(PermissionError):
        lifeline.guarded("./not-executable", [], env=env, cwd=str(tmp_path))
