"""One conversation as an agent pays for it: a real ``tool-selector serve`` driven by the mcp Client.

A scripted agent works through a dataset's requests in order, in one gateway session, against the real
servers of a configuration (by default the 7 demo servers, in a fresh sandbox under /tmp/tsdemo). For each
request it does what an agent does:

- a tool of the gold slot is already in its tool list: it calls that tool directly (``direct``); one it
  called before in the conversation that has left the list (``gateway.max_listed``): it calls it through
  ``call_tool`` (``recalled``), as a helper playing the agent did: it knows the tool's name and arguments
  from its history;
- otherwise it calls ``resolve_intent`` (the agent's phrasing as ``query`` and, with ``--phrasing both``,
  the person's words as ``request``) and acts on the answer: ``activated`` -> the call the answer's next
  step names (the gold tool when that step names another); ``multiple_matches`` -> ``activate_power`` of
  the gold power when the answer shows it, then the call; ``weak_matches`` / ``not_found`` -> it tells the
  user. Its arguments are the next step's, completed with the dataset's gold arguments (what the user
  would answer when asked); a call it makes without asking adds, for a required parameter the request
  does not give, the value it passed that power's parameter before (the project's path).

Every model call carries what the agent must hold at that moment: the tool list (as the client lists it
now: the gateway's tools and the tools activation added) and every gateway answer read so far in the
conversation. The person's words and the tools' results are the same with or without the gateway and are
not counted. The baseline loads every tool of every configured (and, with ``--beside``, every catalog)
server up front and calls the right tool at once: two model calls per request it can serve (the call,
then the reply), one per request it cannot.

Printed: the context over the conversation against the baseline, the share of the requests it can serve
that ended in a call of a right tool (``served``), the gateway's answers (p50 / max tokens,
and those for an already active power), the tools listed at the end, and for the activations whether the
next step named a right tool and filled every required argument (and the gold values it matched).
Counted with the Claude tokenizer of ``tool_selector/core/tokens.py``.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp import StdioServerParameters, types
from mcp.client.client import Client

from eval.bench.gateway import _serve_env
from services.gateway.service import namespaced
from tool_selector.config.settings import Settings
from tool_selector.core.tokens import TOKENIZER_NAME, count_tokens
from tool_selector.route.arguments.carry import carried

_CLI = Path(sys.executable).parent / "tool-selector"
SANDBOX = Path("/tmp/tsdemo")
GATEWAY_TOOLS = ("resolve_intent", "activate_power", "deactivate_power", "call_tool", "catalog_query")
Phrasing = Literal["user", "agent", "both"]


@dataclass
class Request:
    id: str
    query: str
    agent_query: str
    tier: str
    gold_servers: list[str]
    gold_slot: list[str]  # "server::tool", the first slot's tools
    gold_arguments: dict[str, Any]
    missing_required: list[str] = field(default_factory=list)  # required values the request does not give

    @property
    def answerable(self) -> bool:
        return bool(self.gold_slot)


@dataclass
class Turn:
    """What one request cost and what the gateway answered."""

    id: str
    status: str = "direct"
    model_calls: int = 0
    context_tokens: int = 0
    listed_tokens: int = 0  # of context_tokens: the tool lists (the rest: the answers read so far)
    answer_tokens: list[int] = field(default_factory=list)
    already_active_tokens: list[int] = field(default_factory=list)
    next_tool: str | None = None
    next_right: bool | None = None
    required_filled: bool | None = None
    gold_values_matched: bool | None = None
    called: str | None = None
    call_error: bool = False


def read_requests(folder: Path) -> list[Request]:
    rows = [
        json.loads(line)
        for line in (folder / "queries.jsonl").read_text(encoding="utf-8").splitlines()
        if line
    ]
    requests = []
    for row in rows:
        slots = row.get("gold_tool_groups") or []
        requests.append(
            Request(
                id=row["id"],
                query=row["query"],
                agent_query=row.get("agent_query") or row["query"],
                tier=row.get("expected_tier", ""),
                gold_servers=list(row.get("gold_servers") or []),
                gold_slot=list(slots[0]) if slots else [],
                gold_arguments=dict(row.get("gold_arguments") or {}),
                missing_required=list(row.get("missing_required") or []),
            )
        )
    return requests


def make_sandbox(root: Path = SANDBOX) -> Path:
    """The folder the demo's filesystem server serves, as demo-conversations/README.md describes it."""
    if root.exists():
        shutil.rmtree(root)
    files = {
        "docs/guide.md": "# Guide\n\nInstall with pip, then run `app serve`.\n",
        "docs/api.md": "# API\n\nGET /items lists items.\n",
        "docs/changelog.md": "# Changelog\n\n## 1.2\n- login page\n",
        "notes/todo.md": "- renew the TLS certificate\n- email Marco\n",
        "notes/ideas.md": "- a dark mode\n",
        "notes/ideas-old.md": "- an old idea\n",
        "reports/q3.csv": "month,revenue\njul,120\naug,135\nsep,128\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    project = root / "project"
    (project / "src").mkdir(parents=True)
    (project / "tests").mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "Demo",
        "GIT_AUTHOR_EMAIL": "demo@example.com",
        "GIT_COMMITTER_NAME": "Demo",
        "GIT_COMMITTER_EMAIL": "demo@example.com",
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    for message, name, text in (
        ("first commit", "README.md", "# project\n"),
        ("add the app", "src/app.py", "def main():\n    return 1\n"),
        ("add utils and tests", "src/util.py", "def helper():\n    return 2\n"),
    ):
        (project / name).write_text(text, encoding="utf-8")
        if name == "src/util.py":
            (project / "tests/test_app.py").write_text(
                "def test_main():\n    assert True\n", encoding="utf-8"
            )
        git("add", "-A")
        git("commit", "-q", "-m", message)
    git("branch", "feature/login")
    (project / "src/util.py").write_text("def helper():\n    return 3\n", encoding="utf-8")
    git("add", "src/util.py")
    (project / "src/app.py").write_text("def main():\n    return 2\n", encoding="utf-8")
    (project / "notes.txt").write_text("untracked\n", encoding="utf-8")
    return root


def _definitions_tokens(tools: Sequence[types.Tool]) -> int:
    """A tool list as the model reads it: each tool's name, description and input schema, as JSON."""
    listed = [
        {"name": t.name, "description": t.description or "", "input_schema": t.input_schema} for t in tools
    ]
    return count_tokens(json.dumps({"tools": listed}, ensure_ascii=False)) if listed else 0


def _text(result: types.CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, types.TextContent))


