"""The next call's arguments over a session: the request's words, as written and as the speller reads them,
and which values of the session's earlier calls a later call may carry over (``next_arguments``).

A parameter that names where the session works (a repository, a project, a database, a region) keeps its
value from one call to the next; what one call is about (a file's path, a message, a time zone, a text to
write, a domain to check, where something goes to) is the request's own: an earlier one filled in would
act on the wrong thing (played as an agent: "what time is it in Sydny" was sent to Asia/Tokyo, a delete
became a write of an earlier to-do list). The whole name must read as a place: a place word, optionally
followed by what identifies it (``repo_path``, ``projectId``, ``spreadsheet_id``, ``workdir``); a
direction (``to_account``, ``target_repo``), a secret (``db_password``) or anything else (``root_domain``,
``project_summary``) never carries.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from tool_selector.route.arguments.fill import fill_arguments

PLACES = frozenset(
    "repo repository root workspace project owner org organization organisation database db bucket account "
    "cwd workdir spreadsheet region environment env team namespace tenant subscription dataset base site "
    "cluster schema catalog warehouse board space vault".split()
)
IDENTIFIES = frozenset("id ids slug path dir directory folder name url uri ref".split())  # never a key
QUALIFIERS = frozenset("working aws gcp azure cloud default current".split())  # aws_region, working_dir
_SPLIT = re.compile(r"[^a-z0-9]+")


def _words(parameter: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", parameter)
    return [w for w in _SPLIT.split(spaced.lower()) if w]


def names_a_place(parameter: str) -> bool:
    """Whether ``parameter`` names where the session works (``repo_path``, ``projectId``, ``database``)."""
    words = _words(parameter)
    if len(words) == 2 and words[0] in QUALIFIERS and words[1] in {"dir", "directory", "folder"}:
        return True  # working_dir, current_directory
    if words and words[0] in QUALIFIERS:
        words = words[1:]
    if len(words) == 1:  # one word, or words run together: "projectid", "workdir"
        word = words[0]
        return word in PLACES or any(word == p + i for p in PLACES for i in IDENTIFIES)
    return (
        len(words) == 2 and words[0] in PLACES and (words[1] in IDENTIFIES or words[1] in PLACES - {"base"})
    )


def carried(required: Collection[str], given: Collection[str], passed: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``passed`` (what the session always passed each parameter of this power) for the
    ``required`` parameters the request did not give (``given``) that name where the session works."""
    return {r: passed[r] for r in required if r not in given and r in passed and names_a_place(r)}


def next_arguments(
    schema: dict[str, Any],
    texts: Sequence[str],
    *,
    respelled: str = "",
    passed: Mapping[str, Any] | None = None,
    now: datetime | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The arguments ``texts`` give for a tool's parameters (the user's words first: a value an earlier
    text gives wins); then those the user's words as the speller reads them (``respelled``: "tiem" ->
    "time" tells the filler "Sydney" is a time zone) add, only when that reading agrees with every value
    already given and each added value's own words are in the user's words as written (a name corrected
    into another word, or a value moved to another parameter, is never taken); then the ``passed`` values
    ``carried`` over. Returns the arguments and the required parameters still without a value."""
    arguments: dict[str, Any] = {}
    for text in dict.fromkeys(t for t in texts if t):
        found = fill_arguments(text, schema, now=now)
        arguments |= {k: v for k, v in found.arguments.items() if k not in arguments}
    if respelled and texts and respelled != texts[0]:
        read = fill_arguments(respelled, schema, now=now)
        written = texts[0].casefold()
        if all(read.arguments.get(k, v) == v for k, v in arguments.items()):
            arguments |= {
                k: v
                for k, v in read.arguments.items()
                if k not in arguments and read.sources.get(k, "\0").casefold() in written
            }
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    arguments |= carried(required, arguments, passed or {})
    return arguments, [r for r in required if r not in arguments]
