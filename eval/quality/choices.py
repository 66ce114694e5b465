"""The lab's choices of phrasing and reading, in a module light enough for ``tool-selector --help``
(the lab's commands offer them as options; eval/quality/dataset.py uses them)."""

from __future__ import annotations

from typing import Literal

# Which words of a request the resolver receives: the person's (queries.jsonl), the agent's
# (queries-agent.jsonl), or the agent's query with the person's words beside it as the request.
Phrasing = Literal["user", "agent", "both"]
PHRASINGS: tuple[Phrasing, ...] = ("user", "agent", "both")
# With ``both``, what the resolver reads of the two (eval/quality/readings.py).
Reading = Literal["arguments", "judged", "query", "joined", "fused"]
READINGS: tuple[Reading, ...] = ("arguments", "judged", "query", "joined", "fused")
