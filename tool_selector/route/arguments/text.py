"""Passes for values that words point to: next to their parameter's name ("branch called X", "the develop
branch", "project billing"), after a cue ("titled 'X'", "saying 'Y'", "called Maria Lopez", "from main"),
the words of a search ("search arxiv for X"), and at last what is left for the required parameters that
take any text."""

from __future__ import annotations

import re

from tool_selector.route.arguments.parameters import FIRST_WORDS, SECOND_WORDS, Parameter
from tool_selector.route.arguments.spans import Span, identifier_like
from tool_selector.route.arguments.state import (
    ARTICLES,
    FIRST_CUES,
    NOT_NAMES,
    SECOND_CUES,
    TIME_UNITS,
    State,
    singular,
    text_value,
)

TITLE_LIKE = ("title", "name", "subject", "summary", "key", "topic", "header")
BODY_LIKE = ("content", "body", "message", "text", "description", "value", "note", "comment")
_PROSE = (*BODY_LIKE, "subject", "title", "summary", "query", "prompt", "question", "topic")
_CUES = {  # a word before quoted text -> the words of the parameters it points to, best first
    "titled": TITLE_LIKE, "entitled": TITLE_LIKE, "called": TITLE_LIKE, "named": TITLE_LIKE,
    "saying": BODY_LIKE, "says": BODY_LIKE, "reads": BODY_LIKE, "text": BODY_LIKE, "body": BODY_LIKE,
    "matching": ("pattern", "query", "filter", "glob"), "message": ("message", "content", "text", "body"),
}  # fmt: skip
_LINKS = frozenset("called named titled with id no number".split())  # between a name and its value
_SEARCH_NAMES = frozenset("query q search term terms topic keyword keywords question searchterm".split())
_SEARCH_CUES = re.compile(r"\b(?:for|about|on|regarding|matching|mentioning|related to)\s+", re.IGNORECASE)
_SEARCH_END = re.compile(
    r"[,;?!]|\.(?:\s|$)|\s+-\s+|\s+(?:top|limit|max|maximum|first|last)\s+\d|\s+\d+\s+results?\b|$"
)
_VAGUE = re.compile(
    r"^(?:anything|something|stuff|info|information|notes?|papers?|articles?|posts?)\s+(?:about|on|regarding|for)\s+",
    re.IGNORECASE,
)
_WHERE = re.compile(r"\s+(?:in|on|from)\s+(?:my|the|our)\s+\w+(?:\s+\w+)?$")  # "... in my notes"
LOOKS_LIKE_CODE = re.compile(r"[=~<>(]|\b(?:select|from|where|and|or|order by)\b", re.IGNORECASE)
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}")
_CALLED = re.compile(r"\b(?:called|named)\s+((?:[A-Z][\w'.-]*)(?:\s+[A-Z][\w'.-]*){0,3})")


def versions(state: State, params: list[Parameter]) -> None:
    """ "lodash 4.17.20", "node 18.2": a version, and the name right before it for the package or product."""
    version = next(iter(state.open(params, lambda p: p.has("version") and p.texty and not p.array)), None)
    if version is None:
        return
    named = state.open(params, lambda p: p.has("package", "product", "library", "module") and p.texty)
    spans = state.free()
    for i, span in enumerate(spans):
        if _VERSION.fullmatch(span.value) and span.kind in ("word", "number"):
            state.give(version, span.value, [span])
            name = spans[i - 1] if i else None
            if named and name is not None and name.kind == "word" and name.value.lower() not in NOT_NAMES:
                state.give(named[0], name.value, [name])
            return


