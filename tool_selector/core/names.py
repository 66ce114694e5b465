"""Names of servers and tools, and tool ids: the one naming rule and the one way to split an id.

The rule, for a server's name and a tool's name alike. ``ServerName`` and ``ToolName`` (used by
``ServerSpec`` and ``ToolSpec`` in tool_selector/core/models.py) apply it to whatever comes in: catalog
files and batches (JSON, CSV, mcpServers), REST registration, MCP discovery.

- Whitespace around a name is dropped (the name is stored without it); 1-300 characters are left.
- No control characters (NUL, newline, tab, ...: Unicode category Cc), no invisible format characters
  (zero-width spaces and joiners, the bidi controls U+202A-202E and U+2066-2069, tag characters: Cf),
  no line or paragraph separators (Zl, Zp), no lone surrogates (Cs).
- No ``::``: it separates a tool id's server from its tool. A tool's name does not begin with ``:``.

So a tool id ``server::tool`` splits one way only, at its last ``::`` (``split_tool_id``): a server's
name may still end in one colon (``Windows:`` in msc_bench_dev). Dots, slashes, dashes, single colons,
spaces inside and any letters stay allowed.

Names are compared as people see them (``fold``): after Unicode NFKC (fullwidth ``ＴＩＭＥ`` and
mathematical ``𝐭𝐢𝐦𝐞`` read ``TIME`` and ``time``), with the Cyrillic and Greek letters that look Latin
made Latin (``LOOKALIKES``: Cyrillic ``tіme`` reads ``time``), and without case. A new server whose name
folds to a configured or catalogued server's name (``TIME``, ``ＴＩＭＥ`` or ``tіme`` beside ``time``) is
refused where servers are added (``TakenNames``): an agent could not tell the two apart. So is a new
tool whose name folds to another tool's of the same server, or differs from any catalogued tool's name
only in such look-alike characters (``TakenToolNames``; a tool of another server may share a name, or
differ from it in case: ``search`` is served by many).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Annotated, Literal

from pydantic import AfterValidator, Field, StringConstraints
from pydantic_core import PydanticCustomError

MAX_NAME_CHARS = 300
SEPARATOR = "::"
_REFUSED_CATEGORIES = {
    "Cc": "a control character",
    "Cf": "an invisible format character",
    "Cs": "a lone surrogate",
    "Zl": "a line separator",
    "Zp": "a paragraph separator",
}
NameKind = Literal["server", "tool"]


def name_problem(name: str, kind: NameKind) -> str | None:
    """What breaks the naming rule in ``name`` (as stored: whitespace around it is a problem here), with
    what to do; None when it keeps the rule."""
    if not name or name != name.strip():
        return "is empty or begins or ends with whitespace; give the name without it"
    if len(name) > MAX_NAME_CHARS:
        return f"is {len(name)} characters long; a name has at most {MAX_NAME_CHARS}"
    for char in "" if name.isprintable() else name:  # printable: none of those categories (fast, in C)
        what = _REFUSED_CATEGORIES.get(unicodedata.category(char))
        if what is not None:
            label = unicodedata.name(char, "")
            return (
                f"contains {what} (U+{ord(char):04X}{' ' + label if label else ''}), so it does not read "
                "as what it is; remove it"
            )
    if SEPARATOR in name:
        return "contains '::', which separates a server from its tool in ids; use '.', '_' or '-' instead"
    if kind == "tool" and name.startswith(":"):
        return "begins with ':', so 'server::tool' would read two ways; drop the leading colon"
    return None


def _checked(kind: NameKind) -> AfterValidator:
    def check(value: str) -> str:
        problem = name_problem(value, kind)
        if problem is not None:
            raise PydanticCustomError(
                "name_rule", "the {kind} name {problem}", {"kind": kind, "problem": problem}
            )
        return value

    return AfterValidator(check)


RULE = (
    "1-300 characters, whitespace around dropped; no '::', control or invisible characters"
    " (docs/operator-guide.md, 'Names of servers and tools')"
)
_BOUNDED = StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_CHARS)
ServerName = Annotated[str, _BOUNDED, _checked("server"), Field(description=RULE)]
ToolName = Annotated[str, _BOUNDED, _checked("tool"), Field(description=RULE + "; not starting with ':'")]


# -- tool ids ----------------------------------------------------------------------------------------


def tool_id(server: str, name: str) -> str:
    """A tool's id, ``server::name``; ``split_tool_id`` gives the two back."""
    return f"{server}{SEPARATOR}{name}"


def split_tool_id(value: str) -> tuple[str, str]:
    """The server and the tool of an id. Names keep the rule above, so the id's last ``::`` is the one
    ``tool_id`` put there. ValueError for a text that is no tool id."""
    server, sep, name = value.rpartition(SEPARATOR)
    if not sep or not server or not name:
        raise ValueError(f"not a tool id of the form 'server::tool': {value!r}")
    return server, name


def server_of(value: str) -> str:
    """The server of a tool id ('' for a text that is no tool id)."""
    return value.rpartition(SEPARATOR)[0]


def tool_of(value: str) -> str:
    """The tool's own name in a tool id (the whole text for one that is no tool id)."""
    return value.rpartition(SEPARATOR)[2]


# -- names an agent cannot tell apart ----------------------------------------------------------------

