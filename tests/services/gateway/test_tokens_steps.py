"""Token accounting of a multi-step request (issue 16): the answer is counted with its ``parts``, and on
"activated" the tool definitions of each step's best power come on top, since the answer asks the agent
to activate them. The gateway-demo catalog indexed with the hashing embedder; the parts are put into the
real resolution at the service layer until the resolver fills them itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from services.gateway.service import render_answer
from services.gateway.tokens import (
    account_tokens,
    first_answer,
    gateway_definitions_tokens,
    power_definitions,
)
from services.resolve.read_path import ReadPath
from services.root.container import Container
from tests.support.api_helpers import make_template
from tool_selector.config.settings import Settings
from tool_selector.core.models import QueryPart, Resolution
from tool_selector.core.tokens import count_tokens
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.resolve.evidence import CatalogTerms
from tool_selector.resolve.resolver import Resolver

HASHING = HashingEmbedder(dim=384)  # the packaged calibration reads 384-dimension vectors
REQUEST = "get the current time in Tokyo and then fetch the page https://example.com"


def test_an_activated_multi_step_request_counts_its_parts_and_lists_only_the_started_powers_named_tools(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache")
    data = make_template(tmp_path, settings, HASHING)
    original = Resolver.resolve
    parts = [
        QueryPart(text="get the current time in Tokyo", powers=["time"], tools=["time::get_current_time"]),
        QueryPart(text="fetch the page https://example.com", powers=["fetch"], tools=["fetch::fetch"]),
    ]

    def resolve(self: Resolver, query: str, terms: CatalogTerms, **kwargs: Any) -> Resolution:
        resolution = original(self, query, terms, **kwargs)
        ranked = sorted(resolution.powers, key=lambda p: p.name != "time")
        update = {"parts": parts, "powers": ranked, "confidence": 0.95, "top3_confidence": 0.99}
        return resolution.model_copy(update=update)

    monkeypatch.setattr(Resolver, "resolve", resolve)
    with Container(settings.model_copy(update={"data_dir": data}), embedder=HASHING) as container:
        read_path = ReadPath.fixed(container)
        (line,) = account_tokens(read_path, [REQUEST]).lines
        decision = read_path.decide(REQUEST).decision
        powers = read_path.snapshot().powers
    assert (line.status, line.power) == ("activated", "time")
    shown = first_answer(powers, decision, REQUEST)
    answer = render_answer(shown.as_json())
    assert '"parts"' in answer and '"activate_power", "arguments": {"name": "fetch"}' in answer
    call = json.dumps({"name": "resolve_intent", "arguments": {"query": REQUEST}}, ensure_ascii=False)
    listed = power_definitions(powers["time"], shown.shown)  # fetch is listed once activated
    expected = gateway_definitions_tokens() + count_tokens(call) + count_tokens(answer)
    assert line.gateway_tokens == expected + count_tokens(json.dumps({"tools": listed}, ensure_ascii=False))
