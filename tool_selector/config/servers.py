"""The operator's server configuration, in the Claude Desktop ``mcpServers`` format.

One JSON file (``Settings.servers_file``)::

    {"mcpServers": {
        "time": {"command": "mcp-server-time", "args": ["--local-timezone", "UTC"], "env": {},
                 "enabled": true, "steering": "Use for time zones.", "keywords": ["clock"]},
        "docs": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}}
    }}

``command``/``args``/``env``/``cwd`` describe a stdio server, ``url``/``headers`` a streamable HTTP
one. ``enabled``, ``steering``, ``keywords`` and ``timeout_s`` are tool-selector's own options; other
clients ignore them. ``${VAR}`` and ``${VAR:-default}`` in env values, headers, args and the url are
taken from the operator's environment when a server is started, so secrets need not sit in the file.

This file is the only source of commands tool-selector ever spawns: nothing read from an MCP server,
a catalog or a query can add one. An entry that arrived in a catalog import (``"origin": "import"``,
through the CLI or the REST API) is never started, whatever its ``enabled`` says, until the operator
adopts it on the machine with ``tool-selector servers enable NAME`` (or an ``admin`` key repeats its
launch line to the REST switch): see ``ServerConfig.runnable``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tool_selector.core.errors import CatalogFileError, InvalidInputError, NotFoundError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited

# 1-100 characters, no space at either end; \Z, not $: "$" also matches before a final newline
NAME_PATTERN = r"\A[A-Za-z0-9](?:[A-Za-z0-9_.@/ -]{0,98}[A-Za-z0-9_.@/-])?\Z"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class ServerConfig(BaseModel):
    """One server entry: stdio (command) or streamable HTTP (url), plus tool-selector's options."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["stdio", "http", "streamable-http"] | None = None
    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    steering: str = Field(default="", max_length=4000, description="shown to the agent on activation")
    keywords: list[str] = Field(default_factory=list, description="extra search keywords for this server")
    timeout_s: float | None = Field(default=None, gt=0, le=600, description="overrides the discovery timeout")
    trust: Literal["tofu", "approve"] | None = Field(
        default=None, description="overrides the `trust.configured` setting for this server"
    )
    origin: Literal["operator", "import"] = Field(
        default="operator",
        description="operator: written on this machine (this file, `servers add`, `servers import`); "
        "import: arrived in a catalog import and is never started until an operator adopts it "
        "(`tool-selector servers enable NAME`)",
    )

    @model_validator(mode="after")
    def _one_transport(self) -> ServerConfig:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either 'command' (a stdio server) or 'url' (a streamable HTTP server)")
        if self.url is not None and not re.match(r"^https?://|^\$\{", self.url):
            raise ValueError("'url' must start with http:// or https://")
        if self.type == "stdio" and self.command is None:
            raise ValueError("type 'stdio' needs a 'command'")
        if self.type in ("http", "streamable-http") and self.url is None:
            raise ValueError(f"type {self.type!r} needs a 'url'")
        return self

    @field_validator("keywords")
    @classmethod
    def _short_keywords(cls, value: list[str]) -> list[str]:
        if len(value) > 50 or any(len(k) > 100 for k in value):
            raise ValueError("at most 50 keywords of at most 100 characters each")
        return [k.strip() for k in value if k.strip()]

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    @property
    def runnable(self) -> bool:
        """Whether sync and the gateway may start it: switched on, and written by the operator (an
        imported entry waits for the operator to adopt it, whatever its ``enabled`` says)."""
        return self.enabled and self.origin == "operator"

    def launch_line(self) -> str:
        """What starting it runs, on one line, unambiguous (shell-quoted): the working folder, the
        environment it adds, the command and its arguments; or the url and the names of its headers."""
        if self.command is None:
            headers = f" (headers: {', '.join(sorted(self.headers))})" if self.headers else ""
            return f"{self.url}{headers}"
        parts = [f"{k}={v}" for k, v in sorted(self.env.items())]
        line = shlex.join(([("env")] if parts else []) + parts + [self.command, *self.args])
        return f"cd {shlex.quote(self.cwd)} && {line}" if self.cwd else line

    def resolved(self, environ: Mapping[str, str]) -> ServerConfig:
        """A copy with ``${VAR}`` references replaced from ``environ``; a missing one is an error."""

        def sub(text: str) -> str:
            def one(match: re.Match[str]) -> str:
                name, default = match.group(1), match.group(2)
                if name in environ:
                    return environ[name]
                if default is not None:
                    return default
                raise InvalidInputError(
                    f"The server configuration refers to ${{{name}}}, which is not set.",
                    hint=f"Export {name} in the environment that runs tool-selector, or write "
                    f"${{{name}:-default}} in the configuration.",
                )

            return _VAR.sub(one, text)

        return self.model_copy(
            update={
                "args": [sub(a) for a in self.args],
                "env": {k: sub(v) for k, v in self.env.items()},
                "headers": {k: sub(v) for k, v in self.headers.items()},
                "url": sub(self.url) if self.url is not None else None,
                "command": sub(self.command) if self.command is not None else None,
            }
        )


