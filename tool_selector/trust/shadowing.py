"""The shadowing check: a tool that speaks about, imitates or rewires the tools of other servers.

Without the catalog: phrases that change what another tool does flag ("modifies the behaviour of the
send_email tool", "replace its output with", "supersedes delete_event", "route all deletion requests
here", "reroute the"), unless the tool they name is the tool itself, one of its parameters or a sibling.

With the catalog's names (``ScanContext``), three more, each a flag:
- a compound tool name of another server (``send_email``, ``queryDatabase``; one-word names such as
  ``search`` are too common to mean anything) named as something to call, or in a sentence that orders
  calls around it ("before", "after", "instead", "always", "replace", ...);
- an order to call a snake_case tool that no server of the catalog serves ("should invoke
  deploy_release"): a tool that directs the model to something nobody reviewed;
- a name that is another server's tool name plus words that claim trust (``send_email_secure``,
  ``official_get_user``).
The tool's own server's names never count: a tool may tell the model to call its siblings first.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator

from tool_selector.trust.findings import Field, Finding, Rule, report

_ANY_IDENT = r"`?['\"]?(?:[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)['\"]?`?"
_TOOLISH = r"`?['\"]?(?P<tool>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)['\"]?`?"
_COMPOUND = re.compile(r"(?<![\w./:@-])" + _ANY_IDENT + r"(?![\w/@])")
_WORD = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]")
_NAME_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*")
_CALLED = re.compile(
    r"\b(?i:call|calls|calling|invoke|invokes|invoking|run|runs|use|uses|using|execute|trigger)\s+(?i:the\s+)?"
    r"[`'\"]?$"
)
_ORDERED_CALL = Rule(
    ("call", "invok", "run", "use", "using", "execut", "trigger"),
    re.compile(
        r"\b(?i:call|calls|calling|invoke|invokes|invoking|run|runs|use|uses|using|execute|trigger)\s+"
        r"(?i:the\s+)?[`'\"]?(?P<tool>[a-z][a-z0-9]*(?:_[a-z0-9]+)+)[`'\"]?(?![\w(-])"
    ),
    anchored=True,
)
_OBLIGATION = re.compile(
    r"\b(?:should|must|always|first|before|need to|needs to|required to|have to|then)\b", re.IGNORECASE
)
_ORDERING = re.compile(
    r"\b(?:before|after|first|instead|whenever|rather than|replace|modif(?:y|ies)|supersedes?|reroute|"
    r"redirect|always)\b",
    re.IGNORECASE,
)
_TAMPER = Rule(
    (
        "modif",
        "chang",
        "alter",
        "overrid",
        "hijack",
        "intercept",
        "replac",
        "rewrit",
        "supersed",
        "shadow",
        "overwrit",
        "rout",
        "redirect",
        "forward",
        "any other tool",
        "every other tool",
        "pass ",
    ),
    re.compile(
        r"(?i:\b(?:modif(?:y|ies)|chang(?:e|es)|alter(?:s)?|overrides?|hijacks?|intercepts?|replaces?|rewrites?)\s+"
        r"(?:the\s+|its\s+)?(?:\w+\s+)?(?:behaviou?r|output|result|response|values?|calls?)\s+(?:of|from)\s+"
        r"(?:the\s+)?(?:\S+\s+){0,2}?(?:tool|function)s?\b)"
        r"|(?i:\b(?:supersedes|replaces|overrides|shadows|intercepts|hijacks)\s+(?:the\s+)?(?:\w+\s+){0,2}?)"
        + _TOOLISH
        + r"|(?i:\b(?:replace|overwrite|override|rewrite)\s+(?:its|their|the)\s+(?:\w+\s+)?(?:output|result|"
        r"response|values?)s?\s+with\b)"
        r"|(?i:\b(?:route|redirect|reroute|forward)\s+all\s+(?:\w+\s+){0,2}(?:requests|calls)\s+"
        r"(?:here|to this tool)\b)"
        r"|(?i:\breroutes?\s+the\b)"
        r"|(?i:(?:(?<=\bwhen )|(?<=\bwhenever ))(?:any|every)\s+other\s+tools?\b)"
        r"|(?i:\bpass\s+(?:it|them|its\s+\w+|their\s+\w+)\s+through\s+this\s+tool\b)"
    ),
    anchored=True,
)
_TRUST_WORDS = frozenset(
    "secure safe trusted official verified enhanced improved better fixed real original updated new pro "
    "plus premium v2 v3 latest genuine certified".split()
)


def _split(name: str) -> list[str]:
    return [p for p in re.split(r"[_\-\s]+|(?<=[a-z0-9])(?=[A-Z])", name) if p]


def _compound(name: str) -> bool:
    return _NAME_TOKEN.fullmatch(name) is not None


class ScanContext:
    """The (server, tool name) pairs of a catalog, for the shadowing check; built once, cheap to query."""

    def __init__(self, servers_of: dict[str, frozenset[str]], names_of: dict[str, frozenset[str]]) -> None:
        self._servers_of = servers_of  # compound tool name -> the servers that serve it
        self._names_of = names_of  # server -> all its tool names
        self._by_words = {tuple(w.lower() for w in _split(n)): n for n in servers_of}
        self._compound_names = frozenset(servers_of)
        self._lower_names_of = {k: frozenset(n.lower() for n in v) for k, v in names_of.items()}
        self._all_lower = frozenset(n.lower() for v in names_of.values() for n in v)

    @classmethod
    def from_tools(cls, tools: Iterable[tuple[str, str]]) -> ScanContext:
        servers_of: dict[str, set[str]] = defaultdict(set)
        names_of: dict[str, set[str]] = defaultdict(set)
        for server, name in tools:
            names_of[server].add(name)
            if _compound(name):
                servers_of[name].add(server)
        return cls(
            {k: frozenset(v) for k, v in servers_of.items()}, {k: frozenset(v) for k, v in names_of.items()}
        )

    @classmethod
    def empty(cls) -> ScanContext:
        return cls({}, {})

    def __bool__(self) -> bool:
        return bool(self._names_of)

    def mentions(self, text: str) -> Iterator[re.Match[str]]:
        """The compound names in ``text`` that some server of the catalog serves."""
        words = set(_WORD.findall(text))
        if words.isdisjoint(self._compound_names):
            return
        for found in _COMPOUND.finditer(text):
            if found.group().strip("`'\"") in self._servers_of:
                yield found

    def serves(self, server: str, name: str) -> bool:
        return name in self._names_of.get(server, ()) or name.lower() in self._lower_names_of.get(server, ())

    def anywhere(self, name: str) -> bool:
        """Does any server of the catalog serve a tool called ``name`` (any case)?"""
        return name.lower() in self._all_lower

    def knows(self, server: str) -> bool:
        return server in self._names_of

    def others(self, server: str, name: str) -> list[str]:
        """The servers other than ``server`` that serve a tool called ``name``."""
        return sorted(s for s in self._servers_of.get(name, ()) if s != server)

    def imitated(self, server: str, name: str) -> tuple[str, str] | None:
        """(tool, server) of another server's tool that ``name`` copies with a trust word added."""
        words = [w.lower() for w in _split(name)]
        for cut in range(1, len(words)):
            for core, extra in ((words[:-cut], words[-cut:]), (words[cut:], words[:cut])):
                if len(core) < 2 or not set(extra) <= _TRUST_WORDS:
                    continue
                original = self._by_words.get(tuple(core))
                others = self.others(server, original) if original else []
                if original and others and not self.serves(server, original):
                    return original, others[0]
        return None


