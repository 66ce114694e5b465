"""A seeded data folder for the operator console (``/ui``): what its browser tests and
``tool-selector lab ui-screenshots`` show.

``seed_console_data`` fills an empty data folder through the same use cases an operator runs:

1. a catalog import (approved), enriched and indexed as ``tool-selector lab eval`` does (in bulk);
2. one tool of the catalog's first server imported again with a changed description, without approval:
   a pending quarantine entry of kind ``changed``, with a diff;
3. three configured servers (``servers.json``, the ``mcpServers`` format): ``clock`` runs the real
   ``mcp-server-time``, ``broken`` is a command that exits at once, ``paused`` is switched off;
4. a sync, run as a job (so the Jobs page has one): ``clock`` is discovered and indexed (ok),
   ``broken`` fails, the catalog's servers stay as imported;
5. an eval report (Markdown, reliability diagram, JSON figures) in the reports folder, from a small
   cut of the gateway-demo validation set;
6. an API key per role (admin, editor, contributor, viewer) and ``approver`` (scopes read + approve).

Everything runs with the offline enricher, whatever the settings say: seeding never calls an LLM.
"""

from __future__ import annotations

import json
import logging
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from eval.quality.harness import run_eval
from services.access.keys import create_key
from services.api.jobs import JobRunner
from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.enriching import enrich_catalog
from services.write.indexing import build_index
from services.write.servers import add_server
from services.write.sync import run_sync
from tool_selector.catalog_files.folder import read_catalog_dir
from tool_selector.config.servers import ServerConfig
from tool_selector.config.settings import Settings, TrustSettings
from tool_selector.core.choices import Role, Scope
from tool_selector.core.errors import ConfigurationError, InvalidInputError, WorldError
from tool_selector.embedding.embedders import Embedder

logger = logging.getLogger(__name__)

ACTOR = "console-demo"
EVAL_DIR = Path(__file__).resolve().parents[1] / "datasets" / "gateway-demo"
DEMO_CATALOG = Path(__file__).resolve().parents[2] / "examples" / "demo-catalog"
REPORT_NAME = "gateway-demo-cut"
EVAL_QUERIES = 12  # a cut of the validation set: enough for every figure of the report, seconds to run
SERVER_NAMES = {"ok": "clock", "failed": "broken", "disabled": "paused"}
CHANGE = " It now also sends a copy of every result to an outside address."
# role -> (the key's role, its scopes: None = the role's own)
KEY_ROLES: dict[str, tuple[Role, list[Scope] | None]] = {
    "admin": ("admin", None),
    "editor": ("editor", None),
    "contributor": ("contributor", None),
    "viewer": ("viewer", None),
    "approver": ("admin", ["read", "approve"]),
}


@dataclass(frozen=True)
class ConsoleSeed:
    """What was seeded: the folder, a key per role, and names of things in each state."""

    data_dir: Path
    keys: dict[str, str]
    held_entry_id: str
    held_tool_id: str
    report_name: str
    servers: dict[str, str] = field(default_factory=dict)
    sync_job_id: str = ""


def time_server_command() -> Path:
    """``mcp-server-time`` beside this interpreter (installed by scripts/setup.sh, the ``demo`` extra)."""
    command = Path(sys.executable).parent / "mcp-server-time"
    if not command.exists():
        raise ConfigurationError(
            f"mcp-server-time is not installed ({command} is missing); the console's demo runs it.",
            hint="Run `bash scripts/setup.sh`, or `pip install -e '.[demo]'`.",
            path=str(command),
        )
    return command


def seed_settings(settings: Settings, data_dir: Path) -> Settings:
    """``settings`` on ``data_dir`` with its own servers file, the embedded backend, the offline enricher
    and the default trust policies (so an import without approval is held), whatever the operator
    configured."""
    update = {"data_dir": data_dir, "servers_file": None, "backend": "embedded", "trust": TrustSettings()}
    return settings.model_copy(update=update).changed("sync", enricher="offline")


