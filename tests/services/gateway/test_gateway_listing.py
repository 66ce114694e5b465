"""A session's tool list (services/gateway/sessions.py ``list_tools``) and who is told it changed
(routes/gateway.py ``_Notifier``): found in review of the cap on the list (gateway.max_listed)."""

from __future__ import annotations

import anyio

from routes.gateway import _Notifier
from services.gateway.sessions import SessionView


def test_tools_of_a_stopped_power_hold_no_place_in_the_list() -> None:
    view = SessionView()
    view.list_tools([("a", f"t{i}") for i in range(6)], 12, {"a"})
    view.list_tools([("b", f"t{i}") for i in range(6)], 12, {"a", "b"})
    changed = view.list_tools([("c", "t0")], 12, {"a", "c"})  # b stopped
    assert changed
    assert [k for k in view.listed if k[0] == "b"] == []
    assert len(view.listed) == 7  # the six of a and the new one: none of a pushed out by b's stale six


def test_the_least_recently_used_leave_first_and_a_use_moves_a_tool_to_the_end() -> None:
    view = SessionView()
    view.list_tools([("a", "t0"), ("a", "t1"), ("a", "t2")], 3, {"a"})
    assert not view.list_tools([("a", "t1")], 3, {"a"})  # only the order moved: nothing to tell
    view.list_tools([("a", "t3")], 3, {"a"})
    assert list(view.listed) == [("a", "t2"), ("a", "t1"), ("a", "t3")]


class _Session:
    def __init__(self) -> None:
        self.told = 0

    async def send_tool_list_changed(self) -> None:
        self.told += 1


class _Bus:
    async def publish(self, _event: object) -> None:
        return None


def test_one_sessions_list_change_is_told_to_that_session_and_a_power_change_to_all() -> None:
    notifier = _Notifier(_Bus())  # type: ignore[arg-type]
    mine, theirs = _Session(), _Session()
    notifier.remember("http-1", mine)  # type: ignore[arg-type]
    notifier.remember("http-2", theirs)  # type: ignore[arg-type]
    anyio.run(lambda: notifier.tools_changed(session="http-1"))
    assert (mine.told, theirs.told) == (1, 0)
    anyio.run(notifier.tools_changed)  # a power started or stopped: every client
    assert (mine.told, theirs.told) == (2, 1)
