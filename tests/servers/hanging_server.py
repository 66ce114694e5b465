"""A stdio "MCP server" that starts and never answers.

``python hanging_server.py PID_FILE`` writes its pid to PID_FILE (atomically, so a reader never sees
half a number), reads stdin until it closes and then blocks anyway, like a server stuck in a call.
Only a signal ends it, which is what the client's shutdown must send.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

if __name__ == "__main__":
    pid_file = Path(sys.argv[1])
    tmp = pid_file.with_suffix(".tmp")
    tmp.write_text(str(os.getpid()), encoding="utf-8")
    os.replace(tmp, pid_file)
    for _line in sys.stdin.buffer:
        pass  # swallow every request, answer none
    threading.Event().wait()  # stdin closed: still do not exit