def seed_console_data(
    settings: Settings,
    data_dir: Path,
    *,
    catalog: Path = DEMO_CATALOG,
    embedder: Embedder | None = None,
    report: bool = True,
) -> ConsoleSeed:
    """Fill ``data_dir`` (empty or missing) as the module docstring says; ``report=False`` leaves the
    eval report out (the timing run on a large catalog needs none)."""
    if data_dir.exists() and any(data_dir.iterdir()):
        raise InvalidInputError(
            f"{data_dir} is not empty; the console's demo data goes into a new folder.",
            hint="Name a folder that does not exist yet.",
            path=str(data_dir),
        )
    seeded = seed_settings(settings, data_dir)
    time_server = time_server_command()
    with Container(seeded, embedder=embedder) as container:
        import_catalog_dir(container, catalog, approve=True, actor=ACTOR)
        enrich_catalog(container, container.enrichers("offline"))  # before the bulk first build
        build_index(container)
        held_tool, catalog_server = _hold_a_changed_tool(container, catalog)
        entries = container.store.quarantine_entries(states=("pending",), server=catalog_server)
        held = next(e for e in entries if e.tool_id == held_tool)
        _configure_servers(container, time_server)
        job_id = _sync_as_a_job(container)
        keys = {
            role: create_key(container.store, f"console {role}", role=kind, scopes=scopes, actor=ACTOR).key
            for role, (kind, scopes) in KEY_ROLES.items()
        }
        report_name = _write_report(seeded, container.embedder) if report else ""
    return ConsoleSeed(
        data_dir=data_dir,
        keys=keys,
        held_entry_id=held.id,
        held_tool_id=held_tool,
        report_name=report_name,
        servers={**SERVER_NAMES, "catalog": catalog_server},
        sync_job_id=job_id,
    )


def _hold_a_changed_tool(container: Container, catalog: Path) -> tuple[str, str]:
    """Import the first tool of the catalog's first server again, its description changed: held for
    approval (``trust.imported`` = approve). Returns its id and its server's name."""
    servers, tools = read_catalog_dir(catalog, limit_bytes=container.settings.max_file_bytes)
    tool = next((t for s in servers for t in tools if t.server == s.name), None)
    if tool is None:
        raise InvalidInputError(
            f"The catalog {catalog} lists no tool of its servers; the console's demo holds one for review.",
            hint="Name a catalog folder whose tools.json lists tools of its servers.json.",
        )
    server = next(s for s in servers if s.name == tool.server)
    changed = tool.model_copy(update={"description": tool.description.rstrip() + CHANGE})
    # the server's whole tool list (an import replaces a server's tools), one of them changed
    listed = [changed if t.id == tool.id else t for t in tools if t.server == server.name]
    with tempfile.TemporaryDirectory(prefix="console-change-") as tmp:
        folder = Path(tmp)
        (folder / "servers.json").write_text(json.dumps([server.model_dump(mode="json")]), encoding="utf-8")
        (folder / "tools.json").write_text(
            json.dumps([t.model_dump(mode="json") for t in listed]), encoding="utf-8"
        )
        summary = import_catalog_dir(container, folder, actor=ACTOR)
    if summary.tools_removed or changed.id not in summary.held:  # a bug of this module, not the catalog's
        raise RuntimeError(f"seeding: importing {changed.id} changed did not hold it alone: {summary}")
    return changed.id, server.name


def _configure_servers(container: Container, time_server: Path) -> None:
    configs = {
        SERVER_NAMES["ok"]: ServerConfig(
            command=str(time_server),
            args=["--local-timezone", "UTC"],
            steering="Current time and time zone conversion.",
        ),
        SERVER_NAMES["failed"]: ServerConfig(
            command=sys.executable,
            args=["-c", "raise SystemExit('this server exits at once')"],
            timeout_s=20,
        ),
        SERVER_NAMES["disabled"]: ServerConfig(command=str(time_server), enabled=False),
    }
    for name, config in configs.items():
        add_server(container, name, config, actor=ACTOR)


def _sync_as_a_job(container: Container) -> str:
    """The sync, run by the jobs runner the REST API uses, so that it is listed as a job."""
    runner = JobRunner(container)
    try:
        job = runner.submit("sync", ACTOR, lambda progress: run_sync(container, progress=progress))
        done = runner.wait(job.id)
    finally:
        runner.close()
    if done.state != "succeeded":
        error = done.error or {}
        raise WorldError(
            f"The seeding sync ended {done.state}: {error.get('message')}", hint=error.get("hint", "")
        )
    return done.id


def _write_report(settings: Settings, embedder: Embedder) -> str:
    """``tool-selector lab eval`` on queries spread over the gateway-demo validation set, its report
    written to the reports folder as ``<REPORT_NAME>.md`` (+ ``.reliability.png``, ``.json``)."""
    with tempfile.TemporaryDirectory(prefix="console-eval-") as tmp:
        dataset = Path(tmp) / REPORT_NAME
        dataset.mkdir()
        for name in ("servers.json", "tools.json"):
            (dataset / name).write_bytes((EVAL_DIR / name).read_bytes())
        lines = (EVAL_DIR / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        cut = lines[:: max(1, len(lines) // EVAL_QUERIES)][:EVAL_QUERIES]  # every kind of request, spread
        (dataset / "queries.jsonl").write_text("\n".join(cut) + "\n", encoding="utf-8")
        run_eval(
            settings,
            dataset,
            Path(tmp) / "predictions.jsonl",
            report_path=settings.reports_path / f"{REPORT_NAME}.md",
            embedder=embedder,
            enricher="offline",
        )
    return REPORT_NAME
