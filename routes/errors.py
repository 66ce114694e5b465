"""The one table that maps each error to an HTTP status, a CLI exit code and an MCP error text.

MCP error texts are read by a model, so each one ends with what to do next.
"""

from __future__ import annotations

from typing import NamedTuple

from tool_selector.core import errors as e


class ErrorMapping(NamedTuple):
    http_status: int
    exit_code: int
    code: str
    next_step: str


# most specific first; the first isinstance match wins
ERROR_TABLE: tuple[tuple[type[e.ToolSelectorError], ErrorMapping], ...] = (
    (e.InvalidInputError, ErrorMapping(422, 2, "invalid_input", "Fix the request as described and retry.")),
    (
        e.CatalogFileError,
        ErrorMapping(422, 3, "catalog_file", "Fix the file as described; nothing was stored."),
    ),
    (e.NotFoundError, ErrorMapping(404, 4, "not_found", "Check the name against the catalog and retry.")),
    (
        e.IndexMissingError,
        ErrorMapping(503, 5, "index_missing", "Ask the operator to build the index, then retry."),
    ),
    (
        e.CalibrationError,
        ErrorMapping(500, 6, "calibration", "Ask the operator to fix the calibration file."),
    ),
    (
        e.ConflictError,
        ErrorMapping(409, 8, "conflict", "Read the message: it names the conflicting item and the option."),
    ),
    (e.AuthError, ErrorMapping(401, 9, "unauthorized", "Send a valid API key as `Authorization: Bearer`.")),
    (e.ForbiddenError, ErrorMapping(403, 10, "forbidden", "Use an API key with the scope named above.")),
    (
        e.ConfigurationError,
        ErrorMapping(400, 7, "configuration", "Ask the operator to fix the configuration."),
    ),
    (
        e.BackendUnavailableError,
        ErrorMapping(503, 11, "backend_unavailable", "Retry in a minute; if it persists, tell the operator."),
    ),
    (e.EmbedderError, ErrorMapping(503, 12, "embedder", "Retry later; if it persists, tell the operator.")),
    (e.StoreError, ErrorMapping(503, 13, "store", "Retry later; if it persists, tell the operator.")),
    (
        e.CatalogDamagedError,
        ErrorMapping(
            503,
            21,
            "catalog_damaged",
            "Tell the user the operator must restore catalog.db from a backup (or point "
            "TOOL_SELECTOR_DATA_DIR at the right folder); nothing was changed.",
        ),
    ),
    (
        e.IndexDamagedError,
        ErrorMapping(
            503,
            19,
            "index_damaged",
            "Tell the user the operator must run `tool-selector index rebuild` (nothing is lost), "
            "then retry; until then no tool can be found here.",
        ),
    ),
    (
        e.LockedError,
        ErrorMapping(409, 14, "locked", "Another run is in progress; retry when it has finished."),
    ),
    (
        e.LLMError,
        ErrorMapping(502, 16, "llm", "Retry later; the offline enricher is used meanwhile if configured."),
    ),
    (
        e.UpstreamError,
        ErrorMapping(
            502, 17, "upstream", "Retry once; if it fails again, pick another server or tell the operator."
        ),
    ),
    (
        e.QuarantinedError,
        ErrorMapping(
            423, 18, "quarantined", "Use another tool, or tell the user an operator must approve it."
        ),
    ),
    (e.WorldError, ErrorMapping(503, 15, "unavailable", "Retry later; if it persists, tell the operator.")),
    (e.ToolSelectorError, ErrorMapping(500, 1, "error", "Tell the operator.")),
)


def mapping_for(error: e.ToolSelectorError) -> ErrorMapping:
    for cls, mapping in ERROR_TABLE:
        if isinstance(error, cls):
            return mapping
    raise AssertionError("ToolSelectorError is the last row")  # pragma: no cover


def mcp_text(error: e.ToolSelectorError) -> str:
    """The error as an agent should read it: what went wrong, then what to do next."""
    return f"{error} Next step: {mapping_for(error).next_step}"
