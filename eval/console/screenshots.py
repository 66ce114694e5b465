"""``tool-selector lab ui-screenshots OUT_DIR``: seed a data folder (eval/console/demo.py) or take an existing
one, start the real ``tool-selector api`` on a free loopback port, and drive the console in a headless
Chromium (eval/console/screens.py): one PNG per page and size, and the two timings."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from eval.console.demo import DEMO_CATALOG, seed_console_data
from eval.console.screens import Screenshots, Targets, launch, require_browser, shoot_console
from tool_selector.config.settings import Settings
from tool_selector.core.errors import InvalidInputError, NotFoundError, WorldError

STARTUP_S = 180.0  # the API process's start on a busy 2-core machine (the model, the index)
LISTENING = re.compile(r"Uvicorn running on (http://[\d.]+:\d+)")


@contextmanager
def running_api(settings: Settings, data_dir: Path, log: Path, *, seeded: bool) -> Iterator[str]:
    """``tool-selector api`` on ``data_dir`` and a free loopback port; yields its URL. Its stderr goes to
    ``log`` (shown in the error when it does not start); stopped with SIGTERM at the end.

    On a ``seeded`` folder the process gets none of the operator's TOOL_SELECTOR_* settings (a config
    file, a Weaviate backend, another servers file) but the cache folder: it serves the seeded folder as
    it was made. On the operator's own folder it runs with their settings, as their ``api`` does."""
    env = {k: v for k, v in os.environ.items() if not (seeded and k.startswith("TOOL_SELECTOR_"))}
    env |= {
        "TOOL_SELECTOR_DATA_DIR": str(data_dir),
        "TOOL_SELECTOR_CACHE_DIR": str(settings.cache_dir),
        "TOOL_SELECTOR_LOG_LEVEL": "INFO",  # uvicorn's "running on" line names the port
    }
    if seeded:
        env["TOOL_SELECTOR_SYNC__ENRICHER"] = "offline"
    cli = Path(sys.executable).with_name("tool-selector")
    command = [str(cli), "api", "--host", "127.0.0.1", "--port", "0"]
    process = subprocess.Popen(
        command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    found: list[str] = []
    listening = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        with log.open("wb") as sink:
            for line in process.stderr:
                sink.write(line)
                sink.flush()
                match = LISTENING.search(line.decode(errors="replace"))
                if match and not found:
                    found.append(match.group(1))
                    listening.set()
        listening.set()  # stderr closed: the process ended

    reader = threading.Thread(target=read, name="api-stderr", daemon=True)
    reader.start()
    try:
        listening.wait(STARTUP_S)
        if not found:
            tail = log.read_text(encoding="utf-8", errors="replace")[-3000:] if log.exists() else ""
            raise WorldError(
                f"`tool-selector api` did not start within {STARTUP_S:.0f} s; its log ends:\n{tail}",
                hint="Fix what the log says, then run the command again.",
            )
        yield found[0]
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        reader.join(10)
        if process.stderr is not None:
            process.stderr.close()


def _get(url: str, key: str, path: str) -> Any:
    request = urllib.request.Request(f"{url}{path}", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def discover_targets(url: str, key: str, given: Targets, *, server: str = "") -> Targets:
    """Fill what ``given`` leaves empty from the API: the first tool (of ``server`` when named), the
    first held entry (none: the quarantine's list is shown) and the newest eval report (none: the
    reports' list is shown)."""
    query = urllib.parse.urlencode({"limit": 1, **({"server": server} if server else {})})
    tool = given.tool_id or _get(url, key, f"/api/v1/tools?{query}")["tools"][0]["id"]
    entry = given.entry_id
    if not entry:
        held = _get(url, key, "/api/v1/quarantine")
        entry = held[0]["id"] if held else ""
    report = given.report_name
    if not report:
        listed = _get(url, key, "/api/v1/eval/reports")
        report = listed[0]["name"] if listed else ""
    return Targets(tool_id=tool, entry_id=entry, report_name=report)


def ui_screenshots(
    settings: Settings,
    out_dir: Path,
    *,
    catalog: Path = DEMO_CATALOG,
    data_dir: Path | None = None,
    key: str | None = None,
    on_file: Callable[[Path], None] | None = None,
    on_step: Callable[[str], None] | None = None,
) -> Screenshots:
    """Seed a temporary data folder from ``catalog`` (or use ``data_dir`` with an admin ``key``), start
    the API on it and photograph the console into ``out_dir``."""
    if data_dir is not None and not key:
        raise InvalidInputError(
            "--data-dir needs --key: an API key of that folder (admin shows every action).",
            hint="Make one with `tool-selector keys create console --role admin` on that folder.",
        )
    if data_dir is not None and not (data_dir / "catalog.db").is_file():
        raise NotFoundError(
            f"{data_dir} holds no catalog (catalog.db).",
            hint="Name the data folder of a catalog, or leave --data-dir out to photograph a seeded one.",
            path=str(data_dir),
        )
    require_browser()  # before the seeding: a missing browser is said at once
    from playwright.sync_api import sync_playwright

    step = on_step or (lambda _: None)
    with tempfile.TemporaryDirectory(prefix="ui-screenshots-") as tmp:
        targets, server, seeded = Targets(), "", data_dir is None
        if data_dir is None:
            step(f"seeding a data folder from {catalog}")
            seed = seed_console_data(settings, Path(tmp) / "data", catalog=catalog)
            data_dir, key, server = seed.data_dir, seed.keys["admin"], seed.servers["ok"]
            targets = Targets(entry_id=seed.held_entry_id, report_name=seed.report_name)
        assert key is not None
        step("starting `tool-selector api`")
        api = running_api(settings, data_dir, Path(tmp) / "api.log", seeded=seeded)
        with api as url, sync_playwright() as playwright:
            targets = discover_targets(url, key, targets, server=server)
            step(f"the API listens on {url}; driving Chromium")
            browser = launch(playwright)
            try:
                return shoot_console(browser, url, key, out_dir, targets, on_file=on_file)
            finally:
                browser.close()
