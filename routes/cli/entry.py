"""The entry an MCP client starts the gateway with, as ``init`` prints it.

The command ``init`` runs from, when that lasts (a ``uv tool install``, a ``pipx install``, a virtualenv).
When it runs from a temporary environment (uvx's cache, ``pipx run``'s cache: ``uv cache clean`` or pipx
removes it, and every start through ``uvx`` asks the package index first), the entry would break: then
``init`` says so and gives the install that lasts and the entry that install gives. Pure functions of
the paths and variables they are handed (``running_here`` reads them from this process), so that tests
can fake any layout.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sys
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any, Literal
from urllib.parse import unquote, urlparse

from pydantic import BaseModel

COMMAND = "tool-selector"
# uv's cache keeps an environment of uvx's in archive-v<N>/<hash> (builds-v<N> while it builds)
UV_CACHE_PART = re.compile(r"^(archive|builds|environments)-v\d+$")
# a requirement's name, and the extra it belongs to: "faiss-cpu>=1.8; extra == 'scale'"
REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)[^;]*(;.*\bextra\s*==\s*['\"](?P<extra>[^'\"]+)['\"])?"
)


class StableInstall(BaseModel):
    """What to do when ``init`` runs from a temporary environment."""

    why: str  # one line: where it runs from, and why an entry there would not last
    command: str  # the install that gives a command that lasts
    tool: Literal["uv", "pipx"]


class ClientEntry(BaseModel):
    """The ``mcpServers`` entry to paste, and, when this command runs from a temporary environment, the
    install to run first (``entry`` is then the command that install gives)."""

    entry: dict[str, Any]
    install: StableInstall | None = None


class Running(BaseModel):
    """Where this process runs from: its script (``sys.argv[0]``), its environment (``sys.prefix``),
    the variables that move uv's and pipx's folders, and the home folder."""

    argv0: str
    prefix: str
    environ: dict[str, str]
    home: str


def running_here() -> Running:
    return Running(
        argv0=sys.argv[0] if sys.argv else "",
        prefix=sys.prefix,
        environ=dict(os.environ),
        home=str(Path.home()),
    )


def _cache_dirs(environ: Mapping[str, str], home: Path) -> dict[str, list[Path]]:
    """uv's and pipx's caches, where their run-once environments live."""
    xdg_cache = Path(environ.get("XDG_CACHE_HOME") or home / ".cache")
    uv = [Path(environ["UV_CACHE_DIR"])] if environ.get("UV_CACHE_DIR") else []
    uv += [xdg_cache / "uv", home / ".cache" / "uv", home / "Library" / "Caches" / "uv"]
    pipx = [Path(environ["PIPX_VENV_CACHEDIR"])] if environ.get("PIPX_VENV_CACHEDIR") else []
    pipx += [Path(environ["PIPX_HOME"]) / ".cache"] if environ.get("PIPX_HOME") else []
    pipx += [home / ".local/pipx/.cache", home / ".local/share/pipx/.cache", xdg_cache / "pipx"]
    pipx += [home / ".cache" / "pipx"]
    return {tool: [Path(os.path.abspath(f)) for f in found] for tool, found in (("uv", uv), ("pipx", pipx))}


def _inside(path: PurePath, folder: Path) -> bool:
    return path == folder or folder in path.parents


def temporary_environment(running: Running) -> tuple[Literal["uv", "pipx"], str] | None:
    """("uv" or "pipx", the folder) when this command runs from a run-once environment of that tool;
    None when it runs from one that lasts."""
    home = Path(running.home)
    places = [Path(running.prefix)]
    if running.argv0:
        script = Path(os.path.abspath(running.argv0))
        places += [script.parent, Path(os.path.realpath(script)).parent]
    caches = _cache_dirs(running.environ, home)
    for place in places:
        for tool, folders in caches.items():
            if any(_inside(place, folder) for folder in folders):
                return ("uv" if tool == "uv" else "pipx"), _environment(place)
        if any(UV_CACHE_PART.match(part) for part in place.parts):  # a cache moved by --cache-dir
            return "uv", _environment(place)
    return None


def _environment(place: Path) -> str:
    """The environment a script's folder belongs to (its ``bin`` or ``Scripts``' parent)."""
    return str(place.parent if place.name in {"bin", "Scripts"} else place)


def install_source(direct_url: str | None, extras: list[str]) -> str:
    """What to hand ``uv tool install`` / ``pipx install``: the folder or file this copy was built from
    (its PEP 610 ``direct_url.json``), else the package's name; with the extras it has."""
    source = COMMAND
    try:
        origin = json.loads(direct_url) if direct_url else {}
    except json.JSONDecodeError:
        origin = {}
    url = urlparse(origin.get("url", "")) if isinstance(origin, dict) else urlparse("")
    if url.scheme == "file" and url.path:
        source = unquote(url.path)
    elif url.scheme in {"http", "https"}:
        source = url.geturl()
    if extras:
        source += "[" + ",".join(sorted(extras)) + "]"
    return shlex.quote(source)


