"""What the gateway records of a session for its memory (services/gateway/memory/recording.py): a choice is
remembered only after a successful call of the chosen power's tool within the window; a remembered
choice the agent goes back on is refuted; the request's words are kept only when allowed; nothing is
recorded with the memory off. Real catalog database; the request vectors are given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.gateway.memory.recording import ChoiceMemory
from services.root.container import Container
from tool_selector.catalog import memory as rows
from tool_selector.config.memory import MemorySettings
from tool_selector.config.settings import Settings
from tool_selector.core.models import Decision, PowerCandidate, PowerSummary, Resolution, ToolSummary
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.route.memory import MemoryModel, Recalled, Remembered
from tool_selector.route.tiers import PowerInfo, tools_hash

POWERS = {
    name: PowerInfo(name=name, description="", tools=[ToolSummary(name="get", description="get it")])
    for name in ("redis", "memcache")
}


def resolution(text: str, vector: np.ndarray) -> Resolution:
    found = Resolution(query=text, mode="hybrid", tools=[], powers=[], confidence=0.5, top3_confidence=0.9)
    return found.with_vector(vector / np.linalg.norm(vector))


TIE = Decision(
    status="multiple_matches",
    confidence=0.5,
    query="q",
    message="m",
    matches=[PowerSummary(power="redis", description=""), PowerSummary(power="memcache", description="")],
)


@pytest.fixture
def memory(tmp_path: Path) -> ChoiceMemory:
    settings = Settings(data_dir=tmp_path, memory=MemorySettings(window_calls=4))
    return ChoiceMemory(Container(settings, embedder=HashingEmbedder(dim=4)))


def remembered(memory: ChoiceMemory) -> list[rows.Choice]:
    return rows.list_choices(memory.container.store.database)


def test_a_successful_call_of_the_chosen_power_is_remembered_without_the_words(memory: ChoiceMemory) -> None:
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None)
    memory.on_activate("s", "redis")
    memory.on_call("s", "memcache", "get", ok=True)  # another power than the one chosen
    assert remembered(memory) == []
    memory.on_call("s", "redis", "get", ok=False)  # an error confirms nothing
    assert remembered(memory) == []
    memory.on_call("s", "redis", "get", ok=True)
    [choice] = remembered(memory)
    assert (choice.power, choice.tool, choice.request, choice.confirmed) == ("redis", "get", None, 1)
    assert (
        choice.tools_hash == tools_hash(POWERS["redis"])
        and choice.model == memory.container.embedder.model_id
    )


def test_calls_past_the_window_or_in_another_session_confirm_nothing(memory: ChoiceMemory) -> None:
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None)
    memory.on_call("other", "redis", "get", ok=True)
    for _ in range(4):
        memory.on_other("s")
    memory.on_call("s", "redis", "get", ok=True)
    assert remembered(memory) == []


def test_the_words_are_kept_only_when_allowed_and_nothing_with_the_memory_off(tmp_path: Path) -> None:
    for keep, enabled, expected in ((True, True, ["list my keys"]), (False, False, [])):
        settings = Settings(
            data_dir=tmp_path / str(keep), memory=MemorySettings(keep_text=keep, enabled=enabled)
        )
        memory = ChoiceMemory(Container(settings, embedder=HashingEmbedder(dim=4)))
        memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None)
        memory.on_call("s", "redis", "get", ok=True)  # calling a shown power's tool chooses it
        assert [c.request for c in remembered(memory)] == expected


def _fired(memory: ChoiceMemory) -> Recalled:
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None)
    memory.on_call("s", "redis", "get", ok=True)
    [choice] = remembered(memory)
    return Recalled(
        Remembered(choice.id, "redis", "get", choice.tools_hash, 1, 0, choice_time(choice)), 1.0, (1.0,) * 5
    )


def choice_time(choice: rows.Choice):  # type: ignore[no-untyped-def]
    from datetime import datetime

    return datetime.fromisoformat(choice.confirmed_at)


def test_a_remembered_choice_the_agent_goes_back_on_is_refuted(memory: ChoiceMemory) -> None:
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_deactivate("s", "redis")  # stopped without a call
    assert remembered(memory)[0].refuted == 1
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_resolve("s", resolution("show the keys", np.array([1, 1, 1, 0.5])), TIE, POWERS, None)
    assert remembered(memory)[0].refuted == 1  # rephrased: only the agent's next choice tells
    memory.on_activate("s", "memcache")  # another power for the same request
    assert remembered(memory)[0].refuted == 2
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_resolve("s", resolution("unrelated", np.array([1.0, -1, -1, -1])), TIE, POWERS, None)
    memory.on_activate("s", "memcache")
    assert remembered(memory)[0].refuted == 2  # a new, different request is no rephrasing


def test_a_retry_of_the_same_words_refutes_nothing(memory: ChoiceMemory) -> None:
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_resolve("s", resolution("List  my keys", np.ones(4)), TIE, POWERS, None)  # asked again
    memory.on_activate("s", "memcache")
    memory.on_call("s", "memcache", "get", ok=True)
    assert [(c.power, c.refuted) for c in remembered(memory)] == [("memcache", 0), ("redis", 0)]


def test_the_next_different_request_after_a_remembered_activation_refutes_nothing(
    memory: ChoiceMemory,
) -> None:
    """Issue 42: a new request is no correction of the remembered choice: a neighbouring one (0.59 close)
    the agent serves with another power, or a close one (0.87) it serves with the remembered power."""
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    near, close = np.array([1.0, 1.0, 0.0, -0.3]), np.array([1.0, 1.0, 1.0, 0.0])
    for vector, chosen, closeness in ((near, "memcache", (0.5, 0.6)), (close, "redis", (0.8, 0.9))):
        assert closeness[0] < float(vector @ np.ones(4)) / np.linalg.norm(vector) / 2 < closeness[1]
        memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
        memory.on_resolve("s", resolution(f"another request for {chosen}", vector), TIE, POWERS, None)
        memory.on_activate("s", chosen)
        memory.on_call("s", chosen, "get", ok=True)
    assert {c.power: c.refuted for c in remembered(memory)} == {"redis": 0, "memcache": 0}


def test_a_request_after_a_call_of_the_remembered_power_is_new_and_refutes_nothing_however_close(
    memory: ChoiceMemory,
) -> None:
    """Issue 42, as played live (demo servers): a remembered "search files for TODO" activated
    filesystem, its call failed, then "search the git log for TODO" (0.67 close) was served by git and
    counted the remembered choice refuted once. The agent acted on the answer: what it asks next is new."""
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    close = np.array([1.0, 1.0, 1.0, 0.0])  # 0.87 close to the remembered request
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_call("s", "redis", "get", ok=False)  # tried, failed
    memory.on_resolve("s", resolution("list the memcache keys", close), TIE, POWERS, None)
    memory.on_activate("s", "memcache")
    memory.on_call("s", "memcache", "get", ok=True)
    assert {c.power: c.refuted for c in remembered(memory)} == {"redis": 0, "memcache": 0}


def test_a_request_in_other_words_of_the_user_is_new_however_close_the_queries(memory: ChoiceMemory) -> None:
    """With the user's words beside the query (resolve_intent's ``request``): other words of the user
    are a new request, however close the agent's queries; the same words, reworded close, still doubt;
    the same words asked far (a message's second request) do not."""
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    said, close = "show me what is cached", np.array([1.0, 1.0, 1.0, 0.0])
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired, words=said)
    memory.on_resolve("s", resolution("list all my keys", close), TIE, POWERS, None, words="and in memcache?")
    memory.on_activate("s", "memcache")
    assert remembered(memory)[0].refuted == 0  # a new request: other words of the user
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired, words=said)
    memory.on_resolve("s", resolution("list all my keys", close), TIE, POWERS, None, words=said)
    memory.on_activate("s", "memcache")  # another power for the same words of the user, reworded
    assert remembered(memory)[0].refuted == 1
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired, words=said)
    far = np.array([1.0, -1, -1, -1])
    memory.on_resolve("s", resolution("flush memcache", far), TIE, POWERS, None, words=said)
    memory.on_activate("s", "memcache")
    assert remembered(memory)[0].refuted == 1


