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

import contextlib
import json
import os
import re
import shlex
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tool_selector.config import secrets
from tool_selector.core.errors import CatalogFileError, InvalidInputError, NotFoundError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_text_limited

# 1-100 characters, no space at either end; \Z, not $: "$" also matches before a final newline
NAME_PATTERN = r"\A[A-Za-z0-9](?:[A-Za-z0-9_.@/ -]{0,98}[A-Za-z0-9_.@/-])?\Z"
_VAR = secrets.REFERENCE  # ${VAR} and ${VAR:-default}


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

    def masked(self) -> ServerConfig:
        """A copy with every secret value hidden (tool_selector/config/secrets.py): env and header
        values, the url's credentials and query values, secret options and urls among the args.
        ``${VAR}`` references are kept. Every rendering of a configuration for a person goes through
        it; only the operator (the CLI's ``--show-values``) and an ``admin`` key see the values."""
        return self.model_copy(
            update={
                "env": {k: secrets.mask_value(v) for k, v in self.env.items()},
                "headers": {k: secrets.mask_value(v) for k, v in self.headers.items()},
                "url": None if self.url is None else secrets.mask_url(self.url),
                "args": secrets.mask_args(self.args),
                "command": None if self.command is None else secrets.mask_text(self.command),
            }
        )

    def secret_values(self, environ: Mapping[str, str] | None = None) -> list[str]:
        """The values ``masked`` hides, as configured and with their ``${VAR}`` references resolved from
        ``environ`` (a reference it lacks stays as it is): what must not appear in a message about
        this server (its stderr, an exception's text)."""
        found: list[str] = []
        for form in (self, self._resolved_leniently(environ or {})):
            found += list(form.env.values()) + list(form.headers.values())
            found += [w for v in form.headers.values() for w in v.split() if w.lower() != "bearer"]
            found += secrets.url_secrets(form.url) if form.url is not None else []
            found += secrets.arg_secrets(form.args)
        return [v for v in dict.fromkeys(found) if v and not secrets.REFERENCE.fullmatch(v)]

    def _resolved_leniently(self, environ: Mapping[str, str]) -> ServerConfig:
        def sub(text: str) -> str:
            def one(match: re.Match[str]) -> str:
                value = environ.get(match.group(1), match.group(2))
                return match.group(0) if value is None else value

            return _VAR.sub(one, text)

        return self.model_copy(
            update={
                "args": [sub(a) for a in self.args],
                "env": {k: sub(v) for k, v in self.env.items()},
                "headers": {k: sub(v) for k, v in self.headers.items()},
                "url": None if self.url is None else sub(self.url),
            }
        )

    def launch_line(self, *, reveal: bool = False) -> str:
        """What starting it runs, on one line, unambiguous (shell-quoted): the working folder, the
        environment it adds, the command and its arguments; or the url and the names of its headers.
        Secret values are hidden (``masked``) unless ``reveal``: for the operator at the machine who
        asks, and for an ``admin`` key (which must repeat the whole line to adopt an imported entry)."""
        shown = self if reveal else self.masked()
        if shown.command is None:
            headers = f" (headers: {', '.join(sorted(shown.headers))})" if shown.headers else ""
            return f"{shown.url}{headers}"
        parts = [f"{k}={v}" for k, v in sorted(shown.env.items())]
        line = shlex.join(([("env")] if parts else []) + parts + [shown.command, *shown.args])
        return f"cd {shlex.quote(shown.cwd)} && {line}" if shown.cwd else line

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


SERVERS_FILE_MODE = 0o600
"""The servers file holds the operator's secrets (env and header values): readable by its owner only."""