def named(state: State, params: list[Parameter]) -> None:
    """A value next to its parameter's name: "branch called X", "the develop branch", "project billing"."""
    blocked = {"url", "email", "timezone", "date", "datetime", "time"}
    candidates = state.open(
        params, lambda p: p.texty and not p.array and not p.kinds & blocked and not p.enum
    )
    anchors_of = {p.name: p.anchors() for p in candidates}
    every_anchor = {a for anchors in anchors_of.values() for a in anchors}
    for param in sorted(candidates, key=lambda p: p.role is not None):
        anchors = {singular(a) for a in anchors_of[param.name]}
        free = state.free()
        for i, span in enumerate(free):
            if span.kind != "word" or singular(span.value.lower()) not in anchors:
                continue
            found = _after_anchor(state, param, free[i + 1 :], every_anchor)
            if found is None and not param.kinds & {"path", "filename"}:
                found = _before_anchor(state, free[:i])
            if found is not None:
                state.give(param, text_value(param, found), [found])
                break


def _after_anchor(state: State, param: Parameter, rest: list[Span], anchors: set[str]) -> Span | None:
    """ "branch called X", "project billing", "id 4hq9e2k1v7", "sheet 'Q3'"."""
    called = False
    for span in rest[:3]:
        word = span.value.lower()
        if span.kind == "word" and word in _LINKS:
            called = called or word in ("called", "named", "titled")
            continue
        if (
            param.kinds & {"path", "filename"}
            and span.kind not in ("path", "filename")
            and state.free("path")
        ):
            return None
        if span.kind == "quoted" or span.kind not in ("word", "relative", "clock", "language"):
            return span
        if word in NOT_NAMES:
            return None
        if identifier_like(span.value) or called or (span.value[:1].isupper() and span.start > 0):
            return span
        following = state.text[span.end :].lower().strip()
        ends = not following or following[:1] in ",;.?!" or any(following.startswith(a) for a in anchors)
        anchor_is_a_modifier = bool(set(state.before(rest[0], 2)[-2:-1]) & ARTICLES)  # "the scan results"
        return span if ends and not anchor_is_a_modifier else None
    return None


def _before_anchor(state: State, before: list[Span]) -> Span | None:
    """ "the develop branch", "the STRIPE_KEY secret" (not "a git repository", "the latest issue")."""
    if not before or state.text[before[-1].end : before[-1].end + 1] != " ":
        return None
    span = before[-1]
    if span.kind not in ("word", "id", "hash", "quoted", "filename"):
        return None
    if span.kind == "word":
        word = span.value.lower()
        if word in NOT_NAMES | TIME_UNITS or word.endswith("est"):
            return None
        prior = state.before(span, 1)
        definite = bool(prior) and prior[-1] in ARTICLES - {"a", "an", "some", "any"}
        if not (identifier_like(span.value) or definite):
            return None
    return span


def quoted(state: State, params: list[Parameter]) -> None:
    """Quoted text to the parameter its cue word names ("subject 'Q3'", "titled 'X'", "saying 'Y'")."""
    taking = {"quoted", "id", "hash"}
    candidates = state.open(params, lambda p: p.texty and not p.enum and (not p.kinds or p.kinds <= taking))
    for span in state.free("quoted"):
        code = bool(LOOKS_LIKE_CODE.search(span.value))
        open_ = state.open(candidates, lambda p, code=code: not p.code or code)  # type: ignore[misc]
        best = _cued_parameter([w for w in state.before(span, 3) if w not in ARTICLES], open_)
        if best is not None:
            state.give(best, [span.value] if best.array else span.value, [span])


def _cued_parameter(before: list[str], candidates: list[Parameter]) -> Parameter | None:
    for word in reversed(before):
        if word in FIRST_WORDS | SECOND_WORDS:
            continue  # "replace 'a' with 'b'": the pair's order decides, at the end
        ranked = []
        for param in candidates:
            if singular(word) in {singular(w) for w in param.words if w not in ("name", "text")}:
                ranked.append((0 if singular(word) == singular(param.head) else 1, param))
            elif word in _CUES and set(param.words) & set(_CUES[word]):
                ranked.append((2 + min(_CUES[word].index(w) for w in param.words if w in _CUES[word]), param))
        if ranked:
            return min(ranked, key=lambda r: r[0])[1]
    return None


