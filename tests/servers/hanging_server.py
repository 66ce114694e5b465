"""A stdio "MCP server" that starts and never answers.

``python hanging_server.py PID_FILE [SOCKET]`` writes its pid to PID_FILE and, when SOCKET (a Unix
socket path) is given, also sends it there, so a test can wait for the start as an event. Then it
reads stdin until it closes and blocks anyway, like a server stuck in a call: only a signal ends
it, which is what the client's shutdown must send.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path

if __name__ == "__main__":
    pid = str(os.getpid())
    Path(sys.argv[1]).write_text(pid, encoding="utf-8")
    if len(sys.argv) > 2:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.connect(sys.argv[2])
            sock.sendall(pid.encode())
    for _line in sys.stdin.buffer:
        pass  # swallow every request, answer none
    threading.Event().wait()  # stdin closed: still do not exit
