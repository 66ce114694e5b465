"""The catalog database's tables, and the columns added since version 1 (created when missing)."""

from __future__ import annotations

from tool_selector.catalog.memory import TABLE as CHOICES_TABLE

SCHEMA_VERSION = 9  # 2 profiles, enrichments, discovery; 3 gateway_sessions; 4 provenance, keys, audit, jobs;
# 5 output schemas, definition hashes, tool pins and the quarantine (trust); 6 the change log; 7 server pins
# and server entries in the quarantine (catalog/server_pins.py); 8 the memory of confirmed choices
# (catalog/memory.py); 9 each choice's principal (choices.upgrade rebuilds the table: unique per principal)

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS servers (
    name TEXT PRIMARY KEY,
    description TEXT NOT NULL,
    metadata TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    creation_method TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tools (
    id TEXT PRIMARY KEY,
    server TEXT NOT NULL REFERENCES servers(name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    input_schema TEXT NOT NULL,
    annotations TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    creation_method TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (server, name)
);
CREATE INDEX IF NOT EXISTS tools_by_server ON tools(server);
CREATE TABLE IF NOT EXISTS vectors (
    model TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    dim INTEGER NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (model, text_hash)
);
CREATE TABLE IF NOT EXISTS profiles (
    server TEXT PRIMARY KEY REFERENCES servers(name) ON DELETE CASCADE,
    profile_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS enrichments (
    tool_id TEXT PRIMARY KEY REFERENCES tools(id) ON DELETE CASCADE,
    enrichment_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS discovery (
    server TEXT PRIMARY KEY,
    state TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS gateway_sessions (
    id TEXT PRIMARY KEY,
    last_seen_at TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS api_keys (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    key_hash TEXT NOT NULL UNIQUE,
    role TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at TEXT,
    last_used_at TEXT
);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    at TEXT NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target TEXT NOT NULL,
    before_hash TEXT,
    after_hash TEXT,
    details TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tool_pins (
    tool_id TEXT PRIMARY KEY,
    server TEXT NOT NULL,
    name TEXT NOT NULL,
    pin_hash TEXT NOT NULL,
    definition TEXT NOT NULL,
    how TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS pins_by_server ON tool_pins(server);
CREATE TABLE IF NOT EXISTS quarantine (
    id TEXT PRIMARY KEY,
    tool_id TEXT NOT NULL,
    server TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    old_hash TEXT,
    old_definition TEXT,
    new_hash TEXT NOT NULL,
    new_definition TEXT NOT NULL,
    reasons TEXT NOT NULL,
    found_by TEXT NOT NULL,
    found_at TEXT NOT NULL,
    decided_by TEXT,
    decided_at TEXT
);
CREATE INDEX IF NOT EXISTS quarantine_by_tool ON quarantine(tool_id, state);
CREATE TABLE IF NOT EXISTS server_pins (
    server TEXT PRIMARY KEY,
    pin_hash TEXT NOT NULL,
    text TEXT NOT NULL,
    how TEXT NOT NULL,
    approved_by TEXT NOT NULL,
    approved_at TEXT NOT NULL
);
-- Every change to what the search index is made from, by server (triggers: CHANGE_LOG below): an index
-- remembers the last seq it was brought in line with; the next refresh redoes only the servers after it.
CREATE TABLE IF NOT EXISTS catalog_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, server TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    created_by TEXT NOT NULL,
    data TEXT NOT NULL
);
-- a request the agent resolved, then served with a tool of the power it chose (catalog/memory.py)
"""
SCHEMA += CHOICES_TABLE.format(name="choices")

# columns added after version 1: (table, column, declaration); added by ALTER TABLE when missing
ADDED_COLUMNS = (
    ("servers", "created_by", "TEXT NOT NULL DEFAULT ''"),
    ("servers", "modified_by", "TEXT NOT NULL DEFAULT ''"),
    ("tools", "created_by", "TEXT NOT NULL DEFAULT ''"),
    ("tools", "modified_by", "TEXT NOT NULL DEFAULT ''"),
    ("tools", "output_schema", "TEXT NOT NULL DEFAULT 'null'"),
    ("tools", "definition_hash", "TEXT NOT NULL DEFAULT ''"),
    ("quarantine", "subject", "TEXT NOT NULL DEFAULT 'tool'"),  # tool, or server (its shown text)
)


def _log_trigger(table: str, event: str, server_of: str) -> str:
    """A trigger logging the server of each row ``event`` touches in ``table`` (``server_of`` is a
    SELECT of it from the NEW or OLD row; no row, nothing logged)."""
    return (
        f"CREATE TRIGGER IF NOT EXISTS log_{table}_{event.lower()} AFTER {event} ON {table} BEGIN\n"
        f"    INSERT INTO catalog_changes(server) {server_of};\nEND;\n"
    )


def _change_log() -> str:
    sql = []
    for table, column in (
        ("servers", "name"),
        ("tools", "server"),
        ("profiles", "server"),
        ("tool_pins", "server"),
        ("quarantine", "server"),
    ):
        new, old = f"SELECT NEW.{column}", f"SELECT OLD.{column}"
        sql.append(_log_trigger(table, "INSERT", new))
        sql.append(_log_trigger(table, "DELETE", old))
        # an update logs both: a rename moves documents from one server to another
        both = f"SELECT NEW.{column} UNION SELECT OLD.{column}"
        sql.append(_log_trigger(table, "UPDATE", both))
    for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD")):
        sql.append(_log_trigger("enrichments", event, f"SELECT server FROM tools WHERE id = {row}.tool_id"))
    return "".join(sql)


CHANGE_LOG = _change_log()
SCHEMA += CHANGE_LOG
