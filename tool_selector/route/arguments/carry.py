"""Which values of a session's earlier calls a later call may carry over.

A parameter that names where the session works (a repository, a project, a database) keeps its value from
one call to the next; what one call is about (a file's path, a message, a time zone, a text to write) is
the request's own: an earlier one filled in would act on the wrong thing (played as an agent: "what time
is it in Sydny" was sent to Asia/Tokyo, a delete became a write of an earlier to-do list).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

_PLACE = re.compile(
    r"(^|_)(repo|repository|root|workspace|project|owner|org|organization|database|db|bucket|account|cwd)"
    r"(_|$)|(^|_)(working|base|project|repo|root)_(dir|directory|folder|path)$"
)


def names_a_place(parameter: str) -> bool:
    """Whether ``parameter`` names where the session works (``repo_path``, ``projectId``, ``database``)."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", parameter).lower().replace("-", "_")
    return bool(_PLACE.search(snake))


def carried(required: Collection[str], given: Collection[str], passed: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``passed`` (what the session always passed each parameter of this power) for the
    ``required`` parameters the request did not give (``given``) that name where the session works."""
    return {r: passed[r] for r in required if r not in given and r in passed and names_a_place(r)}