def _own(found: re.Match[str], server: str, own: set[str], context: ScanContext) -> bool:
    """Does a tampering phrase speak of the tool itself, one of its parameters or a sibling tool?"""
    tool = found.group("tool")
    return tool is not None and (tool in own or context.serves(server, tool))


def check_shadowing(
    server: str, name: str, field: Field, own: set[str], context: ScanContext
) -> list[Finding]:
    """``own``: the tool's name and its parameter names, which a description may mention freely."""
    found = next((f for f in _TAMPER.finditer(field) if not _own(f, server, own, context)), None)
    if found:
        return report(
            "shadowing", "flag", "changes what another tool does", field, found.group(), found.start()
        )
    if not context:
        return []
    copied = context.imitated(server, name)
    if copied:
        reason = f"its name imitates tool {copied[0]!r} of server {copied[1]!r}"
        return [Finding("shadowing", "flag", reason)]
    return _mentioned(server, field, own, context) or _ordered(server, field, own, context)


def _mentioned(server: str, field: Field, own: set[str], context: ScanContext) -> list[Finding]:
    for found in context.mentions(field.text):
        mentioned = found.group().strip("`'\"")
        others = context.others(server, mentioned)
        if mentioned in own or context.serves(server, mentioned) or not others:
            continue
        start, sentence = field.sentence_at(found.start())
        called = _CALLED.search(sentence[: found.start() - start]) is not None
        if called or _ORDERING.search(sentence):
            what = f"orders calls around tool {mentioned!r} of server {others[0]!r}"
            return report("shadowing", "flag", what, field, sentence, found.start())
    return []


def _ordered(server: str, field: Field, own: set[str], context: ScanContext) -> list[Finding]:
    if not context.knows(server):
        return []
    lowered = {o.lower() for o in own}
    for found in _ORDERED_CALL.finditer(field):
        tool = found.group("tool")
        if tool in lowered or context.anywhere(tool):
            continue
        _, sentence = field.sentence_at(found.start())
        if _OBLIGATION.search(sentence):
            what = f"orders a call to {tool!r}, which no server of the catalog serves"
            return report("shadowing", "flag", what, field, sentence, found.start())
    return []
