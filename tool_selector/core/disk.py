"""Writes the disk refuses: a full disk, a used-up quota, a file-size limit, a read-only file system.

Each is one ``StoreError`` (the ``store`` error of routes/errors.py: exit code 13, HTTP 503) naming
what could not be written and what to do: free space, then run the command again. Every write of the
catalog database (catalog/database.py), the writer lock and what runs under it (catalog/writelock.py)
and the sync's lock ends so, never in a traceback. Those writes are atomic (a transaction, a file
written beside its target and renamed over it), so what was stored before is intact.
"""

from __future__ import annotations

import errno
from pathlib import Path

from tool_selector.core.errors import StoreError

REFUSED = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "the file may not grow (the disk is full, or a file-size limit is reached)",
    errno.EROFS: "the file system is read-only",
}


# SQLite's primary result codes of a write the disk refused (an SQLite file other than the catalog's:
# the catalog database says so itself, catalog/database.py)
SQLITE_REFUSED = {8: "the file or its folder is read-only", 10: "a disk I/O error", 13: "the disk is full"}


def disk_refused(exc: BaseException, what: str, folder: Path | str) -> StoreError | None:
    """The StoreError for a write of ``what`` that the disk refused (``exc``: an OSError, or SQLite's
    error for it), or None for any other failure. ``folder``: where space must be freed."""
    code = getattr(exc, "sqlite_errorcode", None)  # the errors of SQLite carry their result code
    said: str | None
    if isinstance(code, int) and code & 0xFF in SQLITE_REFUSED:
        why, said, filename = SQLITE_REFUSED[code & 0xFF], str(exc), None
    elif isinstance(exc, OSError) and exc.errno in REFUSED:
        why, said, filename = REFUSED[exc.errno], exc.strerror, exc.filename
    else:
        return None
    where = f" ({filename})" if filename else ""
    return StoreError(
        f"{what}{where} could not be written: {why} ({said}). Nothing was left half-written; what "
        "was stored before is intact.",
        hint=f"Free disk space (or fix the permissions) where {folder} lives, then run it again.",
        path=str(filename or folder),
        problem=why,
    )
