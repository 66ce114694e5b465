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
from collections.abc import Iterable, Iterator, Mapping

from tool_selector.trust.findings import Field, Finding, Rule, report
from tool_selector.trust.names import EMPTY, CatalogNames, compound, split_name, words_of

_ANY_IDENT = r"`?['\"]?(?:[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)['\"]?`?"
_TOOLISH = r"`?['\"]?(?P<tool>[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)['\"]?`?"
_COMPOUND = re.compile(r"(?<![\w./:@-])" + _ANY_IDENT + r"(?![\w/@])")
_WORD = re.compile(r"[A-Za-z][\w-]*[A-Za-z0-9]")
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


class ScanContext:
    """The (server, tool name) pairs of a catalog, for the shadowing check; cheap to query.

    Made over a ``CatalogNames`` (trust/names.py), with ``over`` replacing the names of a few servers
    (a write's own tools, or names added for one vetting) without copying the rest: each answer is the
    one a context made from all the pairs, those servers' replaced, would give. The context reads its
    ``CatalogNames`` as it is when asked: a context with ``over`` must not outlive a change to them."""

    def __init__(self, names: CatalogNames, over: Mapping[str, frozenset[str]] | None = None) -> None:
        self._base = names
        self._over = {s: v for s, v in (over or {}).items() if v != names.names_of.get(s, EMPTY)}
        self._over_lower = {s: frozenset(n.lower() for n in v) for s, v in self._over.items()}
        self._added: dict[str, set[str]] = {}  # compound name -> servers of ``over`` that now serve it
        self._removed: dict[str, set[str]] = {}  # compound name -> servers of ``over`` that no longer do
        self._lower_delta: dict[str, int] = {}
        self._size = len(names.names_of)
        for server, new in self._over.items():
            old = names.names_of.get(server, EMPTY)
            self._size += bool(new) - bool(old)
            for name in new - old:
                if compound(name):
                    self._added.setdefault(name, set()).add(server)
            for name in old - new:
                if compound(name):
                    self._removed.setdefault(name, set()).add(server)
            old_lower, new_lower = names.lower_of.get(server, EMPTY), self._over_lower[server]
            for lower in new_lower - old_lower:
                self._lower_delta[lower] = self._lower_delta.get(lower, 0) + 1
            for lower in old_lower - new_lower:
                self._lower_delta[lower] = self._lower_delta.get(lower, 0) - 1
        self._over_called: dict[str, set[str]] = {}  # lowercased name -> servers ``over`` gives names
        for called in (s for s, v in self._over.items() if v):
            self._over_called.setdefault(called.lower(), set()).add(called)
        self._added_words: dict[tuple[str, ...], set[str]] = {}
        for name in self._added:
            self._added_words.setdefault(words_of(name), set()).add(name)

    @classmethod
    def from_tools(cls, tools: Iterable[tuple[str, str]]) -> ScanContext:
        return cls(CatalogNames.of(tools))

    @classmethod
    def empty(cls) -> ScanContext:
        return cls(CatalogNames())

    def __bool__(self) -> bool:
        return self._size > 0

    def _names(self, server: str) -> frozenset[str]:
        over = self._over.get(server)
        return self._base.names_of.get(server, EMPTY) if over is None else over

    def _lower(self, server: str) -> frozenset[str]:
        over = self._over_lower.get(server)
        return self._base.lower_of.get(server, EMPTY) if over is None else over

    def _servers(self, name: str) -> set[str] | frozenset[str]:
        """The servers that serve the compound name ``name``."""
        base = self._base.servers_of.get(name, EMPTY)
        came, gone = self._added.get(name), self._removed.get(name)
        if came is None and gone is None:
            return base
        return (base - (gone or EMPTY)) | (came or EMPTY)

    def mentions(self, text: str) -> Iterator[re.Match[str]]:
        """The compound names in ``text`` that some server of the catalog serves."""
        served, added = self._base.servers_of, self._added
        if not any(w in served or w in added for w in set(_WORD.findall(text))):
            return  # (a loop over the text's words: isdisjoint with a dict's keys walks all the keys)
        for found in _COMPOUND.finditer(text):
            if self._servers(found.group().strip("`'\"")):
                yield found

    def serves(self, server: str, name: str) -> bool:
        return name in self._names(server) or name.lower() in self._lower(server)

    def anywhere(self, name: str) -> bool:
        """Does any server of the catalog serve a tool called ``name`` (any case)?"""
        lower = name.lower()
        return self._base.lower_count.get(lower, 0) + self._lower_delta.get(lower, 0) > 0

    def knows(self, server: str) -> bool:
        return bool(self._names(server))

    def server_called(self, name: str) -> str | None:
        """A server of the catalog whose name is ``name`` in any case (the first in sorted order), or None."""
        lower = name.lower()
        found = {s for s in self._base.servers_lower.get(lower, EMPTY) if self.knows(s)}
        found |= self._over_called.get(lower, set())
        return min(found) if found else None

    def others(self, server: str, name: str) -> list[str]:
        """The servers other than ``server`` that serve a tool called ``name``."""
        return sorted(s for s in self._servers(name) if s != server)

    def imitated(self, server: str, name: str) -> tuple[str, str] | None:
        """(tool, server) of another server's tool that ``name`` copies with a trust word added. Names
        with the same words (``send_email``, ``sendEmail``) are tried in sorted order."""
        words = [w.lower() for w in split_name(name)]
        for cut in range(1, len(words)):
            for core, extra in ((words[:-cut], words[-cut:]), (words[cut:], words[:cut])):
                if len(core) < 2 or not set(extra) <= _TRUST_WORDS:
                    continue
                key = tuple(core)
                originals = self._base.by_words.get(key, EMPTY) | self._added_words.get(key, EMPTY)
                for original in sorted(originals):
                    others = self.others(server, original)
                    if others and not self.serves(server, original):
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