def save_servers(path: Path, servers: ServersFile) -> None:
    """Write the configuration atomically (a temp file renamed over the old one), readable by its owner
    only (mode 0600; an existing file's mode is kept where it is stricter, never loosened).

    A ``path`` that is a symbolic link is written through (the file it points to is replaced, the link
    stays) when that file is inside the link's own folder (the data folder, for the default
    ``servers.json``); a link out of it is refused with CatalogFileError, never replaced by a file."""
    target = servers_write_target(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    mode = SERVERS_FILE_MODE
    with contextlib.suppress(FileNotFoundError):
        mode &= target.stat().st_mode
    data = servers.model_dump(mode="json", exclude_defaults=True)
    data["mcpServers"] = {
        name: cfg.model_dump(mode="json", exclude_defaults=True) for name, cfg in servers.mcpServers.items()
    }
    fd, tmp = tempfile.mkstemp(prefix=".servers-", suffix=".json", dir=target.parent)
    try:
        os.chmod(tmp, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def servers_write_target(path: Path) -> Path:
    """The file to replace when writing ``path``: itself, or the file a link points to inside the
    link's folder. A link out of its folder (or a loop of links) is refused."""
    if not path.is_symlink():
        return path
    folder = path.parent.resolve()
    try:
        target = path.resolve()
    except (OSError, RuntimeError) as exc:  # a loop of links
        raise CatalogFileError(
            f"The server configuration {path} is a symbolic link that cannot be followed ({exc}).",
            hint="Replace the link with the file itself; nothing was written.",
            path=str(path),
        ) from exc
    if target.is_relative_to(folder):
        return target
    raise CatalogFileError(
        f"The server configuration {path} is a symbolic link to {target}, outside {folder}: tool-selector "
        "writes through a link only to a file in the link's own folder, and never replaces a link with a "
        "file.",
        hint=f"Point the servers_file setting at the file itself (TOOL_SELECTOR_SERVERS_FILE={target}), or "
        "replace the link with a copy of the file; nothing was written.",
        path=str(path),
        target=str(target),
    )


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
    (``mcp.json``) configuration of at most ``limit_bytes`` (the ``max_file_bytes`` setting).

    Only what the person has switched on is imported: an entry with ``"disabled": true`` (or
    ``"enabled": false``) and one Claude Code lists in ``disabledMcpServers`` (at the top level of
    ``~/.claude.json`` for its own servers, in a project for that project's servers) is skipped, with
    the reason, like entries this product cannot run (SSE, the gateway itself). A name defined in several
    places (Claude Code's projects) is imported once: the first definition switched on; every other
    definition is reported as skipped."""
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
    found = _client_entries(raw)
    if not found:
        raise CatalogFileError(
            f"{path} has no 'mcpServers' entries.",
            hint="Give a Claude Desktop, Claude Code or Cursor configuration file.",
        )
    result = ImportedServers()
    base = path.parent.resolve()
    for name, definitions in found.items():
        switched_on = [d for d in definitions if not d.off]
        if not switched_on:
            result.skipped[name] = definitions[0].off
            continue
        chosen = switched_on[0]
        try:
            config = result.servers[name] = client_entry_config(name, chosen.entry, base)
        except ValidationError as exc:
            result.skipped[name] = _format_errors(exc)
            continue
        except ValueError as exc:
            result.skipped[name] = str(exc)
            continue
        for other in switched_on[1:]:
            try:
                same = client_entry_config(name, other.entry, base) == config
            except ValueError:
                same = False
            if not same:
                result.skipped[f"{name} ({other.where})"] = (
                    f"another definition of {name!r} was imported (from {chosen.where or 'mcpServers'})"
                )
    return result


SWITCHED_OFF_HINT = (
    "switch it on there and import again (`tool-selector init`), or `tool-selector servers add` it"
)


class _ClientEntry(BaseModel):
    entry: Any
    where: str = Field(default="", description="'' for the file's own servers, else 'project PATH'")
    off: str = Field(default="", description="why the client has it switched off, if it does")


def _names_in(value: Any) -> set[str]:
    return {v for v in value if isinstance(v, str)} if isinstance(value, list) else set()


def _switched_off(entry: Any, listed: bool, where: str) -> str:
    """Why the client does not start ``entry``, or ''."""
    if isinstance(entry, dict) and (entry.get("disabled") is True or entry.get("enabled") is False):
        flag = '"disabled": true' if entry.get("disabled") is True else '"enabled": false'
        return f"switched off in the client ({flag}); {SWITCHED_OFF_HINT}"
    if listed:
        scope = f" for the {where}" if where else ""
        return f"switched off in Claude Code{scope} (disabledMcpServers); {SWITCHED_OFF_HINT}"
    return ""


def _client_entries(raw: dict[str, Any]) -> dict[str, list[_ClientEntry]]:
    """Every ``mcpServers`` entry of the file by name: its own first, then Claude Code's per-project
    ones (``projects.PATH.mcpServers`` in ``~/.claude.json``), each with whether it is switched off."""
    found: dict[str, list[_ClientEntry]] = {}
    if isinstance(raw.get("mcpServers"), dict):
        off = _names_in(raw.get("disabledMcpServers"))
        for name, entry in raw["mcpServers"].items():
            off_why = _switched_off(entry, name in off, "")
            found.setdefault(name, []).append(_ClientEntry(entry=entry, where="", off=off_why))
    projects = raw.get("projects")
    if isinstance(projects, dict):  # Claude Code keeps per-project servers in ~/.claude.json
        for where, project in projects.items():
            if not (isinstance(project, dict) and isinstance(project.get("mcpServers"), dict)):
                continue
            off = _names_in(project.get("disabledMcpServers"))
            label = f"project {where}"
            for name, entry in project["mcpServers"].items():
                off_why = _switched_off(entry, name in off, label)
                found.setdefault(name, []).append(_ClientEntry(entry=entry, where=label, off=off_why))
    return found


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