class ServersFile(BaseModel):
    model_config = ConfigDict(extra="allow")

    mcpServers: dict[str, ServerConfig] = Field(default_factory=dict)  # noqa: N815 (the file format's key)

    @field_validator("mcpServers")
    @classmethod
    def _names(cls, value: dict[str, ServerConfig]) -> dict[str, ServerConfig]:
        bad = [n for n in value if not re.match(NAME_PATTERN, n)]
        if bad:
            raise ValueError(
                f"server names must be 1-100 letters, digits, '_', '-', '.', '@', '/' or inner spaces, "
                f"starting with a letter or digit: {bad}"
            )
        return value


def _format_errors(exc: ValidationError) -> str:
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or '(top level)'}: {err['msg']}" for err in exc.errors()
    )


def load_servers(path: Path) -> ServersFile:
    """Read the configuration; a missing file is an empty configuration."""
    if not path.exists():
        return ServersFile()
    try:
        text = read_text_limited(path, limit_bytes=DEFAULT_MAX_FILE_BYTES, what="server configuration")
        raw = json.loads(text)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CatalogFileError(
            f"Cannot read the server configuration {path}: {exc}.",
            hint="Fix the JSON (it is the Claude Desktop mcpServers format) or move the file away.",
            path=str(path),
        ) from exc
    try:
        servers = ServersFile.model_validate(raw)
    except ValidationError as exc:
        raise CatalogFileError(
            f"The server configuration {path} is not valid: {_format_errors(exc)}.",
            hint="Fix the entries named above; each needs 'command' or 'url'.",
            path=str(path),
        ) from exc
    base = path.parent.resolve()
    servers.mcpServers = {n: _absolute_command(c, base) for n, c in servers.mcpServers.items()}
    return servers


def save_servers(path: Path, servers: ServersFile) -> None:
    """Write the configuration atomically (a temp file renamed over the old one)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    data = servers.model_dump(mode="json", exclude_defaults=True)
    data["mcpServers"] = {
        name: cfg.model_dump(mode="json", exclude_defaults=True) for name, cfg in servers.mcpServers.items()
    }
    fd, tmp = tempfile.mkstemp(prefix=".servers-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def get_server_config(servers: ServersFile, name: str) -> ServerConfig:
    try:
        return servers.mcpServers[name]
    except KeyError:
        from difflib import get_close_matches

        close = get_close_matches(name, list(servers.mcpServers), n=3, cutoff=0.5)
        raise NotFoundError(
            f"No server named {name!r} is configured." + (f" Closest: {', '.join(close)}." if close else ""),
            hint="See `tool-selector servers list`.",
            name=name,
            closest=close,
        ) from None


class ImportedServers(BaseModel):
    """What ``read_client_config`` found in another client's configuration file."""

    servers: dict[str, ServerConfig] = Field(default_factory=dict)
    skipped: dict[str, str] = Field(default_factory=dict, description="name -> why it was not imported")


