"""A stdio MCP server that would outlive whoever started it, and its child with it.

``python orphaning_server.py SOCKET [--answer]`` ignores SIGTERM, starts a child that ignores it too
(like an npm server's node, or a shell wrapper's command), then sends "PID CHILD_PID" to SOCKET (a
Unix socket path) so that a test can wait for the start as an event. Without ``--answer`` it never
answers (a server stuck in its start); with it, it answers ``initialize`` and ``tools/list`` (one
tool) and sends the pids only after the tool list, when its client has a working session. Either
way it reads stdin until it closes and then does not exit: only SIGKILL ends it. Plain JSON-RPC, no
mcp import, so that it starts in milliseconds.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading

CHILD = "import threading; threading.Event().wait()"  # blocks until killed
TOOL = {"name": "linger", "description": "Does nothing.", "inputSchema": {"type": "object"}}


def report(sock_path: str, child: subprocess.Popen[bytes]) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(sock_path)
        sock.sendall(f"{os.getpid()} {child.pid}".encode())


def answer(request: dict[str, object]) -> dict[str, object] | None:
    if request.get("method") == "initialize":
        params = request.get("params")
        version = params.get("protocolVersion") if isinstance(params, dict) else None
        result: dict[str, object] = {
            "protocolVersion": version or "2025-06-18",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "orphaning", "version": "1"},
        }
    elif request.get("method") == "tools/list":
        result = {"tools": [TOOL]}
    else:
        return None
    return {"jsonrpc": "2.0", "id": request.get("id"), "result": result}


def main(sock_path: str, answering: bool) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # inherited by the child across exec
    child = subprocess.Popen([sys.executable, "-S", "-c", CHILD])
    reported = not answering
    if not answering:
        report(sock_path, child)
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        response = answer(request) if isinstance(request, dict) else None
        if response is not None:
            sys.stdout.write(json.dumps(response) + "\n")
            sys.stdout.flush()
            if request.get("method") == "tools/list" and not reported:
                report(sock_path, child)
                reported = True
    threading.Event().wait()  # stdin closed: still do not exit


if __name__ == "__main__":
    main(sys.argv[1], "--answer" in sys.argv[2:])
