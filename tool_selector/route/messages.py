"""Every sentence of an answer an agent reads, written in one place (a model reads them: short, exact,
the next call).

The route stage's tier messages (tool_selector/route/tiers.py) and the gateway's answers
(services/gateway/answer.py) take their sentences from here; error texts have their own table
(routes/errors.py). A sentence names powers and tools only, never a server's own text (which may carry
injected instructions): server text stays in the answer's fields, one approved line at most.
"""

from __future__ import annotations

from collections.abc import Sequence

from tool_selector.route.failure import FailureKind

ADD_IT = (
    "Tell the user; the operator can add it to this gateway's servers configuration "
    "(`tool-selector servers add NAME ...`, or `servers enable NAME` if it is there but switched off)."
)
NEEDS_CALL = (
    "Tell the user that running tools needs an API key with the 'call' scope (role editor or admin: "
    "`tool-selector keys create NAME --role editor`), made by the gateway's operator; until then, "
    "resolve_intent and catalog_query still answer."
)


def sure(confidence: float) -> str:
    return f"{confidence:.0%} sure"


def _names(names: Sequence[str]) -> str:
    return ", ".join(names)


def ask_first(missing: Sequence[str]) -> str:
    """The required values neither the request nor the session's earlier calls gave: the agent knows them
    from the conversation (content it just read, its own working values) or asks the user."""
    if not missing:
        return ""
    return f" Still to fill: {_names(missing)} (from the conversation, else ask the user; never invent)."


def activated(
    power: str,
    confidence: float,
    tool: str | None,
    missing: Sequence[str],
    *,
    remembered: bool = False,
) -> str:
    """A power resolve_intent started for the request (``remembered``: a choice of this principal before)."""
    if tool is None:
        return f"'{power}' is ready ({sure(confidence)}) but lists no tools the request fits."
    why = f"a request like this was served by its tool {tool} before" if remembered else sure(confidence)
    return f"'{power}' is ready ({why}): call {tool}.{ask_first(missing)}"


def already_active(power: str, tool: str | None, missing: Sequence[str], *, remembered: bool = False) -> str:
    if tool is None:
        return f"'{power}' is already active."
    before = f" (served a request like this before by {tool})" if remembered else ""
    return f"Already active{before}: call {tool}.{ask_first(missing)}"


def start_failed(power: str, confidence: float, error: str) -> str:
    return (
        f"'{power}' is the right power ({sure(confidence)}) but it could not be started: {error} "
        f"Retry with activate_power('{power}'), or tell the user."
    )


def catalog_only(power: str, confidence: float) -> str:
    return (
        f"'{power}' fits this request ({sure(confidence)}), but it is only in the catalog: it is not "
        f"configured on this gateway, so it cannot be started or called here. {ADD_IT}"
    )


def catalog_only_or(power: str, confidence: float, alternatives: Sequence[str]) -> str:
    """The best fit is only in the catalog; configured powers that may do it instead."""
    named = " or ".join(f"'{a}'" for a in alternatives)
    return (
        f"The best fit, '{power}' ({sure(confidence)}), is only in the catalog, not configured here. "
        f"Configured powers that may do it: {named}. Ask the user which, unless the request says; then "
        "activate_power(name)."
    )


def lacks_call(power: str, confidence: float) -> str:
    return (
        f"'{power}' is the right power ({sure(confidence)}), but it was not started: this API key lacks the "
        f"'call' scope, which starting a power and calling its tools need. {NEEDS_CALL}"
    )


def weak(power: str, gap: bool) -> str:
    """The gateway's weak_matches: nothing fits surely; the candidates are in the answer's fields. With
    ``gap`` (the judge says the closest power's tools cannot do it) the request may be clear and simply
    not doable here, so the agent is not sent to ask a user who already said what they want."""
    if gap:
        return (
            f"Nothing here fits surely; '{power}' shares words with it, but none of its tools does what it "
            "asks. If the request is clear, tell the user it cannot be done here; else ask what they want."
        )
    return (
        f"Nothing here fits surely; the closest is '{power}'. Ask the user what exactly they want done, "
        "then call resolve_intent again."
    )


def choose(confidence: float) -> str:
    """The gateway's multiple_matches: the candidates are in the answer's fields."""
    return (
        f"More than one power fits ({sure(confidence)} it is one of them). Ask the user which, unless the "
        "request says; then activate_power(name)."
    )


def nothing_fits(need: str | None = None) -> str:
    """The gateway's not_found: the powers it can run are in the answer's ``available``; ``need``: the
    request's instruction in its own words (need.py), when it opens with one. Agents also send requests
    no tool is for (advice, small talk): those they answer themselves."""
    what = f'can do "{need}"' if need else "does this"
    return (
        f"No configured power {what}. If it needs no tool (advice, conversation), answer it yourself; "
        "else tell the user it cannot be done here."
    )