def _answer(result: types.CallToolResult) -> dict[str, Any]:
    if isinstance(result.structured_content, dict):
        return result.structured_content
    try:
        found = json.loads(_text(result))
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def _next_call(answer: dict[str, Any]) -> tuple[str, str, dict[str, Any]] | None:
    """The (power, tool, arguments) of the answer's first suggested call, if it suggests one."""
    for step in answer.get("suggested_next_actions") or answer.get("next") or []:
        if not isinstance(step, dict):
            continue
        args = step.get("arguments") or {}
        if step.get("tool") == "call_tool" and args.get("tool"):
            return str(args.get("power")), str(args["tool"]), dict(args.get("arguments") or {})
    return None


def _filled(value: Any) -> bool:
    return value not in (None, "", [], {})


def _same(got: Any, gold: Any) -> bool:
    """The next step's value is the gold one; a relative path the request gave counts for the gold's
    absolute path that ends with it (the request cannot say the sandbox's root)."""
    if isinstance(got, str) and isinstance(gold, str):
        got, gold = got.strip().lower().rstrip("/"), gold.strip().lower().rstrip("/")
        return got == gold or (not got.startswith("/") and "/" in gold and gold.endswith("/" + got))
    return bool(got == gold)


class Agent:
    """The scripted agent in one gateway session (see the module docstring)."""

    def __init__(self, client: Client, phrasing: Phrasing, schemas: dict[str, dict[str, Any]]) -> None:
        self.client = client
        self.phrasing = phrasing
        self.schemas = schemas  # "server::tool" -> input schema, from the catalog the dataset names
        self.tools: list[types.Tool] = []
        self.history = 0  # gateway answers read so far in the conversation (tokens)
        self.active: set[str] = set()  # the powers its answers said were activated (less those evicted)
        self.called: set[tuple[str, str]] = set()  # (power, tool) it called without an error
        self.passed: dict[str, dict[str, Any]] = {}  # power -> parameter -> the value it last passed

    async def refresh(self) -> None:
        self.tools = list((await self.client.list_tools()).tools)

    def listed(self) -> dict[str, types.Tool]:
        return {t.name: t for t in self.tools}

    def think(self, turn: Turn) -> None:
        """One model call: it carries the tool list and every answer read so far."""
        listed = _definitions_tokens(self.tools)
        turn.model_calls += 1
        turn.context_tokens += listed + self.history
        turn.listed_tokens += listed

    async def gateway(self, turn: Turn, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        tokens = count_tokens(_text(result))
        self.history += tokens
        turn.answer_tokens.append(tokens)
        answer = _answer(result)
        power = answer.get("power")
        if answer.get("status") == "activated" and isinstance(power, str):
            if power in self.active:  # a power this session activated before: the short answer
                turn.already_active_tokens.append(tokens)
            self.active.add(power)
        evicted = answer.get("stopped_to_make_room")
        self.active -= set(evicted) if isinstance(evicted, list) else set()
        await self.refresh()
        return answer

    async def call(self, turn: Turn, power: str, tool: str, arguments: dict[str, Any]) -> None:
        name = namespaced(power, tool)
        if name in self.listed():
            result = await self.client.call_tool(name, arguments)
        else:
            result = await self.client.call_tool(
                "call_tool", {"power": power, "tool": tool, "arguments": arguments}
            )
        turn.called = f"{power}::{tool}"
        turn.call_error = bool(result.is_error)
        if not result.is_error:
            self.called.add((power, tool))
            self.passed.setdefault(power, {}).update(arguments)
        await self.refresh()

    def own_arguments(self, power: str, tool: str, gold: dict[str, Any]) -> dict[str, Any]:
        """A call it makes without asking: the request's values, and for a required parameter the request
        does not give that names where it works (carry.py), the value it passed that power before."""
        schema = self.schemas.get(f"{power}::{tool}") or {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        return {
            **carried(required, gold, self.passed.get(power, {})),
            **gold,
        }  # where it works, as the gateway

    def direct_hit(self, request: Request) -> tuple[str, str, str] | None:
        """A tool of the gold slot it can call without asking: listed, else one it called before."""
        slot = [g.partition("::")[::2] for g in request.gold_slot]
        for power, tool in slot:
            if namespaced(power, tool) in self.listed():
                return power, tool, "direct"
        for power, tool in slot:
            if (power, tool) in self.called:
                return power, tool, "recalled"
        return None

    def resolve_arguments(self, request: Request) -> dict[str, Any]:
        if self.phrasing == "user":
            return {"query": request.query}
        if self.phrasing == "agent":
            return {"query": request.agent_query}
        return {"query": request.agent_query, "request": request.query}

    def judge_next(self, turn: Turn, request: Request, step: tuple[str, str, dict[str, Any]] | None) -> None:
        if step is None:
            turn.next_right, turn.required_filled = False, False
            return
        power, tool, args = step
        turn.next_tool = f"{power}::{tool}"
        turn.next_right = turn.next_tool in request.gold_slot
        schema = self.schemas.get(turn.next_tool) or {}
        required = [r for r in schema.get("required") or [] if isinstance(r, str)]
        turn.required_filled = all(_filled(args.get(r)) for r in required)
        if turn.next_right and request.gold_arguments:
            turn.gold_values_matched = all(
                k in args and _same(args[k], v) for k, v in request.gold_arguments.items()
            )

    async def serve(self, request: Request) -> Turn:
        turn = Turn(request.id)
        hit = self.direct_hit(request)
        if hit is not None:
            turn.status = hit[2]
            self.think(turn)
            await self.call(
                turn, hit[0], hit[1], self.own_arguments(hit[0], hit[1], dict(request.gold_arguments))
            )
            self.think(turn)  # the reply
            return turn
        self.think(turn)
        answer = await self.gateway(turn, "resolve_intent", self.resolve_arguments(request))
        turn.status = str(answer.get("status", "error"))
        gold_powers = {g.partition("::")[0] for g in request.gold_slot}
        if turn.status == "activated" and answer.get("ready", True) and answer.get("power") in gold_powers:
            step = _next_call(answer)
            self.judge_next(turn, request, step)
            self.think(turn)
            gold_power, _, gold_tool = request.gold_slot[0].partition("::")  # when the step names another
            power, tool, args = step if step is not None and turn.next_right else (gold_power, gold_tool, {})
            await self.call(turn, power, tool, {**request.gold_arguments, **args})
        elif turn.status == "activated" and answer.get("power") and not gold_powers:
            step = _next_call(answer)
            self.judge_next(turn, request, step)  # acting on a request nothing serves
        elif turn.status == "multiple_matches" and request.gold_slot:
            shown = [m.get("power") for m in answer.get("matches") or [] if isinstance(m, dict)]
            choice = next((p for p in shown if p in gold_powers), None)
            if choice is not None:
                self.think(turn)
                activation = await self.gateway(turn, "activate_power", {"name": choice})
                step = _next_call(activation)
                self.think(turn)
                gold = next(g for g in request.gold_slot if g.startswith(f"{choice}::"))
                power, tool, args = (
                    step
                    if step is not None and f"{step[0]}::{step[1]}" in request.gold_slot
                    else (choice, gold.split("::", 1)[1], {})
                )
                await self.call(turn, power, tool, {**request.gold_arguments, **args})
        self.think(turn)  # the reply to the user
        return turn


async def _converse(
    env: dict[str, str], requests: Sequence[Request], phrasing: Phrasing, schemas: dict[str, dict[str, Any]]
) -> tuple[list[Turn], list[types.Tool]]:
    params = StdioServerParameters(command=str(_CLI), args=["serve"], env=env)
    async with Client(params, mode="legacy", read_timeout_seconds=180) as client:
        agent = Agent(client, phrasing, schemas)
        await agent.refresh()
        turns = [await agent.serve(request) for request in requests]
        return turns, agent.tools


def _catalog_tools(folders: Sequence[Path]) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = []
    for folder in folders:
        tools += json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    return tools


def _baseline_tokens(tools: Sequence[dict[str, Any]]) -> int:
    listed = [
        {
            "name": t["name"],
            "description": t.get("description") or "",
            "input_schema": t.get("input_schema") or {},
        }
        for t in tools
    ]
    return count_tokens(json.dumps({"tools": listed}, ensure_ascii=False))


def bench_conversation(
    settings: Settings,
    dataset: Path,
    *,
    servers_file: Path,
    catalog: Path,
    beside: Path | None = None,
    phrasing: Phrasing = "user",
) -> dict[str, Any]:
    """One conversation over ``dataset``'s requests (see the module docstring). ``catalog``: the benchmark
    folder of the configured servers' tools (their schemas judge the next step's arguments; the baseline
    lists them); ``beside``: a catalog folder imported next to them (catalog-only servers)."""
    requests = read_requests(dataset)
    tools = _catalog_tools([catalog] + ([beside] if beside is not None else []))
    schemas = {f"{t['server']}::{t['name']}": dict(t.get("input_schema") or {}) for t in tools}
    all_tools = _baseline_tokens(tools)
    with tempfile.TemporaryDirectory(prefix="ts-bench-conversation-") as tmp:
        make_sandbox()
        env = _serve_env(settings, Path(tmp) / "data", servers_file) | {
            "TOOL_SELECTOR_SYNC__ENRICHER": "offline",
            "TOOL_SELECTOR_DEMO_ROOT": str(SANDBOX),
            "TOOL_SELECTOR_DEMO_MEMORY_FILE": str(Path(tmp) / "memory.jsonl"),
        }
        if beside is not None:
            done = subprocess.run(
                [str(_CLI), "catalog", "import", str(beside), "--approve"],
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise RuntimeError(
                    f"`tool-selector catalog import` failed ({done.returncode}): {done.stderr[-2000:]}"
                )
        done = subprocess.run([str(_CLI), "sync"], env=env, capture_output=True, text=True, check=False)
        if done.returncode not in (0, 20):
            raise RuntimeError(f"`tool-selector sync` failed ({done.returncode}): {done.stderr[-2000:]}")
        turns, listed = anyio.run(_converse, env, requests, phrasing, schemas)
    return _report(requests, turns, listed, all_tools, phrasing=phrasing, beside=beside is not None)


def _share(values: Sequence[bool | None]) -> float | None:
    known = [v for v in values if v is not None]
    return round(sum(known) / len(known), 3) if known else None


def _report(
    requests: Sequence[Request],
    turns: Sequence[Turn],
    listed: Sequence[types.Tool],
    all_tools: int,
    *,
    phrasing: str,
    beside: bool,
) -> dict[str, Any]:
    by_id = {r.id: r for r in requests}
    baseline = sum(all_tools * (2 if r.answerable else 1) for r in requests)
    context = sum(t.context_tokens for t in turns)
    answers = [n for t in turns for n in t.answer_tokens]
    already = [n for t in turns for n in t.already_active_tokens]
    activations = [t for t in turns if t.status == "activated" and by_id[t.id].answerable]
    unanswerable = [t for t in turns if not by_id[t.id].answerable]
    return {
        "tokenizer": TOKENIZER_NAME,
        "phrasing": phrasing,
        "beside_catalog": beside,
        "requests": len(requests),
        "context_tokens": context,
        "all_tools_baseline_tokens": baseline,
        "all_tools_listed_tokens": all_tools,
        "context_vs_all_tools": round(context / baseline, 3) if baseline else None,
        "context_of_tool_lists": sum(t.listed_tokens for t in turns),
        "model_calls": sum(t.model_calls for t in turns),
        "answers": {
            "count": len(answers),
            "total": sum(answers),
            "p50": statistics.median(answers) if answers else 0,
            "max": max(answers, default=0),
            "already_active_max": max(already, default=0),
            "already_active_count": len(already),
        },
        "tools_listed_at_end": {
            "count": len(listed),
            "tokens": _definitions_tokens(listed),
        },
        "statuses": {s: sum(t.status == s for t in turns) for s in sorted({t.status for t in turns})},
        "next_step": {
            "activations": len(activations),
            "right_tool": _share([t.next_right for t in activations]),
            # of the right next steps whose request gives every required value (the dataset's gold)
            "required_filled": _share(
                [t.required_filled for t in activations if t.next_right and not by_id[t.id].missing_required]
            ),
            "gold_values_matched": _share([t.gold_values_matched for t in activations if t.next_right]),
        },
        "unanswerable": {
            "count": len(unanswerable),
            "activated": sum(t.status == "activated" for t in unanswerable),
            "not_found": sum(t.status == "not_found" for t in unanswerable),
        },
        "served": _share([t.called in by_id[t.id].gold_slot for t in turns if by_id[t.id].answerable]),
        "calls_failed": sum(t.call_error for t in turns),
        "turns": [t.__dict__ for t in turns],
    }
