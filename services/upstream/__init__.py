"""Upstream MCP servers: the ``Connector`` seam that opens a client session with a configured server
(connector.py), the stdio / streamable HTTP session behind the default one (session.py) and the launcher
that makes a stdio server die with the process that started it (lifeline.py)."""
