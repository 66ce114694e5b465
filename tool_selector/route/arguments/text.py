"""Passes for values that words point to: next to their parameter's name ("branch called X", "the develop
branch", "project billing"), after a cue ("titled 'X'", "saying 'Y'", "called Maria Lopez", "from main"),
the words of a search ("search arxiv for X"), and at last what is left for the required parameters that
take any text."""

from __future__ import annotations

import itertools
import re

from tool_selector.route.arguments.parameters import FIRST_WORDS, GENERIC, SECOND_WORDS, SYNONYMS, Parameter
from tool_selector.route.arguments.spans import Span, identifier_like
from tool_selector.route.arguments.state import (
    ARTICLES,
    FIRST_CUES,
    NOT_NAMES,
    SECOND_CUES,
    TIME_UNITS,
    State,
    singular,
    takes_as_id,
    text_value,
)

TITLE_LIKE = ("title", "name", "subject", "summary", "key", "topic", "header")
BODY_LIKE = ("content", "body", "message", "text", "description", "value", "note", "comment")
_PROSE = (
    *BODY_LIKE, "subject", "title", "summary", "query", "prompt", "question", "topic", "thought", "yaml",
    "json", "code", "script", "markdown", "html", "sql", "expression", "formula",
)  # fmt: skip
_PROSE_DESCRIBED = frozenset("text content message markdown yaml json code query prompt thought body".split())
_CUES = {  # a word before quoted text -> the words of the parameters it points to, best first
    "titled": TITLE_LIKE, "entitled": TITLE_LIKE, "called": TITLE_LIKE, "named": TITLE_LIKE,
    "saying": BODY_LIKE, "says": BODY_LIKE, "reads": BODY_LIKE, "text": BODY_LIKE, "body": BODY_LIKE,
    "matching": ("pattern", "query", "filter", "glob"), "message": ("message", "content", "text", "body"),
}  # fmt: skip
_LINKS = frozenset("called named titled with id no number".split())  # between a name and its value
_SEARCH_NAMES = frozenset("query q search term terms topic keyword keywords question searchterm".split())
_SEARCH_CUES = re.compile(r"\b(?:for|about|on|regarding|matching|mentioning|related to)\s+", re.IGNORECASE)
_SEARCH_END = re.compile(
    r"[,;?!]|\.(?:\s|$)|\s+-\s+|\s+(?:top|limit|max|maximum|first|last)\s+\d|\s+\d+\s+results?\b"
    r"|\s+(?:and|then)\s+(?:summari[sz]e|tell|give|show|explain|list|compare|send|write|make|create|find|"
    r"return|print|email|save|put|add)\b|\s+(?:say|says|said|mention|mentions)\b|$"
)  # the search's words end where the request goes on to another step
_SOURCES = frozenset(
    "wikipedia arxiv github google the web web internet memory notes bedrock".split()
)  # where
_NAMES_ITSELF = re.compile(r"\b(?:query|queries|statement|sql)\s+$", re.IGNORECASE)
_SEARCH_VERBS = re.compile(r"\b(?:search|find|look|lookup|query|google|research|browse)\b", re.IGNORECASE)
_VAGUE = re.compile(
    r"^(?:anything|something|stuff|info|information|notes?|papers?|articles?|posts?)(?:\s+\w+){0,3}?\s+"
    r"(?:about|on|regarding|for|mentioning|related\s+to|with)\s+",
    re.IGNORECASE,
)
_WHERE = re.compile(r"\s+(?:in|on|from)\s+(?:my|the|our)\s+\w+(?:\s+\w+)?$")  # "... in my notes"
LOOKS_LIKE_CODE = re.compile(r"[=~<>(]|\b(?:select|from|where|and|or|order by)\b", re.IGNORECASE)
_VERSION = re.compile(r"v?\d+(?:\.\d+){1,3}")
_COLON = re.compile(r"(?<=[A-Za-z]):\s+(?=\S)")
_SAYING = re.compile(r"\b(?:saying|that says|which says)\s+(?=[^'\"`“‘\s])")
_CHANGE = re.compile(r"\b(?:change|set|update|rename|edit)\s+(?:the\s+)?(\w+)\b[^'\"`]*\bto\s*$", re.I)
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
    anchors_of = {p.name: {singular(a) for a in p.anchors()} for p in candidates}
    every_anchor = set().union(*anchors_of.values()) if anchors_of else set()
    for param in sorted(candidates, key=lambda p: p.role is not None):
        anchors = anchors_of[param.name]
        for i, span in enumerate(state.spans):
            if id(span) in state.used or span.kind != "word" or singular(span.value.lower()) not in anchors:
                continue
            found = _after_anchor(state, param, state.spans[i + 1 :], every_anchor)
            if found is None and not param.kinds & {"path", "filename"} and _is_head(param, span):
                found = _before_anchor(state, state.spans[:i], anchors)
            if found is not None and not takes_as_id(param, found):
                found = None
            if found is not None and not _an_id_sibling_takes_it(param, found, candidates, span):
                state.give(param, text_value(param, found), [found])
                break