def stable_bin_dir(tool: Literal["uv", "pipx"], environ: Mapping[str, str], home: Path) -> Path:
    """Where ``uv tool install`` (or ``pipx install``) puts the command (``uv tool dir --bin``)."""
    if tool == "pipx":
        return Path(environ.get("PIPX_BIN_DIR") or home / ".local" / "bin")
    if environ.get("UV_TOOL_BIN_DIR"):
        return Path(environ["UV_TOOL_BIN_DIR"])
    if environ.get("XDG_BIN_HOME"):
        return Path(environ["XDG_BIN_HOME"])
    if environ.get("XDG_DATA_HOME"):
        return Path(environ["XDG_DATA_HOME"]).parent / "bin"
    return home / ".local" / "bin"


def this_install() -> tuple[str | None, list[str]]:
    """This copy's ``direct_url.json`` (None when installed from an index, or never installed) and the
    extras whose every requirement is installed beside it."""
    from importlib import metadata

    try:
        dist = metadata.distribution(COMMAND)
    except metadata.PackageNotFoundError:
        return None, []
    needs: dict[str, set[str]] = {}
    for requirement in dist.requires or []:
        found = REQUIREMENT.match(requirement)
        if found and found["extra"]:
            needs.setdefault(found["extra"], set()).add(_normal(found["name"]))
    present = {_normal(d.metadata["Name"] or "") for d in metadata.distributions()}
    return dist.read_text("direct_url.json"), sorted(x for x, names in needs.items() if names <= present)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def client_entry(
    running: Running, *, env: dict[str, str] | None = None, source: str = COMMAND
) -> ClientEntry:
    """The entry to paste: this command when it lasts; else the command the install would give, and
    that install. ``env``: the variables the gateway needs (its folders when not the defaults);
    ``source``: what the install takes (``install_source``)."""
    script = Path(running.argv0) if running.argv0 else None
    here = str(Path(os.path.abspath(script))) if script and script.name.startswith(COMMAND) else COMMAND
    temporary = temporary_environment(running)
    install = None
    command = here
    if temporary is not None:
        tool, place = temporary
        home = Path(running.home)
        if tool == "uv":
            why = f"uv's cache ({place}): `uv cache clean` removes it, and uvx asks the package index"
            why += " at every start"
            line = f"uv tool install {source}"
        else:
            why = f"pipx's cache ({place}), which pipx empties after a few days"
            line = f"pipx install {source}"
        why = f"this tool-selector runs from {why}; for an entry that lasts, install it once"
        install = StableInstall(why=why, command=line, tool=tool)
        command = str(stable_bin_dir(tool, running.environ, home) / COMMAND)
    entry: dict[str, Any] = {"command": command, "args": ["serve"]}
    if env:
        entry["env"] = env
    return ClientEntry(entry=entry, install=install)
