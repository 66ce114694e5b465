"""The next call's arguments: the request's values mapped to a tool's parameters by type and name.

Passes run from the surest evidence to the weakest, each taking only values no earlier pass took: a
value named by its parameter ("branch called X", "project billing", "subject 'Q3'"), then by kind (URL,
e-mail, path, ID and hash, time zone, place, date and time, currency, language, ticker, enum), then the
words of a search ("search arxiv for X"), numbers (next to their parameter's name; counts only when the
words say so; coordinates and generic pairs in order), and last what is left for the required
parameters that take any text. Two parameters of one kind (source and target, start and end) are told
apart by the request's words ("from", "to", "since", the zone the given time belongs to), then by order.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict

from tool_selector.route.arguments import kinds, numbers, text
from tool_selector.route.arguments.parameters import parameters_of
from tool_selector.route.arguments.spans import spans_of
from tool_selector.route.arguments.state import State


class Filled(BaseModel):
    """What the request gives for a tool's parameters."""

    model_config = ConfigDict(frozen=True)

    arguments: dict[str, Any]  # parameter -> value, in the JSON type of the schema, in the schema's order
    missing: list[str]  # the required parameters the request gives no value for: questions for the user
    sources: dict[str, str]  # parameter -> the part of the request its value came from


_PASSES = (
    kinds.phones, kinds.owner_repo, kinds.buckets, kinds.assignments, kinds.cells, text.versions, text.named,
    text.quoted, text.called,
    kinds.urls_and_emails, kinds.paths, kinds.identifiers, kinds.zones, kinds.places, kinds.dates_and_times,
    kinds.currencies, kinds.languages_and_symbols, kinds.enums, text.search_words, numbers.numbers,
    kinds.expressions, text.by_role, text.after_colon, text.leftovers,
)  # fmt: skip


def fill_arguments(text: str, input_schema: dict[str, Any], *, now: datetime | None = None) -> Filled:
    """The values the request gives for the tool's parameters, the required ones it does not give, and
    where each value came from. Nothing is invented: a parameter the request says nothing about is left
    out (its default is the tool's business). Relative dates ("yesterday", "since Monday") and dates
    without a year are read against ``now``; without it they give no value."""
    params = parameters_of(input_schema if isinstance(input_schema, dict) else {})
    state = State(text, spans_of(text, now), now)
    for step in _PASSES:
        step(state, params)
    arguments = {p.name: state.values[p.name] for p in params if state.values.get(p.name) is not None}
    missing = [p.name for p in params if p.required and p.name not in arguments]
    return Filled(
        arguments=arguments, missing=missing, sources={name: state.sources[name] for name in arguments}
    )