def _an_id_sibling_takes_it(param: Parameter, value: Span, candidates: list[Parameter], anchor: Span) -> bool:
    """ "host 10542": a number next to "host" is the host's ID when the tool takes one."""
    if "id" in param.kinds or not value.value.lstrip("#").isdigit():
        return False
    word = singular(anchor.value.lower())
    return any(
        p is not param and "id" in p.kinds and word in {singular(a) for a in p.anchors()} for p in candidates
    )


def _is_head(param: Parameter, anchor: Span) -> bool:
    """The anchor is the noun the name ends on ("branch" of branch_name, "yaml" of compose_yaml)."""
    own = [w for w in param.words if w not in GENERIC and w not in FIRST_WORDS | SECOND_WORDS]
    heads = (
        {singular(own[-1]), singular(SYNONYMS.get(own[-1], own[-1]))}
        if own
        else {singular(a) for a in param.anchors()}
    )
    return singular(anchor.value.lower()) in heads


def _after_anchor(state: State, param: Parameter, rest: list[Span], anchors: set[str]) -> Span | None:
    """ "branch called X", "project billing", "id 4hq9e2k1v7", "sheet 'Q3'"; never a value already taken."""
    called = False
    for span in rest[:3]:
        word = span.value.lower()
        if span.kind == "word" and word in _LINKS:
            called = called or word in ("called", "named", "titled")
            continue
        if id(span) in state.used:
            return None
        folder = param.has("folder", "dir", "directory")
        pathless = param.kinds & {"path", "filename"} and span.kind not in ("path", "filename")
        if pathless and (state.free("path") or not (folder or re.search(r"[./\\]", span.value))):
            return None  # a file parameter takes a file's name, not "4x"; a folder may be a plain name
        if span.kind == "quoted" or span.kind not in ("word", "relative", "clock", "language"):
            return span
        if _prose(param):
            return None  # "query StarRocks": a query, a message or a text takes quoted words only
        if word in NOT_NAMES or singular(word) in anchors:
            return None
        if identifier_like(span.value) or called or (span.value[:1].isupper() and span.start > 0):
            return span
        if not _is_head(param, rest_anchor(state, span)):
            return None  # "an interactive Plotly chart": the anchor only qualifies another noun
        following = state.text[span.end :].lower().strip()
        ends = not following or following[:1] in ",;.?!" or any(following.startswith(a) for a in anchors)
        anchor_is_a_modifier = bool(set(state.before(rest[0], 2)[-2:-1]) & ARTICLES)  # "the scan results"
        return span if ends and not anchor_is_a_modifier else None
    return None


def rest_anchor(state: State, value: Span) -> Span:
    """The word span right before a value, past the words that link a name to its value."""
    before = [s for s in state.spans if s.end <= value.start and s.kind == "word"]
    while len(before) > 1 and before[-1].value.lower() in _LINKS:
        before.pop()
    return before[-1] if before else value


