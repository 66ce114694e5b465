"""Reading a file a person names, with a size limit: ``read_bytes_limited`` and ``read_text_limited``.

A path given on the command line or in a setting can be anything: a device (``/dev/zero`` never
ends), a FIFO (it blocks until a writer comes), a file of gigabytes. These readers open without
blocking, refuse what is not a regular file, and read at most ``limit_bytes + 1`` bytes, so a file
over the limit fails at once, with an error naming the file, the limit and what to do. Files of
``/proc`` (regular, but of size 0 until read) are held to the limit as they are read.

A missing or unreadable file raises the ``OSError`` that ``open`` raises, so each caller keeps its
own message for it; the size and kind checks raise ``error`` (the caller's class: CatalogFileError
for catalogs, CalibrationError for a calibration, ConfigurationError for the settings file).

Limits: ``DEFAULT_MAX_FILE_BYTES`` is the ``max_file_bytes`` setting's default (catalog, batch,
dataset, queries, calibration and client-configuration files); the settings file, read before any
setting exists, is held to ``SETTINGS_FILE_MAX_BYTES``.
"""

from __future__ import annotations

import os
import stat
import tomllib
from pathlib import Path
from typing import Any

from tool_selector.core.errors import CatalogFileError, ConfigurationError, ToolSelectorError

DEFAULT_MAX_FILE_BYTES = 64 * 2**20
SETTINGS_FILE_MAX_BYTES = 2**20
_CHUNK = 2**20
_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
)


def describe_size(n: int) -> str:
    """``64 MiB (67108864 bytes)``: a limit as a person reads it, and exactly."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            value = n / size
            shown = f"{value:.0f}" if value == int(value) else f"{value:.1f}"
            return f"{shown} {unit} ({n} bytes)"
    return f"{n} bytes"


def _raise_hint(setting: str | None) -> str:
    if setting is None:
        return "Check that you named the right file."
    env = "TOOL_SELECTOR_" + setting.upper().replace(".", "__")
    return (
        f"Check that you named the right file; if you did, raise the limit with the {setting} setting "
        f"({env}, or {setting} in the TOML settings file)."
    )


def read_bytes_limited(
    path: Path,
    *,
    limit_bytes: int,
    what: str,
    error: type[ToolSelectorError] = CatalogFileError,
    setting: str | None = "max_file_bytes",
) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit_bytes`` of them; ``what`` names the file
    in the error ("catalog file", "queries file"); ``setting`` is the setting that raises the limit."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            kind = next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")
            raise error(
                f"The {what} {path} is {kind}, not a regular file; it was not read.",
                hint="Give the path of a regular file.",
                path=str(path),
            )
        if info.st_size > limit_bytes:
            raise _too_large(path, what, limit_bytes, error, setting, size=info.st_size)
        chunks: list[bytes] = []
        total = 0
        while total <= limit_bytes:
            chunk = os.read(fd, min(_CHUNK, limit_bytes + 1 - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
        if total > limit_bytes:
            raise _too_large(path, what, limit_bytes, error, setting, size=None)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text_limited(
    path: Path,
    *,
    limit_bytes: int,
    what: str,
    error: type[ToolSelectorError] = CatalogFileError,
    setting: str | None = "max_file_bytes",
) -> str:
    """``read_bytes_limited`` decoded as UTF-8 (a ``UnicodeDecodeError`` as ``Path.read_text`` raises),
    with ``\\r\\n`` read as ``\\n`` as text mode does."""
    raw = read_bytes_limited(path, limit_bytes=limit_bytes, what=what, error=error, setting=setting)
    return raw.decode("utf-8").replace("\r\n", "\n")


def _too_large(
    path: Path,
    what: str,
    limit_bytes: int,
    error: type[ToolSelectorError],
    setting: str | None,
    *,
    size: int | None,
) -> ToolSelectorError:
    message = (
        f"The {what} {path} is {describe_size(size)}, over the limit of {describe_size(limit_bytes)}; "
        "it was not read."
        if size is not None
        else f"The {what} {path} is over the limit of {describe_size(limit_bytes)}; reading stopped there."
    )
    return error(message, hint=_raise_hint(setting), path=str(path), limit_bytes=limit_bytes)


def read_settings_toml(path: Path) -> dict[str, Any]:
    """The TOML settings file (``TOOL_SELECTOR_CONFIG_FILE``), at most ``SETTINGS_FILE_MAX_BYTES``."""
    try:
        limit, what = SETTINGS_FILE_MAX_BYTES, "settings file"
        text = read_text_limited(path, limit_bytes=limit, what=what, error=ConfigurationError, setting=None)
        return tomllib.loads(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigurationError(
            f"Cannot read the settings file {path}: {exc}.",
            hint="Fix the TOML file named by TOOL_SELECTOR_CONFIG_FILE, or unset the variable.",
            path=str(path),
        ) from exc
