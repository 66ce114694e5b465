"""The one exception tree of tool-selector.

    ToolSelectorError                      every error we raise on purpose; carries ``details``
    ├── ConfigurationError                 the operator or caller must change something
    │   ├── InvalidInputError              a request is malformed (empty / oversized query, bad id)
    │   ├── CatalogFileError               a catalog or dataset file is missing, unreadable or malformed
    │   ├── NotFoundError                  a named server, tool, dataset or index does not exist
    │   ├── IndexMissingError              the search index has not been built (or is for another catalog)
    │   ├── CalibrationError               the confidence calibration file is missing or malformed
    │   ├── ConflictError                  the request clashes with what is stored (exists, has tools)
    │   ├── AuthError                      no API key, or one that is unknown or revoked
    │   └── ForbiddenError                 the API key lacks the scope the request needs
    └── WorldError                         something outside us failed; retrying later may help
        ├── BackendUnavailableError        the search backend cannot be reached
        ├── EmbedderError                  the embedding model could not be loaded or run
        ├── StoreError                     the catalog database could not be read or written
        ├── CatalogDamagedError            the catalog database file is empty, damaged or not ours
        ├── IndexDamagedError              a file of the search index is missing, cut off or garbage
        ├── LockedError                    another process holds a lock we need
        ├── LLMError                       the Claude API failed or answered something unusable
        ├── QuarantinedError               a server's tool changed or looks poisoned: held until approved
        └── UpstreamError                  a configured MCP server failed to start, answer or list tools

Adapters (CLI, REST, MCP) translate these through one table in ``routes/errors.py``.
"""

from __future__ import annotations

from typing import Any


class ToolSelectorError(Exception):
    """Base of every error tool-selector raises on purpose."""

    def __init__(self, message: str, *, hint: str = "", **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.details: dict[str, Any] = details

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class ConfigurationError(ToolSelectorError):
    """The caller or operator must change something before retrying."""


class InvalidInputError(ConfigurationError):
    """A request is malformed: empty or oversized query, bad identifier, bad option."""


class CatalogFileError(ConfigurationError):
    """A catalog or dataset file is missing, unreadable or malformed."""


class NotFoundError(ConfigurationError):
    """A named server, tool, dataset or index does not exist."""


class IndexMissingError(ConfigurationError):
    """The search index has not been built, or was built for another catalog or model."""


class CalibrationError(ConfigurationError):
    """The confidence calibration file is missing or malformed."""


class ConflictError(ConfigurationError):
    """The request clashes with what is stored: the name exists, or a server still has tools."""


class AuthError(ConfigurationError):
    """No API key was sent, or it is unknown or revoked."""


class ForbiddenError(ConfigurationError):
    """The API key is valid but lacks the scope the request needs."""


class WorldError(ToolSelectorError):
    """Something outside tool-selector failed; retrying later may help."""


class BackendUnavailableError(WorldError):
    """The search backend cannot be reached."""


class EmbedderError(WorldError):
    """The embedding model could not be loaded or run."""


class StoreError(WorldError):
    """The catalog database could not be read or written."""


class CatalogDamagedError(WorldError):
    """The catalog database file is empty, damaged, or not a tool-selector database. It is refused,
    never replaced: it may be the only copy of the keys, pins and audit. Details: ``path``, ``problem``."""


class IndexDamagedError(WorldError):
    """A file of the embedded search index is missing, cut off or garbage. The index is made from the
    catalog database, so ``tool-selector index rebuild`` repairs it. Details: ``path``, ``problem``."""


class LockedError(WorldError):
    """Another process holds a lock we need."""


class LLMError(WorldError):
    """The Claude API failed after its retries, or answered something that does not validate."""


class QuarantinedError(WorldError):
    """A tool's definition changed since it was approved, was never approved, or looks poisoned: it is
    held (not listed, not callable) until someone with the ``approve`` scope approves it. A world error:
    what the server serves changed, not what the caller asked."""


class UpstreamError(WorldError):
    """A configured MCP server failed to start, initialize, list its tools or answer a call."""
