"""A stdio "MCP server" that fails at start: one line on stderr, exit status 1, nothing on stdout."""

from __future__ import annotations

import sys

MESSAGE = "crashing_server: cannot open the database /nonexistent/db.sqlite (permission denied)"

if __name__ == "__main__":
    print(MESSAGE, file=sys.stderr, flush=True)
    sys.exit(1)
