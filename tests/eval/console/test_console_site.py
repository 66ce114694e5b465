"""The console's seeded site (tests/support/console_site.py, eval/console/demo.py) holds what the browser
tests rely on, read back through the REST API of its real process; and ``tool-selector lab ui-screenshots``
photographs every page of it at both sizes in a real Chromium, or says what is missing."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import httpx
import pytest
from PIL import Image
from typer.testing import CliRunner

from routes.cli import app
from tests.support.console_site import ConsoleSite

V1 = "/api/v1"
PAGES = ("servers", "tools", "tool", "quarantine", "playground", "audit", "jobs", "evaluation")
SIZES = ((1280, 800), (390, 844))


def _get(site: ConsoleSite, role: str, path: str) -> Any:
    headers = {"Authorization": f"Bearer {site.keys[role]}"}
    with httpx.Client(base_url=site.url, headers=headers, timeout=60) as client:
        response = client.get(path)
    assert response.status_code == 200, response.text
    return response.json()


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG"
    width, height = struct.unpack(">II", head[16:24])
    return width, height


def test_the_seeded_site_has_a_server_in_each_state_a_held_change_a_report_and_a_key_per_role(
    console_site: ConsoleSite,
) -> None:
    site = console_site
    states = {s["name"]: s["status"] for s in _get(site, "viewer", f"{V1}/overview/servers")["servers"]}
    assert {state: states[name] for state, name in site.servers.items()} == {
        "ok": "ok",
        "failed": "failed",
        "disabled": "disabled",
        "catalog": "catalog",
    }
    held = _get(site, "viewer", f"{V1}/quarantine/{site.held_entry_id}")
    assert (held["entry"]["state"], held["entry"]["kind"]) == ("pending", "changed")
    assert held["entry"]["tool_id"] == site.held_tool_id and "+" in held["diff"]
    assert [r["name"] for r in _get(site, "viewer", f"{V1}/eval/reports")] == [site.report_name]
    jobs = _get(site, "viewer", f"{V1}/jobs")["jobs"]
    assert [(j["kind"], j["state"]) for j in jobs] == [("sync", "succeeded")]
    scopes = {role: sorted(_get(site, role, f"{V1}/whoami")["scopes"]) for role in site.keys}
    assert scopes == {
        "admin": ["admin", "approve", "call", "edit", "import", "read", "write"],
        "editor": ["call", "edit", "import", "read", "write"],
        "contributor": ["read", "write"],
        "viewer": ["read"],
        "approver": ["approve", "read"],
    }


@pytest.mark.usefixtures("browser_installed")
def test_ui_screenshots_writes_each_page_at_both_sizes_and_prints_the_two_timings(
    console_site: ConsoleSite, tmp_path: Path
) -> None:
    out = tmp_path / "shots"
    args = ["lab", "ui-screenshots", str(out), "--data-dir", str(console_site.data_dir)]
    result = CliRunner().invoke(app, [*args, "--key", console_site.keys["admin"]])
    assert result.exit_code == 0, result.output  # 1: a page showed or logged an error
    expected = [out / f"{page}-{w}x{h}.png" for w, h in SIZES for page in PAGES]
    assert sorted(result.stdout.split("\n")[: len(expected)]) == sorted(map(str, expected))
    for path in expected:
        width_height = path.name.removesuffix(".png").rsplit("-", 1)[1]
        assert _png_size(path) == tuple(int(n) for n in width_height.split("x")), path
        with Image.open(path) as image:
            assert image.convert("RGB").getcolors(maxcolors=1) is None, f"{path} is one colour"
    assert "first load of /ui" in result.stdout and "playground (click -> tier shown)" in result.stdout


def test_ui_screenshots_without_chromium_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("eval.console.screens.find_chromium", lambda: None)
    result = CliRunner().invoke(app, ["lab", "ui-screenshots", "unused"])
    assert result.exit_code != 0 and "No Chromium was found" in result.output
    assert "apt-get install chromium" in result.output and "playwright==1.65.2" in result.output
    assert not Path("unused").exists()


def test_ui_screenshots_of_an_existing_folder_needs_its_key(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["lab", "ui-screenshots", str(tmp_path / "out"), "--data-dir", str(tmp_path)]
    )
    assert result.exit_code != 0 and "--data-dir needs --key" in result.output
    assert "keys create" in result.output