def called(state: State, params: list[Parameter]) -> None:
    """A name after "called" or "named" for a parameter that takes a person's or a thing's name."""
    match = _CALLED.search(state.text)
    if match is None:
        return
    for param in state.open(params, _takes_a_name):
        spans = [s for s in state.free() if s.start >= match.start(1) and s.end <= match.end(1)]
        if spans and all(s.kind in ("word", "place") for s in spans):
            state.give(param, match.group(1).strip(), spans)
        return


def _takes_a_name(param: Parameter) -> bool:
    return param.texty and not param.array and param.has("name", "title") and not param.kinds - {"quoted"}


def search_words(state: State, params: list[Parameter]) -> None:
    """The words of a search: "search arxiv for X", "what do you remember about Alice", "article on X"."""
    if state.free("quoted"):
        return  # quoted text is the search's words: the last pass gives it
    for param in state.open(
        params, lambda p: p.texty and not p.array and not p.code and not p.kinds - {"quoted"}
    ):
        searching = bool(set(param.words) & _SEARCH_NAMES)
        if not searching and not (param.has("title") and param.required):
            continue
        cues = [m for m in _SEARCH_CUES.finditer(state.text) if _outside_values(state, m.start())]
        if not searching:  # a title: "the article on X"
            cues = [m for m in cues if re.search(r"\b(?:article|page|entry)\s+$", state.text[: m.start()])]
        for cue in cues[:1]:
            vague = _VAGUE.match(state.text[cue.end() :])
            start = cue.end() + (vague.end() if vague else 0)
            end_match = _SEARCH_END.search(state.text, start)
            end = end_match.start() if end_match is not None else len(state.text)
            inside = [s for s in state.spans if s.start >= start and s.end <= end]
            if any(id(s) in state.used or s.kind in ("url", "email", "path") for s in inside):
                continue
            value = _WHERE.sub("", state.text[start:end]).strip()
            if value:
                state.give(param, value, [s for s in inside if s.end <= start + len(value)], source=value)


def _outside_values(state: State, at: int) -> bool:
    return not any(s.start <= at < s.end and s.kind != "word" for s in state.spans)


def by_role(state: State, params: list[Parameter]) -> None:
    """A value its role's word points to: "from main" (a base branch), "against origin/main" (a target)."""
    for param in state.open(
        params, lambda p: p.role is not None and p.texty and not p.kinds - {"quoted", "id"}
    ):
        cues = FIRST_CUES if param.role == "first" else SECOND_CUES - {"and"}
        for span in state.free("word", "path", "filename"):
            before = state.before(span, 1)
            if before and before[-1] in cues and span.value.lower() not in NOT_NAMES:
                state.give(param, span.value, [span])
                break


def _leftover_order(param: Parameter) -> tuple[bool, int, bool]:
    """Required first; names and titles (and a pair's first) before bodies (and a pair's second)."""
    if param.has(*TITLE_LIKE) or param.role == "first":
        kind = 0
    elif param.has(*BODY_LIKE) or param.role == "second":
        kind = 2
    else:
        kind = 1
    return (not param.required, kind, param.array)


def leftovers(state: State, params: list[Parameter]) -> None:
    """What is left, for the parameters that take any text: quoted text first, then (for required ones that
    take a name, not prose) an ID, a path or a name-like word no other parameter took."""
    taking = state.open(params, lambda p: p.texty and not p.enum and not p.kinds - {"quoted", "id", "hash"})
    texty = sorted(taking, key=_leftover_order)
    for param in texty:
        quotes = [s for s in state.free("quoted") if not param.code or LOOKS_LIKE_CODE.search(s.value)]
        others_required = any(p.required and p.name not in state.values for p in texty if p is not param)
        if quotes and (param.required or not others_required):
            chosen = quotes if param.array else quotes[:1]
            state.give(param, [s.value for s in chosen] if param.array else chosen[0].value, chosen)
            continue
        if not param.required or param.code or param.has(*_PROSE):
            continue
        for span in state.free("id", "hash", "path", "filename", "word", "number"):
            name_like = identifier_like(span.value) and re.search(r"[A-Za-z]", span.value)
            if span.kind in ("id", "hash") or name_like:
                value = text_value(param, span)
                state.give(param, [value] if param.array else value, [span])
                break