def test_a_remembered_power_stopped_after_only_a_failed_call_is_refuted(memory: ChoiceMemory) -> None:
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_call("s", "redis", "get", ok=False)
    memory.on_deactivate("s", "redis")
    assert remembered(memory)[0].refuted == 1


def test_only_a_successful_call_of_a_tool_the_answer_named_confirms(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, memory=MemorySettings(window_calls=8))
    memory = ChoiceMemory(Container(settings, embedder=HashingEmbedder(dim=4)))
    tools = [ToolSummary(name=n, description=n) for n in ("get", "flush_all", "whoami")]
    powers = {
        "redis": PowerInfo(name="redis", description="", tools=tools),
        **{"memcache": POWERS["memcache"]},
    }
    ranked = [
        PowerCandidate(name="redis", score=1.0, match_type="hybrid", tools=["redis::get"]),
        PowerCandidate(name="memcache", score=0.9, match_type="hybrid", tools=["memcache::get"]),
    ]
    asked = resolution("list my keys", np.ones(4)).model_copy(update={"powers": ranked})
    asked = asked.with_vector(np.ones(4) / 2)
    shown = TIE.model_copy(
        update={
            "matches": [
                PowerSummary(power="redis", description="", tools=["get"]),
                PowerSummary(power="memcache", description="", tools=["get"]),
            ]
        }
    )
    memory.on_resolve("s", asked, shown, powers, None)
    memory.on_activate("s", "redis")
    memory.on_call("s", "redis", "whoami", ok=True)  # a tool of the power the answer did not name
    memory.on_call("s", "redis", "flush_all", ok=True)
    assert remembered(memory) == []
    memory.on_call("s", "redis", "get", ok=True)
    assert [(c.power, c.tool) for c in remembered(memory)] == [("redis", "get")]