def not_runnable(names: Sequence[str]) -> str:
    """What a list of candidates adds when some of them cannot run here (they carry runnable: false)."""
    if len(names) == 1:
        return (
            f" '{names[0]}' is only in the catalog (runnable: false), not configured here: never activate "
            "it; tell the user if it is needed."
        )
    return (
        " Those marked runnable: false are only in the catalog, not configured here: never activate them; "
        "tell the user if one is needed."
    )


def power_started(power: str, already: bool, tools: int, shown: int, best: str | None) -> str:
    """activate_power's answer (``best``: the tool the session's last request named, if any)."""
    state = "already running" if already else "running"
    if tools == 0:
        return f"'{power}' is {state} and lists no tools."
    if best is not None:
        return f"'{power}' is {state}: call {best}."
    rest = f"; its other {tools - shown}: catalog_query or call_tool" if tools > shown else ""
    return f"'{power}' is {state} with {tools} tools{rest}."


def stopped(power: str, was_running: bool) -> str:
    return f"'{power}' {'was stopped' if was_running else 'was not running'}; its tools are gone."


def instructions_held() -> str:
    return (
        "The server's instructions changed since they were approved and wait for an operator's approval, so "
        "they are not shown."
    )


def tool_failed(power: str, tool: str, kind: FailureKind) -> str:
    """The sentence after an upstream tool's own error: what to do next, for its kind (route/failure.py)."""
    said = f"The tool {tool!r} of power {power!r} reported the error above."
    if kind == "network":
        return (
            f"The tool {tool!r} of power {power!r} could not reach the network or the address it was given "
            "(the error above). If the address is the one the user meant, the server's machine cannot reach "
            "it: tell the user (or try again later); calling again with other arguments will not help."
        )
    if kind == "arguments":
        return (
            f"{said} Fix the arguments as it says and call it again, or call resolve_intent to look for "
            "another tool."
        )
    return f"{said} Do what it says if it names a fix; else tell the user, or call resolve_intent."


# -- the route stage's tiers (tool_selector/route/tiers.py), read through REST, CLI and the gateway ------


def tier_activated(power: str, confidence: float, tools: Sequence[str]) -> str:
    names = ", ".join(tools[:4]) + (", ..." if len(tools) > 4 else "")
    return (
        f"Activated '{power}' ({sure(confidence)}): call the one of its tools ({names}) that does the "
        "request."
    )


def tier_multiple(confidence: float, powers: Sequence[str], difference: str) -> str:
    named = " or ".join(f"'{p}'" for p in powers)
    return (
        f"More than one power fits ({sure(confidence)} it is one of them): {named}.{difference} Ask the "
        f'user which one they mean unless the request says, then call activate_power("{powers[0]}") or '
        "the other name."
    )


def twins(first: str, second: str) -> str:
    return (
        f" '{first}' and '{second}' have the same tools (the same server configured twice?): only the user "
        "can say which account or project is meant."
    )


def only_has(first: str, mine: Sequence[str], second: str, theirs: Sequence[str]) -> str:
    return f" Only '{first}' has {', '.join(mine)}; only '{second}' has {', '.join(theirs)}."


def tier_weak(power: str, gap: bool) -> str:
    part = (
        f"'{power}' shares words with the request, but none of its tools is said to do what it asks"
        if gap
        else f"The closest is '{power}', and it only partly fits"
    )
    return (
        f"{part}. Ask the user what exactly they want done (or whether '{power}' is meant: then call "
        f'activate_power("{power}")), and call resolve_intent again with the action and the thing it acts on.'
    )


def tier_not_found(total: int, listed: int, need: str | None = None) -> str:
    """``need``: the request's instruction in its own words (need.py), when it opens with one."""
    what = f'No configured power can do "{need}"' if need else "No configured power does this"
    return (
        f"{what}: tell the user it cannot be done with the tools set up here"
        + (f" ({total} powers; the first {listed} are listed)" if total > listed else " (listed)")
        + ". Call resolve_intent again only if the user meant something else."
    )


def steps_sentence(steps: Sequence[tuple[int, str | None]], count: int, weak: bool) -> str:
    """What a message adds for a multi-step request: each step's best power (None: none fits)."""
    named = "; ".join(f"step {i}: '{p}'" if p else f"step {i}: no power fits" for i, p in steps)
    if weak:
        return f"This request has {count} steps (see parts), none matched surely; the closest: {named}."
    return (
        f"This request has {count} steps (see parts); use one power per step, the best for each: "
        f"{named}. Call activate_power(name) for each one not active yet, then do the steps in order."
    )