def _absolute_command(config: ServerConfig, base: Path) -> ServerConfig:
    """A relative command path (``./bin/x`` or ``node_modules/.bin/x``) is made absolute against the
    configuration file's folder, so the entry still works once copied into another file."""
    cmd = config.command
    if cmd and "/" in cmd and not cmd.startswith(("/", "$", "~")):
        return config.model_copy(update={"command": os.path.normpath(base / cmd)})
    return config


def read_client_config(path: Path, *, limit_bytes: int = DEFAULT_MAX_FILE_BYTES) -> ImportedServers:
    """Servers from a Claude Desktop, Claude Code (``~/.claude.json``, ``.mcp.json``) or Cursor
    (``mcp.json``) configuration of at most ``limit_bytes`` (the ``max_file_bytes`` setting). Entries
    this product cannot run (SSE) are skipped with a reason."""
    try:
        raw = json.loads(read_text_limited(path, limit_bytes=limit_bytes, what="client configuration"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CatalogFileError(
            f"Cannot read {path}: {exc}.", hint="Give the path of a JSON client configuration."
        ) from exc
    if not isinstance(raw, dict):
        raise CatalogFileError(
            f"{path} is not a JSON object.", hint="Give a file with an 'mcpServers' object."
        )
    found: dict[str, Any] = {}
    if isinstance(raw.get("mcpServers"), dict):
        found.update(raw["mcpServers"])
    projects = raw.get("projects")
    if isinstance(projects, dict):  # Claude Code keeps per-project servers in ~/.claude.json
        for project in projects.values():
            if isinstance(project, dict) and isinstance(project.get("mcpServers"), dict):
                for name, entry in project["mcpServers"].items():
                    found.setdefault(name, entry)
    if not found:
        raise CatalogFileError(
            f"{path} has no 'mcpServers' entries.",
            hint="Give a Claude Desktop, Claude Code or Cursor configuration file.",
        )
    result = ImportedServers()
    for name, entry in found.items():
        try:
            result.servers[name] = client_entry_config(name, entry, path.parent.resolve())
        except ValidationError as exc:
            result.skipped[name] = _format_errors(exc)
        except ValueError as exc:
            result.skipped[name] = str(exc)
    return result


def _is_this_gateway(entry: dict[str, Any]) -> bool:
    """An entry that runs ``tool-selector serve`` (directly, or through uvx / pipx / python -m): the
    gateway's own entry in a client's configuration, which must not become one of its servers."""
    words = [entry.get("command")] + (entry["args"] if isinstance(entry.get("args"), list) else [])
    names = [Path(w).name for w in words if isinstance(w, str)]
    return "serve" in names and any(n in ("tool-selector", "tool-selector.exe") for n in names)


def client_entry_config(name: str, entry: Any, base: Path | None = None) -> ServerConfig:
    """One ``mcpServers`` entry of another client's configuration, as tool-selector runs it.

    Client-specific keys are dropped. Raises ValueError saying why it cannot be run (a pydantic
    ValidationError, itself a ValueError, for bad fields). A relative command is made absolute
    against ``base`` when one is given."""
    if not isinstance(entry, dict):
        raise ValueError("the entry is not a JSON object")
    if not re.match(NAME_PATTERN, name):
        raise ValueError(
            "the name is not 1-100 letters, digits, '_', '-', '.', '@', '/' or inner spaces, starting with "
            "a letter or digit; rename the entry"
        )
    if _is_this_gateway(entry):
        raise ValueError("this is the tool-selector gateway itself, not a server it routes to")
    kind = entry.get("type") or entry.get("transport")
    if kind == "sse":
        raise ValueError("SSE servers are not supported; use the server's streamable HTTP url")
    known = set(ServerConfig.model_fields) - {"origin"}  # who wrote an entry is ours to say, not the file's
    fields = {k: v for k, v in entry.items() if k in known}
    if kind in ("streamableHttp", "streamable_http"):
        fields["type"] = "streamable-http"
    config = ServerConfig.model_validate(fields)
    return _absolute_command(config, base) if base is not None else config
