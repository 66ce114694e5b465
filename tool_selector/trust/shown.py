"""What an agent is shown of the catalog and of the upstream servers, as it leaves.

- Every text is stripped of the characters a person cannot see (``tool_selector.trust.text``):
  ``for_agent`` on a JSON answer, ``model_for_agent`` on a response model. The adapters call them once,
  at the boundary: the gateway's answers, errors and tool list, the REST resolve decision.
- A server's description and its ``instructions`` (shown as ``steering``) are withheld when the scanner
  says "quarantine": a short note stands in their place (``server_description``, ``server_instructions``).
- A description is cut to ``limits.DESCRIPTION_CHARS``, whatever was stored (``limits.cut``).
- Where a server is one candidate among others (resolve answers, catalog_query's servers) it is shown by its
  one-line purpose (``server_purpose``), never by its ``instructions``: those are the model's steering,
  read once per session when the power starts.

Stored text is never changed: the catalog, its audit and the operator's routes keep what was written.
Tool results are not text of the catalog: they pass unchanged, only size-capped
(``services/gateway/results.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel

from tool_selector.trust.limits import DESCRIPTION_CHARS, cut
from tool_selector.trust.scanner import scan_text
from tool_selector.trust.text import clean_json

M = TypeVar("M", bound=BaseModel)

PURPOSE_TOOLS = 5  # tools a purpose built from a server's tools names
WITHHELD = (
    "[withheld by tool-selector: this server's {what} looked like a prompt injection aimed at the model. "
    "An operator can review the text with `tool-selector scan`.]"
)


def for_agent(answer: dict[str, Any]) -> dict[str, Any]:
    """``answer`` with every string (keys included) stripped of invisible characters."""
    cleaned = clean_json(answer)
    assert isinstance(cleaned, dict)
    return cleaned


def model_for_agent(model: M) -> M:
    """``model`` rebuilt from its JSON with every string stripped of invisible characters; the model
    itself when its JSON is plain ASCII without escaped control characters (most answers: a fast path
    for the REST API's cached resolves)."""
    text = model.model_dump_json()
    if text.isascii() and "\\u00" not in text:
        return model
    return type(model).model_validate(clean_json(model.model_dump(mode="json")))


@lru_cache(maxsize=2048)
def _quarantined(text: str, field: str) -> bool:
    """One scan per distinct text (resolve answers repeat the same descriptions all day)."""
    return scan_text(text, field=field).verdict == "quarantine"


def _withheld(text: str, field: str, what: str) -> str:
    sample = text[:DESCRIPTION_CHARS]  # no more is ever shown, and a scan stays fast
    if sample.strip() and _quarantined(sample, field):
        return WITHHELD.format(what=what)
    return text


def server_description(text: str) -> str:
    """A server's description as an agent may read it: withheld or cut, never longer than the cap."""
    return cut(_withheld(text, "description", "description"))


def server_instructions(text: str) -> str:
    """A server's ``instructions`` (its steering for the model) as an agent may read them."""
    return _withheld(text, "instructions", "instructions")


def own_description(description: str, metadata: Mapping[str, Any]) -> str:
    """The description a server gives itself, or "" when discovery stood the start of its ``instructions``
    in for a missing one (text written for a model, which would match every request's words)."""
    instructions, own = metadata.get("instructions"), description.strip()
    return "" if isinstance(instructions, str) and instructions.strip().startswith(own) else own


def server_purpose(description: str, metadata: Mapping[str, Any], tools: Sequence[str]) -> str:
    """What a server is for, in one line: the description it gives itself, else the operator's
    ``steering`` kept at sync (the gateway puts the servers file's steering first: service.py ``_blurbs``),
    else a line naming its tools. Never its ``instructions``: discovery stands their start in for a
    missing description (services/write/discovery.py), and that text is written for a model ("Audience:
    ... an LLM ..."), so a description that is the start of the instructions counts as none. Stored text
    is not changed: the description stays pinned as it was."""
    own = own_description(description, metadata)
    if own:
        return server_description(own)
    steering = metadata.get("steering")
    if isinstance(steering, str) and steering.strip():
        return cut(steering.strip())
    if not tools:
        return ""
    end = ", ..." if len(tools) > PURPOSE_TOOLS else "."
    return cut(f"Its tools: {', '.join(tools[:PURPOSE_TOOLS])}{end}")