def test_the_memory_sees_a_clear_from_another_process_at_its_next_look(memory: ChoiceMemory) -> None:
    _fired(memory)
    assert len(memory.index()) == 1
    rows.clear(Container(memory.container.settings).store.database)  # as `tool-selector memory clear` does
    assert len(memory.index()) == 0


def test_the_shipped_judge_loads_and_names_its_features() -> None:
    from tool_selector.route.memory import load_memory_model as shipped_model

    model = shipped_model()
    assert isinstance(model, MemoryModel) and model.features == [
        "similarity",
        "margin",
        "confirmations",
        "top3",
        "rank",
    ]
    assert all(w >= 0 for w in model.coefficients) and "leave_one_dataset_out" in model.provenance


def test_a_remembered_power_decides_only_while_it_is_configured(memory: ChoiceMemory) -> None:
    from tool_selector.core.models import PowerCandidate

    _fired(memory)  # "list my keys" served by redis
    ranked = [PowerCandidate(name=n, score=1.0, match_type="hybrid") for n in ("memcache", "redis")]
    asked = resolution("list my keys", np.ones(4)).model_copy(update={"powers": ranked})
    asked = asked.with_vector(np.ones(4) / 2)
    memory.model = MemoryModel(
        version="sure", intercept=8.0, coefficients=[0.0] * 5, mean=[0.0] * 5, scale=[1.0] * 5
    )
    decided, fired = memory.decide("t", asked, TIE, POWERS)
    assert (decided.status, decided.power, fired is not None) == ("activated", "redis", True)
    memory.runnable = lambda: {"memcache"}  # the operator removed redis from the configuration
    assert memory.decide("t", asked, TIE, POWERS) == (TIE, None)


SURE = MemoryModel(version="sure", intercept=8.0, coefficients=[0.0] * 5, mean=[0.0] * 5, scale=[1.0] * 5)


def _asked() -> Resolution:
    from tool_selector.core.models import PowerCandidate

    ranked = [PowerCandidate(name=n, score=1.0, match_type="hybrid") for n in ("memcache", "redis")]
    asked = resolution("list my keys", np.ones(4)).model_copy(update={"powers": ranked})
    return asked.with_vector(np.ones(4) / 2)


def test_a_principals_choices_are_confirmed_and_decide_only_for_that_principal(memory: ChoiceMemory) -> None:
    memory.model = SURE
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None, principal="key:b")
    memory.on_call("s", "redis", "get", ok=True, principal="key:a")  # another key, the same session id
    assert remembered(memory) == []
    memory.on_call("s", "redis", "get", ok=True, principal="key:b")
    assert [(c.principal, c.power) for c in remembered(memory)] == [("key:b", "redis")]
    decided, fired = memory.decide("t", _asked(), TIE, POWERS, principal="key:b")
    assert (decided.status, decided.power, fired is not None) == ("activated", "redis", True)
    for other in ("key:a", rows.LOCAL, None):
        assert memory.decide("t", _asked(), TIE, POWERS, principal=other) == (TIE, None)


def test_a_caller_that_may_not_call_leaves_nothing_to_confirm_or_refute(memory: ChoiceMemory) -> None:
    fired = _fired(memory)
    activated = TIE.model_copy(update={"status": "activated", "power": "redis", "matches": None})
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired, confirms=False)
    memory.on_deactivate("s", "redis")
    memory.on_resolve(
        "s", resolution("show the keys", np.array([1, 1, 1, 0.5])), TIE, POWERS, None, confirms=False
    )
    memory.on_activate("s", "memcache")  # a viewer's rephrasing doubts nothing
    memory.on_resolve(
        "v", resolution("stats please", np.array([1.0, 0, 0, 0])), TIE, POWERS, None, confirms=False
    )
    memory.on_call("v", "memcache", "get", ok=True)
    assert [(c.power, c.confirmed, c.refuted) for c in remembered(memory)] == [("redis", 1, 0)]