def _before_anchor(state: State, before: list[Span], anchors: set[str]) -> Span | None:
    """ "the develop branch", "the STRIPE_KEY secret" (not "a git repository", "the latest issue")."""
    if not before or state.text[before[-1].end : before[-1].end + 1] != " ":
        return None
    span = before[-1]
    if id(span) in state.used or span.kind not in ("word", "id", "hash", "quoted", "filename"):
        return None
    anchor = (
        state.text[span.end :].split(maxsplit=1)[0].lower().strip(",.;:!?")
        if span.end < len(state.text)
        else ""
    )
    if anchor != singular(anchor):
        return None  # "my e-signature templates", "the staging secrets": a kind of them, not one's name
    if span.kind == "word":
        word = span.value.lower()
        if word in NOT_NAMES | TIME_UNITS or word.endswith("est") or singular(word) in anchors:
            return None
        prior = state.before(span, 1)
        definite = bool(prior) and prior[-1] in ARTICLES - {"a", "an", "some", "any", "this"}
        plain = bool(
            re.fullmatch(r"[a-z][a-z0-9-]*", span.value)
        )  # "the develop branch", not "a GitHub repo"
        if not (strong_identifier(span) or (definite and plain)):
            return None
    return span


def quoted(state: State, params: list[Parameter]) -> None:
    """Quoted text to the parameter its cue word names ("subject 'Q3'", "titled 'X'", "saying 'Y'")."""
    taking = {"quoted", "id", "hash"}
    candidates = state.open(params, lambda p: p.texty and not p.enum and (not p.kinds or p.kinds <= taking))
    for span in state.free("quoted"):
        open_ = [p for p in state.open(candidates, lambda p: True) if _takes_quote(p, span)]
        best = _cued_parameter([w for w in state.before(span, 3) if w not in ARTICLES], open_)
        changed = _CHANGE.search(state.text[: max(0, span.start - 1)])
        if best is None and changed is not None:  # "change the description of OPS-12 to 'X'"
            best = _cued_parameter([changed.group(1).lower()], open_)
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
        params, lambda p: p.texty and not p.array and not p.code and not p.enum and not p.kinds - {"quoted"}
    ):
        searching = param.head in _SEARCH_NAMES
        if not searching and not (param.has("title") and param.required):
            continue
        if not param.required and not _SEARCH_VERBS.search(state.text):
            continue  # an optional filter takes the words of a search only when the request searches
        cues = [
            m
            for m in _SEARCH_CUES.finditer(state.text)
            if _outside_values(state, m.start()) and not _NAMES_ITSELF.search(state.text[: m.start()])
        ]  # "a SQL query on the warehouse": what follows is where, not what
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
            value = re.sub(r"^the\s+", "", _WHERE.sub("", state.text[start:end]).strip(), flags=re.IGNORECASE)
            generic = re.fullmatch(r"(?:a|an|some|any)\s+\w+", value, re.IGNORECASE)  # "for a keyword"
            if value and value.lower() not in _SOURCES and not generic:
                state.give(param, value, [s for s in inside if s.end <= start + len(value)], source=value)


def _outside_values(state: State, at: int) -> bool:
    return not any(s.start <= at < s.end and s.kind != "word" for s in state.spans)


def by_role(state: State, params: list[Parameter]) -> None:
    """A value its role's word points to: "from main" (a base branch), "against origin/main" (a target)."""
    for param in state.open(
        params, lambda p: p.role is not None and p.texty and not p.kinds and not _prose(p) and p.head != "id"
    ):
        cues = FIRST_CUES if param.role == "first" else SECOND_CUES - {"and"}
        for span in state.free("word", "path", "filename"):
            before = state.before(span, 1)
            if before and before[-1] in cues and span.value.lower() not in NOT_NAMES:
                state.give(param, span.value, [span])
                break


def _prose(param: Parameter) -> bool:
    """Takes sentences, code or a query, not a name: no stray word is its value."""
    if param.head in ("name", "id", "ids", "key"):
        return False  # topicName, query_id: a name
    opening = re.findall(r"[a-z]+", param.description.lower())[:3]
    return param.has(*_PROSE) or bool(_PROSE_DESCRIBED.intersection(opening))


def after_colon(state: State, params: list[Parameter]) -> None:
    """ "post on LinkedIn: We're hiring", "run: select count(*) from orders": the words after a colon are
    the one required parameter that takes prose (or code, when they read as code), when nothing before
    the colon is quoted."""
    match = _COLON.search(state.text) or _SAYING.search(state.text)
    if match is None:
        return
    start, end = match.end(), len(state.text.rstrip())
    inside = [s for s in state.spans if s.start >= start and s.end <= end]
    if not inside or any(id(s) in state.used for s in inside) or not _outside_values(state, match.start()):
        return
    body = state.text[start:end]
    if len(inside) == 1 and inside[0].quoted and len(inside[0].value) + 2 >= len(body.rstrip(".!?")):
        return  # 'repeat after me: "testing"': the quoted text alone, given without its quotes later
    code = bool(LOOKS_LIKE_CODE.search(body))
    bodies = state.open(params, lambda p: p.texty and not p.array and _body(p) and (code or not p.code))
    if bodies:
        chosen = min(bodies, key=lambda p: (not p.required, not p.code))
        state.give(chosen, body, inside)


