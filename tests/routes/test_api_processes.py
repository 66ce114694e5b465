"""Several ``tool-selector api`` processes on one data folder: real processes started with the real CLI
(tests/support/api_process.py), each loading the real model, over a copy of the gateway-demo catalog.

Each process is a reader on its own; writes, whichever process makes them, take turns through the data
folder's writer lock (tool_selector/catalog/writelock.py). ``index_check_s`` is 0 where a test reads
through one
process what another wrote, so that the read looks for the new index at once instead of within 2 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from services.root.container import Container
from tests.support.api_process import CLI, STARTED, admin_key, api_env, api_process, copy_data
from tests.support.gateway_helpers import wait_exited
from tool_selector.catalog import admin
from tool_selector.catalog.admin import JobRecord
from tool_selector.catalog.writelock import write_lock_for
from tool_selector.config.settings import Settings
from tool_selector.core.processes import ProcessRef, current_process
from tool_selector.index.mark import index_is_current

V1 = "/api/v1"
LEDGER = {"name": "ledger", "description": "Bookkeeping: journal entries, invoices and account balances."}
JOURNAL = {
    "server": "ledger",
    "name": "post_journal_entry",
    "description": "Post a double-entry journal entry (debit and credit accounts) to the general ledger.",
}
JOURNAL_QUERY = "post a journal entry debiting cash and crediting revenue in the general ledger"


@pytest.fixture
def data(api_template: Path, tmp_path: Path, real_model: Path) -> Path:
    """A copy of the imported and indexed gateway-demo catalog, for this test's processes to share."""
    return copy_data(api_template, tmp_path / "shared-data")


def resolved_tools(client: httpx.Client, query: str) -> list[str]:
    answer = client.post(f"{V1}/resolve", json={"query": query, "explain": True})
    assert answer.status_code == 200, answer.text
    return [tool["id"] for tool in answer.json()["resolution"]["tools"]]