def test_a_write_of_one_principal_leaves_anothers_memory_in_ram(memory: ChoiceMemory) -> None:
    def write(principal: str, key: str) -> None:
        rows.remember(
            memory.container.store.database,
            request_hash=key,
            power="redis",
            tool="get",
            tools_hash="h",
            model=memory.container.embedder.model_id,
            vector=np.ones(4, np.float32) / 2,
            request=None,
            principal=principal,
        )

    write("key:a", "1")
    mine, theirs = memory.index("key:a"), memory.index("key:b")
    assert (len(mine), len(theirs)) == (1, 0)
    write("key:b", "2")
    assert memory.index("key:a") is mine and len(memory.index("key:b")) == 1
    rows.clear(memory.container.store.database)
    assert len(memory.index("key:a")) == 0


def test_a_write_the_disk_refuses_is_logged_and_never_raised(
    memory: ChoiceMemory, caplog: pytest.LogCaptureFixture
) -> None:
    memory.container.store.database.execute("PRAGMA query_only=ON")  # every write refused, as by a full disk
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), TIE, POWERS, None)
    memory.on_call("s", "redis", "get", ok=True)
    assert remembered(memory) == []
    assert any("could not remember a confirmed choice" in r.getMessage() for r in caplog.records)


def test_this_processes_own_write_is_followed_without_reading_the_memory_again(
    memory: ChoiceMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fired(memory)
    assert len(memory.index()) == 1  # read once, as a running gateway holds it

    def read_all(*args: object, **kwargs: object) -> list[rows.Choice]:
        raise AssertionError("the whole memory was read again")

    monkeypatch.setattr(rows, "list_choices", read_all)
    memory.on_resolve("s", resolution("flush the cache", np.array([1.0, -1, 0, 0])), TIE, POWERS, None)
    memory.on_call("s", "memcache", "get", ok=True)
    followed = memory.index()
    assert len(followed) == 2
    recalled = followed.recall(
        np.array([1.0, -1, 0, 0]) / np.sqrt(2), ["memcache", "redis"], POWERS, 0.9, max_age_days=1
    )
    assert recalled is not None and recalled.choice.power == "memcache"


def test_past_max_choices_the_oldest_goes_from_the_database_and_from_ram(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, memory=MemorySettings(max_choices=1))
    memory = ChoiceMemory(Container(settings, embedder=HashingEmbedder(dim=4)))
    _fired(memory)
    assert len(memory.index()) == 1
    memory.on_resolve("s", resolution("flush the cache", np.array([1.0, -1, 0, 0])), TIE, POWERS, None)
    memory.on_call("s", "memcache", "get", ok=True)
    assert [c.power for c in remembered(memory)] == ["memcache"]
    assert len(memory.index()) == 1


def test_a_choice_kept_from_schema_8_is_used_for_the_local_user_and_a_clear_reaches_it(
    tmp_path: Path,
) -> None:
    import sqlite3
    from contextlib import closing

    from tests.tool_selector.route.test_memory import V8_CHOICES

    settings = Settings(data_dir=tmp_path)
    embedder = HashingEmbedder(dim=4)
    Container(settings, embedder=embedder).store.close()
    vector = np.ones(4, np.float32) / 2
    with closing(sqlite3.connect(tmp_path / "catalog.db")) as db, db:  # a catalog of schema version 8
        db.execute("DROP TABLE choices")
        db.execute(V8_CHOICES)
        db.execute(
            "INSERT INTO choices(request_hash, power, tool, tools_hash, model, vector, created_at, "
            "confirmed_at) VALUES ('a', 'redis', 'get', ?, ?, ?, '2026-11-01T00:00:00+00:00', "
            "'2026-11-01T00:00:00+00:00')",
            (tools_hash(POWERS["redis"]), embedder.model_id, vector.tobytes()),
        )
        db.execute("UPDATE meta SET value='8' WHERE key='schema_version'")
        db.execute("DELETE FROM meta WHERE key LIKE 'choices_generation%'")
    memory = ChoiceMemory(Container(settings, embedder=embedder))
    assert len(memory.index(rows.LOCAL)) == 1 and len(memory.index("key:0123456789ab")) == 0
    rows.clear(Container(settings).store.database)  # `tool-selector memory clear`, another process
    assert len(memory.index(rows.LOCAL)) == 0