def _body(param: Parameter) -> bool:
    return param.has(
        *BODY_LIKE, "thought", "query", "markdown", "sql", "code", "script", "prompt", "caption"
    ) or (param.code)


def _leftover_order(param: Parameter) -> tuple[bool, int, bool]:
    """Required first; names and titles (and a pair's first) before bodies (and a pair's second)."""
    if param.has(*BODY_LIKE):
        kind = 2 + (param.role == "second")
    elif param.has(*TITLE_LIKE) or param.role == "first":
        kind = 0
    else:
        kind = 1 + (param.role == "second")
    return (not param.required, kind, param.array)


def _takes_quote(param: Parameter, span: Span) -> bool:
    if param.code and not LOOKS_LIKE_CODE.search(span.value):
        return False
    if param.head == "code" and len(param.words) > 1 and re.search(r"\s", span.value):
        return False  # language_code, country_code: a short code, not a phrase
    if param.kinds & {"id", "hash"} and not param.kinds & {"quoted"} and re.search(r"\s", span.value):
        return False
    return takes_as_id(param, span)


def strong_identifier(span: Span) -> bool:
    """A word that reads as a name of something: "release-2.3", "fct_orders", "DATABASE_URL", "A1:C10", not
    "read-only" or "GitHub"."""
    if span.kind in ("id", "hash", "path", "filename"):
        return True
    value = span.value
    flips = sum(a.isdigit() != b.isdigit() for a, b in itertools.pairwise(value))
    if not re.search(r"[A-Za-z]", value) or re.fullmatch(r"[vV]\d+(?:\.\d+)*", value):
        return False  # a version ("v5") names no thing
    if re.fullmatch(r"[A-Za-z]{1,4}\d{4,}", value):
        return True  # "rs113488022", "P69905", "NCT04280705"
    return (
        bool(re.search(r"[_./:]", value)) or ("-" in value and any(c.isdigit() for c in value)) or flips >= 2
    )


def _after_a_preposition(state: State, span: Span) -> bool:
    return state.before(span, 1)[-1:] in (["for"], ["of"], ["on"], ["from"], ["to"], ["in"], ["at"])


def leftovers(state: State, params: list[Parameter]) -> None:
    """What is left, for the parameters that take any text: quoted text first (an ID parameter only one
    without spaces), then, for the one required parameter still without a value if it takes a name (not
    prose, not a list), an ID, a path or a word that reads as a name, which no other parameter took."""
    taking = state.open(params, lambda p: p.texty and not p.enum and not p.kinds - {"quoted", "id", "hash"})
    texty = sorted(taking, key=_leftover_order)
    for param in texty:
        quotes = [s for s in state.free("quoted") if _takes_quote(param, s)]
        others = [p for p in texty if p is not param and p.required and p.name not in state.values]
        others_take = any(_takes_quote(p, q) for p in others for q in quotes)
        worded = param.has(*TITLE_LIKE, *BODY_LIKE) or _prose(param) or bool(param.kinds & {"id", "hash"})
        if quotes and (param.required or (not others_take and worded)):
            chosen = quotes if param.array else quotes[:1]
            state.give(param, [s.value for s in chosen] if param.array else chosen[0].value, chosen)
    unfilled = [p for p in texty if p.required and p.name not in state.values]
    if len(unfilled) != 1:
        return  # a stray name is a guess: only for the one required parameter left
    param = unfilled[0]
    if param.array or param.code or _prose(param):
        return
    for span in state.free("id", "hash", "path", "filename", "word", "number"):
        if span.kind in ("path", "filename") and "hash" in param.kinds:
            continue  # a revision (a hash, a ref) is never a file's path
        hyphenated = span.kind == "word" and "-" in span.value and _after_a_preposition(state, span)
        if strong_identifier(span) or hyphenated:
            state.give(param, text_value(param, span), [span])
            return