def created(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def stored(data: Path) -> tuple[set[str], set[str], bool]:
    """What another process sees on disk: the catalog's tool ids, the index's tool ids, and whether the
    index is marked current."""
    with Container(Settings(data_dir=data)) as view:
        return {t.id for t in view.store.list_tools()}, set(view.backend.ids()), index_is_current(view)


def test_a_tool_registered_through_one_api_process_is_found_by_a_resolve_through_another(data: Path) -> None:
    key = admin_key(data)
    env = api_env(data, INDEX_CHECK_S="0", TRUST__REGISTERED="tofu")
    with api_process(env) as a, api_process(env) as b, a.client(key) as through_a, b.client(key) as through_b:
        before = resolved_tools(through_b, JOURNAL_QUERY)  # B's answer cache now holds this query
        assert "ledger::post_journal_entry" not in before
        assert resolved_tools(through_b, JOURNAL_QUERY) == before  # answered from its cache
        created(through_a.post(f"{V1}/servers", json=LEDGER))
        assert created(through_a.post(f"{V1}/tools", json=JOURNAL))["held"] is False
        after = resolved_tools(through_b, JOURNAL_QUERY)  # B's cache emptied when A's index was marked
        assert after[0] == "ledger::post_journal_entry"
        assert through_b.get(f"{V1}/tools/ledger::post_journal_entry").status_code == 200
        assert through_b.get("/health").json()["index_current"] is True


TASKS = {
    "books-a": {
        "reconcile_bank": "Reconcile the bank statement against the cash ledger.",
        "accrue_invoices": "Accrue unpaid supplier invoices at the end of the month.",
        "depreciate_assets": "Book the monthly depreciation of fixed assets.",
        "close_payroll": "Close the payroll period and post the salary expenses.",
        "count_stock": "Record the warehouse stock count and its variance.",
    },
    "books-b": {
        "revalue_currency": "Revalue foreign currency balances at the closing exchange rate.",
        "write_off_debts": "Write off customer debts that cannot be collected.",
        "allocate_overhead": "Allocate shared overhead costs to the departments.",
        "file_vat_return": "Prepare and file the quarterly VAT return.",
        "amortise_rent": "Amortise prepaid rent over the months of the lease.",
    },
}


def _register_all(client: httpx.Client, server: str, outcomes: list[int]) -> None:
    for name, description in TASKS[server].items():
        tool = {"server": server, "name": name, "description": description, "matching_mode": "force_create"}
        outcomes.append(client.post(f"{V1}/tools", json=tool).status_code)


def test_two_api_processes_writing_at_once_keep_both_writes_in_the_catalog_and_the_index(data: Path) -> None:
    key = admin_key(data)
    env = api_env(data, INDEX_CHECK_S="0", TRUST__REGISTERED="tofu")
    with api_process(env) as a, api_process(env) as b, a.client(key) as through_a, b.client(key) as through_b:
        created(through_a.post(f"{V1}/servers", json={"name": "books-a", "description": "Bookkeeping."}))
        created(through_b.post(f"{V1}/servers", json={"name": "books-b", "description": "Accounting."}))
        outcomes: dict[str, list[int]] = {"books-a": [], "books-b": []}
        writers = [
            threading.Thread(target=_register_all, args=(through_a, "books-a", outcomes["books-a"])),
            threading.Thread(target=_register_all, args=(through_b, "books-b", outcomes["books-b"])),
        ]
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join(300)
        assert outcomes == {server: [201] * len(tasks) for server, tasks in TASKS.items()}
        catalog, index, current = stored(data)
        written = {f"{server}::{name}" for server, tasks in TASKS.items() for name in tasks}
        assert written <= catalog and written <= index  # neither process overwrote the other's
        assert index == catalog and current  # and the index is marked current
        assert resolved_tools(through_a, "file the quarterly VAT return")[0] == "books-b::file_vat_return"
        assert (
            resolved_tools(through_b, "monthly depreciation of fixed assets")[0]
            == "books-a::depreciate_assets"
        )


def test_a_registration_through_the_api_waits_for_a_cli_import_holding_the_lock_and_both_are_kept(
    data: Path, tmp_path: Path
) -> None:
    batch = tmp_path / "warehouse.csv"
    rows = ["server,server_description,tool,tool_description,input_schema,tags"]
    rows += [
        f"warehouse,Warehouse operations,move_{i},Move pallet batch {i} to bay {i % 17}.,,"
        for i in range(120)
    ]
    batch.write_text("\n".join(rows) + "\n", encoding="utf-8")
    key = admin_key(data)
    env = api_env(data, API__WRITE_WAIT_S="600", TRUST__REGISTERED="tofu", TRUST__IMPORTED="tofu")
    with api_process(env) as api, api.client(key) as client:
        created(client.post(f"{V1}/servers", json=LEDGER))
        importing = subprocess.Popen(
            [str(CLI), "catalog", "register", str(batch), "--matching-mode", "force_create"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            assert importing.stderr is not None
            for line in importing.stderr:  # the import's own log says when it holds the lock
                if "writer lock" in line and "held for batch import" in line:
                    break
            else:
                pytest.fail(f"the import never held the writer lock (exit {importing.wait(60)})")
            holder = write_lock_for(data / "write.lock").holder()
            assert holder is not None and holder.process.pid == importing.pid
            registered = client.post(f"{V1}/tools", json=JOURNAL)  # waits for the import's write
            assert importing.wait(300) == 0
        finally:
            if importing.poll() is None:
                importing.kill()
            out, _ = importing.communicate(timeout=60)
        assert created(registered)["held"] is False
        assert json.loads(out)["counts"]["created"] == 121
        catalog, index, current = stored(data)
        written = {"ledger::post_journal_entry", *(f"warehouse::move_{i}" for i in range(120))}
        assert written <= catalog and index == catalog and current
    with Container(Settings(data_dir=data)) as view:
        seq = {(r.action, r.target): r.seq for r in admin.read_audit(view.store, limit=1000)}
    # one after the other: the registration's change came after the whole import's
    assert seq["tool.create", "tool:ledger::post_journal_entry"] > seq["catalog.import", "batch:csv"]
    assert (
        seq["tool.create", "tool:ledger::post_journal_entry"] > seq["tool.create", "tool:warehouse::move_119"]
    )


def test_a_write_waiting_too_long_for_another_writer_is_refused_naming_it_while_reads_go_on(
    data: Path,
) -> None:
    key = admin_key(data)
    env = api_env(data, API__WRITE_WAIT_S="0.5", TRUST__REGISTERED="tofu")
    lock = write_lock_for(data / "write.lock")
    with api_process(env) as a, a.client(key) as client:
        with lock.held("a long test write", wait_s=0):  # this test's process is the other writer
            refused = client.post(f"{V1}/servers", json=LEDGER)
            assert resolved_tools(client, "show the git diff of my repository")  # readers never wait
            cli = subprocess.run(
                [str(CLI), "index", "build"],
                env={**env, "TOOL_SELECTOR_WRITE_LOCK_TIMEOUT_S": "0.5"},
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
        assert refused.status_code == 409, refused.text
        error = refused.json()["error"]
        assert error["code"] == "locked"
        assert f"pid {os.getpid()}" in error["message"] and "a long test write" in error["message"]
        assert "waited 0.5 s" in error["message"] and str(data / "write.lock") in error["message"]
        assert (
            "write_lock_timeout_s" in error["hint"]
            and error["details"]["holder"]["what"] == "a long test write"
        )
        assert cli.returncode == 14, cli.stderr
        assert "error [locked]: Another writer is changing the catalog and the index" in cli.stderr
        assert f"(pid {os.getpid()}, `" in cli.stderr
        assert stored(data)[0] == stored(data)[1]  # nothing was written meanwhile
        created(client.post(f"{V1}/servers", json=LEDGER))  # once it is free, the write goes through


def test_an_api_process_starting_leaves_the_jobs_of_a_live_process_and_interrupts_those_of_ended_ones(
    data: Path,
) -> None:
    ended = subprocess.Popen(["true"])
    ended.wait(30)
    now = datetime.now(UTC)
    owners: dict[str, ProcessRef | None] = {
        "a" * 16: current_process(),  # this test's process: alive, and not the API's
        "b" * 16: ProcessRef(pid=ended.pid, host=current_process().host),
        "c" * 16: None,  # a job made before jobs named their owner
    }
    with Container(Settings(data_dir=data)) as container:
        for job_id, owner in owners.items():
            job = JobRecord(
                id=job_id, kind="import", state="running", created_at=now, created_by="key:x:ci", owner=owner
            )
            admin.put_job(container.store, job)
    key = admin_key(data)
    with api_process(api_env(data)) as api, api.client(key) as client:
        live, dead, unowned = (client.get(f"{V1}/jobs/{c * 16}").json() for c in "abc")
    assert live["state"] == "running" and live["error"] is None and "owner" not in live
    assert dead["state"] == unowned["state"] == "interrupted"
    assert dead["error"]["code"] == "interrupted" and dead["finished_at"] is not None


def _workers(parent: int) -> set[int]:
    children = Path(f"/proc/{parent}/task/{parent}/children").read_text().split()
    return {int(pid) for pid in children if b"spawn_main" in Path(f"/proc/{pid}/cmdline").read_bytes()}


def test_the_api_with_two_workers_serves_reads_and_writes_on_one_port_and_stops_them_on_sigterm(
    data: Path,
) -> None:
    key = admin_key(data)
    env = api_env(data, INDEX_CHECK_S="0", TRUST__REGISTERED="tofu")
    with api_process(env, "--workers", "2") as api:
        api.wait_for(STARTED, count=2)  # each worker ran its lifespan
        workers = _workers(api.process.pid)
        assert len(workers) == 2
        with api.client(key) as client:
            created(client.post(f"{V1}/servers", json=LEDGER))
            created(client.post(f"{V1}/tools", json=JOURNAL))
        for _ in range(6):  # new connections, spread over the workers by the kernel
            with api.client(key) as fresh:
                assert resolved_tools(fresh, JOURNAL_QUERY)[0] == "ledger::post_journal_entry"
        assert api.stop() == 0
    assert wait_exited(workers, timeout=30) == set()
