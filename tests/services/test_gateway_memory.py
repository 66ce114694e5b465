"""What the gateway records of a session for its memory (services/gateway/choices.py): a choice is
remembered only after a successful call of the chosen power's tool within the window; a remembered
choice the agent goes back on is refuted; the request's words are kept only when allowed; nothing is
recorded with the memory off. Real catalog database; the request vectors are given."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from services.gateway.choices import ChoiceMemory
from services.shared.container import Container
from tool_selector.catalog import choices as rows
from tool_selector.config.groups import MemorySettings
from tool_selector.config.settings import Settings
from tool_selector.core.models import Decision, PowerSummary, Resolution, ToolSummary
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.route.remembered import MemoryModel, Recalled, Remembered
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
    memory.on_resolve(
        "s", resolution("show the keys", np.array([1, 1, 1, 0.5])), TIE, POWERS, None
    )  # rephrased
    assert remembered(memory)[0].refuted == 2
    memory.on_resolve("s", resolution("list my keys", np.ones(4)), activated, POWERS, fired)
    memory.on_resolve("s", resolution("unrelated", np.array([1.0, -1, -1, -1])), TIE, POWERS, None)
    assert remembered(memory)[0].refuted == 2  # a new, different request is no rephrasing


def test_the_memory_sees_a_clear_from_another_process_at_its_next_look(memory: ChoiceMemory) -> None:
    _fired(memory)
    assert len(memory.index()) == 1
    rows.clear(Container(memory.container.settings).store.database)  # as `tool-selector memory clear` does
    assert len(memory.index()) == 0


def test_the_shipped_judge_loads_and_names_its_features() -> None:
    from services.gateway.choices import shipped_model

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