# Cyrillic and Greek letters that look like Latin ones (the common homoglyphs of spoofed words; the
# prompt-injection scanner reads words through the same table: tool_selector/trust/findings.py)
LOOKALIKE_FROM = "аеорсухіјѕԁӏАВЕКМНОРСТУХІЈЅοαεικνρτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ"
LOOKALIKE_TO = "aeopcyxijsdlABEKMHOPCTYXIJSoaeikvptuxABEZHIKMNOPTYX"
LOOKALIKES = str.maketrans(LOOKALIKE_FROM, LOOKALIKE_TO)


def fold(name: str) -> str:
    """``name`` as people see it: NFKC (fullwidth and styled letters become plain ones), look-alike
    Cyrillic and Greek letters made Latin, without case. Two names that fold alike look alike."""
    text = name.strip()
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text).translate(LOOKALIKES)
        return text.casefold().translate(LOOKALIKES)
    return text.casefold()


def name_key(name: str) -> str:
    """What two server names an agent cannot tell apart have in common (``fold``)."""
    return fold(name)


class TakenNames:
    """Server names in use (catalogued, configured, earlier in a batch), looked up as people see them."""

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names: set[str] = set()
        self._by_key: dict[str, str] = {}
        for name in sorted(names):
            self.add(name)

    def add(self, name: str) -> None:
        self._names.add(name)
        self._by_key.setdefault(name_key(name), name)

    def copied_by(self, name: str) -> str | None:
        """The name in use that ``name`` looks like (``time`` for ``TIME``, ``ＴＩＭＥ`` or ``tіme``), or
        None. The name itself, in use, is the same server and no copy."""
        if name in self._names:
            return None
        return self._by_key.get(name_key(name))


def _how_alike(name: str, existing: str) -> str:
    if name.strip().casefold() == existing.strip().casefold():
        return "only in case"
    return (
        "only in case or in characters that look alike (fullwidth or styled forms, Cyrillic or Greek "
        "letters that look Latin)"
    )


def copy_problem(name: str, existing: str, kind: NameKind = "server") -> str:
    """The sentence refusing ``name`` as a look-alike of the server (or tool) ``existing``."""
    return (
        f"{kind} {name!r} differs from the {kind} {existing!r} {_how_alike(name, existing)}, so an agent "
        f"could not tell them apart; use {existing!r} itself, or a name that differs in more than that"
    )


class TakenToolNames:
    """Tool names in use, by server, for ``copied_by``: a new tool may not look like another tool of its
    server (case included), nor differ from any tool's name only in look-alike characters."""

    def __init__(self, pairs: Iterable[tuple[str, str]] = ()) -> None:
        self._names: set[tuple[str, str]] = set()
        self._in_server: dict[tuple[str, str], str] = {}  # (server, fold) -> the name in use
        self._anywhere: dict[str, dict[str, str]] = {}  # fold -> casefolded name -> an id in use
        for server, name in sorted(pairs):
            self.add(server, name)

    def add(self, server: str, name: str) -> None:
        self._names.add((server, name))
        key = fold(name)
        self._in_server.setdefault((server, key), name)
        self._anywhere.setdefault(key, {}).setdefault(name.strip().casefold(), tool_id(server, name))

    def copied_by(self, server: str, name: str) -> str | None:
        """The id of the tool in use that the tool ``name`` of ``server`` looks like, or None."""
        if (server, name) in self._names:
            return None
        key = fold(name)
        same_server = self._in_server.get((server, key))
        if same_server is not None:
            return tool_id(server, same_server)
        others = self._anywhere.get(key, {})
        lookalike = [found for cased, found in others.items() if cased != name.strip().casefold()]
        return min(lookalike) if lookalike else None


def tool_copied(pairs: Iterable[tuple[str, str]], server: str, name: str) -> str | None:
    """``TakenToolNames(pairs).copied_by(server, name)`` for one name, in one pass over ``pairs`` (a
    registration's check against a catalog of 100k tools: tens of milliseconds, not a whole index)."""
    key, cased = fold(name), name.strip().casefold()
    found: list[str] = []
    for other_server, other in pairs:
        if other == name and other_server == server:
            return None
        if (other.casefold() if other.isascii() else fold(other)) != key:
            continue
        if other_server == server or other.strip().casefold() != cased:
            found.append(tool_id(other_server, other))
    same_server = [f for f in found if server_of(f) == server]
    return min(same_server or found) if found else None


def tool_copy_problem(tool: str, existing: str) -> str:
    """The sentence refusing the tool id ``tool`` as a look-alike of the tool id ``existing``."""
    how = _how_alike(tool_of(tool), tool_of(existing))
    return (
        f"tool {tool!r} looks like the tool {existing!r}: their names differ {how}, so an agent could not "
        f"tell them apart; use {tool_of(existing)!r} itself, or a name that differs in more than that"
    )


# -- names echoed back --------------------------------------------------------------------------------


def shown_name(value: str, limit: int = MAX_NAME_CHARS) -> str:
    """``value`` quoted for an error text: whole up to ``limit`` characters, else its first ``limit`` and
    how long it was (no name is longer, and echoing 100 kB back costs the caller's model its context)."""
    if len(value) <= limit:
        return repr(value)
    return f"{value[:limit]!r}… (cut here: it has {len(value)} characters)"
