"""Use case: structured queries over the catalog (the gateway's ``catalog_query`` tool).

An agent checks the catalog before it acts: which servers cover a domain, which tools of a server
create an issue, whether a server can delete a branch, what a server's profile says.

    CatalogView.load(store)             one snapshot of servers, tools, profiles, enrichments, discovery
    view.query(query_type, filters)     servers | tools | check_tool | profile -> a JSON-ready dict

The view is built once and answers from memory (no database reads per query); rebuild it when
``store.catalog_hash()`` differs from ``view.catalog_hash`` (``view.is_current(store)`` checks that
and the discovery states, which the hash does not cover).

Action/entity matching reads three places, strongest first: the tool's enrichment ``action_entities``
("create issue", "add ticket"), the words of its name, the words of its description. Words are
normalised the way the enricher writes them (verb forms to the verb, plurals to the singular), and a
verb's synonyms count at half weight. Agents always see a tool's original description, never the
enriched text.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import logging
import re
import statistics
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from semantic_enrichment.enrichment import singular
from semantic_enrichment.lexicon import VERB_SYNONYMS, canonical_verb
from semantic_enrichment.profiling import compute_profile_hash
from tool_selector.catalog.store import CatalogStore
from tool_selector.errors import InvalidInputError, NotFoundError
from tool_selector.indexing import server_tags
from tool_selector.models import DiscoveryStatus, ServerProfile, ServerRecord, ToolEnrichment, ToolRecord
from tool_selector.search.text import split_identifiers

logger = logging.getLogger(__name__)

QUERY_TYPES = ("servers", "tools", "check_tool", "profile")
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
MAX_FILTER_CHARS = 300
LIST_DESCRIPTION_CHARS = 400  # servers and tools lists: the start of the original description
TOOL_DESCRIPTION_CHARS = 1000  # check_tool: the best tools' original descriptions
MATCH_DESCRIPTION_CHARS = 1000  # only the start of a description is searched for words
MAX_PAIRS_SHOWN = 10
CHECK_TOOLS_SHOWN = 5
WEIGHTS = {"action_entities": 3.0, "name": 2.0, "description": 1.0}

_FILTERS: dict[str, dict[str, type]] = {
    "servers": {"domain": str, "keyword": str, "limit": int},
    "tools": {"server": str, "action": str, "entity": str, "name_pattern": str, "limit": int},
    "check_tool": {"server": str, "action": str, "entity": str},
    "profile": {"server": str},
}
_REQUIRED: dict[str, tuple[str, ...]] = {"check_tool": ("server", "action"), "profile": ("server",)}
EXAMPLES: dict[str, str] = {
    "servers": 'catalog_query("servers", {"keyword": "github", "limit": 5})',
    "tools": 'catalog_query("tools", {"server": "<server name>", "action": "create", "entity": "issue"})',
    "check_tool": 'catalog_query("check_tool", {"server": "<server name>", "action": "delete", '
    '"entity": "branch"})',
    "profile": 'catalog_query("profile", {"server": "<server name>"})',
}
_WORD = re.compile(r"[^\W_]+")


def normalise(text: str) -> str:
    """Words as the matcher compares them, space-padded: "Creates Issues" -> " create issue "."""
    words = _WORD.findall(split_identifiers(text).lower())
    return " " + " ".join(canonical_verb(w) or singular(w) for w in words) + " "


def _both(text: str) -> str:
    """The normalised text, and again without splitting camel case ("GitHub" is "git hub" and "github")."""
    split, whole = normalise(text), normalise(text.lower())
    return split if split == whole else f"{split}|{whole}"


def _lowered(text: str) -> str:
    split, whole = split_identifiers(text).lower(), text.lower()
    return split if split == whole else f"{split} | {whole}"


def _q(value: str) -> str:
    """A value quoted as JSON, for the call examples in messages."""
    return json.dumps(value, ensure_ascii=False)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One tool as the view keeps it: the original fields plus pre-normalised text for matching."""

    server: str
    name: str
    description: str
    properties: tuple[str, ...]
    required: tuple[str, ...]
    action_entities: tuple[str, ...]
    pairs: tuple[str, ...]  # normalised action_entities
    name_text: str
    description_text: str
    all_text: str  # everything above, for a quick first filter


@dataclass(frozen=True, slots=True)
class ServerEntry:
    record: ServerRecord
    profile: ServerProfile | None
    profile_current: bool
    discovery: DiscoveryStatus | None
    tools: tuple[ToolEntry, ...]
    tags: tuple[str, ...]
    strong_text: str  # name, tags, domain, profile keywords / capabilities / entities
    weak_text: str  # description
    domain_text: str  # the profile's domain and the metadata categories

    @property
    def domain(self) -> str:
        return self.profile.domain if self.profile else ", ".join(t.replace("-", " ") for t in self.tags)

    def keywords(self) -> list[str]:
        extra = self.profile.semantic_keywords if self.profile else []
        return list(dict.fromkeys([*self.tags, *extra]))[:10]


@dataclass(frozen=True, slots=True)
class Want:
    """What a tools/check_tool query looks for, normalised: an action (and its synonyms), an entity."""

    action: str = ""
    synonyms: tuple[str, ...] = ()
    entity: str = ""

    @classmethod
    def of(cls, action: str | None, entity: str | None) -> Want:
        verb = normalise(action or "").strip()
        synonyms = tuple(
            dict.fromkeys(s for s in (normalise(x).strip() for x in VERB_SYNONYMS.get(verb, ())) if s != verb)
        )
        return cls(verb, synonyms, normalise(entity or "").strip())

    def __bool__(self) -> bool:
        return bool(self.action or self.entity)

    def _level(self, texts: Sequence[str], prefix: bool) -> float:
        """1.0 when a text has the action and the entity, 0.5 when only with a synonym, else 0."""
        best = 0.0
        for text in texts:
            if self.entity and f" {self.entity} " not in text:
                continue
            for level, verbs in ((1.0, (self.action,)), (0.5, self.synonyms)):
                if level <= best:
                    break
                if not self.action or any(_has_action(text, v, self.entity, prefix) for v in verbs):
                    best = level
            if best == 1.0:
                break
        return best

    def score(self, tool: ToolEntry) -> tuple[float, str]:
        """The tool's match score (0 = no match) and where it matched best."""
        if self.entity and f" {self.entity} " not in tool.all_text:
            return 0.0, ""
        if self.action and not any(f" {v} " in tool.all_text for v in (self.action, *self.synonyms)):
            return 0.0, ""
        levels = {
            "action_entities": self._level(tool.pairs, prefix=True),
            "name": self._level((tool.name_text,), prefix=False),
            "description": self._level((tool.description_text,), prefix=False),
        }
        total = sum(WEIGHTS[k] * v for k, v in levels.items())
        where = max(levels, key=lambda k: WEIGHTS[k] * levels[k])
        return total, where if total else ""


def _has_action(text: str, verb: str, entity: str, prefix: bool) -> bool:
    if not prefix:
        return f" {verb} " in text
    if not text.startswith(f" {verb} "):
        return False
    return not entity or f" {entity} " in text[len(verb) + 1 :]


def _tool_entry(tool: ToolRecord, enrichment: ToolEnrichment | None) -> ToolEntry:
    props = tool.input_schema.get("properties")
    required = tool.input_schema.get("required")
    pairs = tuple(enrichment.action_entities) if enrichment else ()
    normalised = tuple(normalise(p) for p in pairs)
    name_text = _both(tool.name)
    description_text = _both(tool.description[:MATCH_DESCRIPTION_CHARS])
    return ToolEntry(
        server=tool.server,
        name=tool.name,
        description=tool.description,
        properties=tuple(str(p) for p in props) if isinstance(props, dict) else (),
        required=tuple(str(r) for r in required) if isinstance(required, list) else (),
        action_entities=pairs,
        pairs=normalised,
        name_text=name_text,
        description_text=description_text,
        all_text="|".join((*normalised, name_text, description_text)),
    )


def _server_entry(
    record: ServerRecord,
    tools: list[ToolRecord],
    profile: ServerProfile | None,
    discovery: DiscoveryStatus | None,
    enrichments: Mapping[str, ToolEnrichment],
) -> ServerEntry:
    tags = tuple(dict.fromkeys(server_tags(record)))
    strong = [record.name, *tags]
    if profile is not None:
        strong += [profile.domain, *profile.semantic_keywords, *profile.primary_capabilities]
        strong += profile.entity_types
    return ServerEntry(
        record=record,
        profile=profile,
        profile_current=profile is not None and profile.profile_hash == compute_profile_hash(record, tools),
        discovery=discovery,
        tools=tuple(_tool_entry(t, enrichments.get(t.id)) for t in tools),
        tags=tags,
        strong_text=" | ".join(_lowered(s) for s in strong),
        weak_text=_lowered(record.description),
        domain_text=" | ".join(_plain(d) for d in (profile.domain if profile else "", *tags)),
    )


def _glob(pattern: str) -> re.Pattern[str]:
    """A shell glob, case-insensitive; without * or ? it matches anywhere in the name."""
    text = pattern.strip().lower()
    return re.compile(fnmatch.translate(text if any(c in text for c in "*?[") else f"*{text}*"))


def _plain(text: str) -> str:
    return " ".join(text.replace("-", " ").replace("_", " ").lower().split())


# -- input ----------------------------------------------------------------------------------------


def parse_filters(query_type: str, filters: Mapping[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """The query type and its filters, checked; InvalidInputError says what to send instead."""
    kind = query_type.strip().lower().replace("-", "_") if isinstance(query_type, str) else ""
    if kind not in _FILTERS:
        raise InvalidInputError(
            f"Unknown query_type {query_type!r}. Use one of: {', '.join(QUERY_TYPES)}.",
            hint=f"For example {EXAMPLES['tools']}; {EXAMPLES['servers']}.",
            query_type=query_type,
        )
    if filters is None:
        filters = {}
    if not isinstance(filters, Mapping):
        raise InvalidInputError(
            f"filters must be a JSON object, not {type(filters).__name__}.",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    allowed = _FILTERS[kind]
    unknown = sorted(str(k) for k in filters if k not in allowed)
    if unknown:
        raise InvalidInputError(
            f"Unknown filter {', '.join(map(repr, unknown))} for query_type {kind!r}. "
            f"Allowed filters: {', '.join(allowed)}.",
            hint=f"Send only those, for example {EXAMPLES[kind]}.",
        )
    parsed = {str(k): _checked(kind, str(k), v, allowed[str(k)]) for k, v in filters.items() if v is not None}
    missing = [k for k in _REQUIRED.get(kind, ()) if k not in parsed]
    if missing:
        raise InvalidInputError(
            f"query_type {kind!r} needs the filter {', '.join(map(repr, missing))}.",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    return kind, parsed


def _checked(kind: str, key: str, value: object, expected: type) -> object:
    if expected is int:
        if not isinstance(value, int) or isinstance(value, bool):
            raise InvalidInputError(
                f"Filter {key!r} must be a whole number, not {value!r}.",
                hint=f"Send for example {{{_q(key)}: 10}} (at most {MAX_LIMIT}).",
            )
        if value < 1:
            raise InvalidInputError(
                f"Filter {key!r} must be at least 1, not {value}.", hint="Send a number from 1 to 100."
            )
        return min(value, MAX_LIMIT)
    if not isinstance(value, str):
        raise InvalidInputError(
            f"Filter {key!r} must be a string, not {type(value).__name__} ({value!r}).",
            hint=f"For example {EXAMPLES[kind]}.",
        )
    if not value.strip() or len(value) > MAX_FILTER_CHARS:
        raise InvalidInputError(
            f"Filter {key!r} must be a non-empty string of at most {MAX_FILTER_CHARS} characters.",
            hint=f"Leave it out or send a short value, for example {EXAMPLES[kind]}.",
        )
    return value  # kept as sent: a few server names end in a space


# -- the view ---------------------------------------------------------------------------------------


class CatalogView:
    """An in-memory snapshot of the catalog that answers ``catalog_query`` without database reads."""

    def __init__(
        self,
        entries: Sequence[ServerEntry],
        *,
        catalog_hash: str,
        discovery: Mapping[str, DiscoveryStatus],
    ) -> None:
        self.catalog_hash = catalog_hash
        self.servers: dict[str, ServerEntry] = {e.record.name: e for e in entries}
        self._all_tools = [t for e in entries for t in e.tools]
        self.tool_count = len(self._all_tools)
        self._discovery = dict(discovery)
        folded: dict[str, list[str]] = {}
        for name in self.servers:
            folded.setdefault(name.strip().casefold(), []).append(name)
        self._folded = {k: v[0] for k, v in folded.items() if len(v) == 1}

    @classmethod
    def load(cls, store: CatalogStore) -> CatalogView:
        """Read the whole catalog once; retried when a sync wrote in the middle of the reads."""
        started = time.perf_counter()
        for _ in range(3):
            before = store.catalog_hash()
            view = cls._read(store, before)
            if store.catalog_hash() == before:
                break
            logger.info("the catalog changed while the view was read; reading it again")
        logger.info(
            "catalog view: %d servers, %d tools in %.0f ms",
            len(view.servers),
            view.tool_count,
            (time.perf_counter() - started) * 1000,
        )
        return view

    @classmethod
    def _read(cls, store: CatalogStore, catalog_hash: str) -> CatalogView:
        tools: dict[str, list[ToolRecord]] = {}
        for tool in store.list_tools():
            tools.setdefault(tool.server, []).append(tool)
        profiles, enrichments, discovery = (
            store.get_profiles(),
            store.get_enrichments(),
            store.get_discovery(),
        )
        entries = [
            _server_entry(s, tools.get(s.name, []), profiles.get(s.name), discovery.get(s.name), enrichments)
            for s in store.list_servers()
        ]
        return cls(entries, catalog_hash=catalog_hash, discovery=discovery)

    def is_current(self, store: CatalogStore) -> bool:
        """Whether the store still holds what this view was built from (hash and discovery states)."""
        return store.catalog_hash() == self.catalog_hash and store.get_discovery() == self._discovery

    def query(self, query_type: str, filters: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Answer one query; the result is JSON-ready. Raises InvalidInputError or NotFoundError."""
        kind, parsed = parse_filters(query_type, filters)
        handler = {
            "servers": self._query_servers,
            "tools": self._query_tools,
            "check_tool": self._check_tool,
            "profile": self._profile,
        }[kind]
        return {"query_type": kind, "filters": parsed, **handler(parsed)}

    # -- servers ----------------------------------------------------------------------------------

    def _query_servers(self, f: Mapping[str, Any]) -> dict[str, Any]:
        domain = _plain(f.get("domain", ""))
        words = _WORD.findall(split_identifiers(f.get("keyword", "")).lower())
        patterns = [re.compile(r"\b" + re.escape(singular(w))) for w in words]
        hits: list[tuple[float, ServerEntry]] = []
        for entry in self.servers.values():
            if domain and domain not in entry.domain_text:
                continue
            score = _keyword_score(entry, patterns)
            if score or not patterns:
                hits.append((score, entry))
        hits.sort(key=lambda h: (-h[0], h[1].record.name.casefold()))
        items = [_server_item(e) for _, e in hits[: f.get("limit", DEFAULT_LIMIT)]]
        return _listing(items, len(hits), f, _servers_message(len(hits), len(items), len(self.servers)))

    # -- tools ------------------------------------------------------------------------------------

    def _matching_tools(
        self, f: Mapping[str, Any], pool: Sequence[ToolEntry]
    ) -> list[tuple[float, str, ToolEntry]]:
        want = Want.of(f.get("action"), f.get("entity"))
        name_re = _glob(f["name_pattern"]) if "name_pattern" in f else None
        hits: list[tuple[float, str, ToolEntry]] = []
        for tool in pool:
            if name_re is not None and not name_re.match(tool.name.lower()):
                continue
            score, where = want.score(tool) if want else (0.0, "")
            if score or not want:
                hits.append((score, where, tool))
        hits.sort(key=lambda h: (-h[0], h[2].server.casefold(), h[2].name))
        return hits

    def _query_tools(self, f: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.server(f["server"]) if "server" in f else None
        pool = entry.tools if entry else self._all_tools
        hits = self._matching_tools(f, pool)
        matched = bool(f.get("action") or f.get("entity"))
        items = [
            _tool_item(t, where if matched else None) for _, where, t in hits[: f.get("limit", DEFAULT_LIMIT)]
        ]
        message = _tools_message(len(hits), len(items), entry.record.name if entry else None)
        return _listing(items, len(hits), f, message)

    # -- check_tool ---------------------------------------------------------------------------------

    def _check_tool(self, f: Mapping[str, Any]) -> dict[str, Any]:
        """has_tool when a tool's action_entities or name say so; a tool whose description alone
        mentions it is listed as a maybe, with servers that clearly have one."""
        entry = self.server(f["server"])
        name = entry.record.name
        hits = self._matching_tools(f, entry.tools)[:CHECK_TOOLS_SHOWN]
        what = " ".join(x.strip() for x in (f["action"], f.get("entity", "")) if x)
        strong = [t.name for _, where, t in hits if where != "description"]
        elsewhere = [] if strong else self._elsewhere(f, name)
        if strong:
            tools = " or ".join(map(repr, strong[:3]))
            message = f"Call activate_power({_q(name)}) and then {name}'s tool {tools}."
        else:
            message = _no_tool_message(name, what, f, elsewhere, hits[0][2].name if hits else None)
        return {
            "server": name,
            "action": f["action"],
            "entity": f.get("entity"),
            "has_tool": bool(strong),
            "tools": [
                {"name": t.name, "description": _clip(t.description, TOOL_DESCRIPTION_CHARS), "match": where}
                for _, where, t in hits
            ],
            "other_servers": elsewhere,
            "message": message,
        }

    def _elsewhere(self, f: Mapping[str, Any], skip: str) -> list[dict[str, Any]]:
        """Up to 3 other servers with a tool that matches by action_entities or name."""
        best: dict[str, tuple[float, str]] = {}
        for score, where, tool in self._matching_tools(f, self._all_tools):
            if tool.server != skip and where != "description" and tool.server not in best:
                best[tool.server] = (score, tool.name)
        ranked = sorted(best.items(), key=lambda kv: (-kv[1][0], kv[0].casefold()))[:3]
        return [{"server": s, "tool": t} for s, (_, t) in ranked]

    # -- profile ------------------------------------------------------------------------------------

    def _profile(self, f: Mapping[str, Any]) -> dict[str, Any]:
        entry = self.server(f["server"])
        name = entry.record.name
        if entry.profile is None:
            message = (
                f"{name} has no profile yet; what is known is its description and tools. "
                "Ask the operator to run `tool-selector sync` to profile it, or call "
                f'catalog_query("tools", {{"server": {_q(name)}}}) to read its tools.'
            )
        else:
            message = (
                f'Call activate_power({_q(name)}) to use it, or catalog_query("tools", '
                f'{{"server": {_q(name)}}}) for its tools\' descriptions and arguments.'
            )
            if not entry.profile_current:
                message = f"{name}'s profile is older than its tools (run `tool-selector sync`). " + message
        return {
            "server": name,
            "description": entry.record.description,
            "domain": entry.domain,
            "keywords": entry.keywords(),
            "tool_count": len(entry.tools),
            "tools": [t.name for t in entry.tools],
            "discovery": entry.discovery.model_dump(mode="json") if entry.discovery else None,
            "profile": entry.profile.model_dump(mode="json") if entry.profile else None,
            "profile_missing": entry.profile is None,
            "profile_current": entry.profile_current,
            "message": message,
        }

    # -- names ------------------------------------------------------------------------------------

    def server(self, name: str) -> ServerEntry:
        """The server of this exact name (or the only one equal to it ignoring case)."""
        entry = self.servers.get(name) or self.servers.get(self._folded.get(name.strip().casefold(), ""))
        if entry is not None:
            return entry
        close = self.closest_names(name)
        listed = f" Closest names: {', '.join(map(repr, close))}." if close else ""
        raise NotFoundError(
            f"No server named {name!r} in the catalog.{listed}",
            hint=(
                "Use one of these exact names, or search with "
                f'catalog_query("servers", {{"keyword": {_q(name.split(maxsplit=1)[0])}}}).'
            ),
            server=name,
            closest=close,
        )

    def closest_names(self, name: str, n: int = 5) -> list[str]:
        folded = name.strip().casefold()
        inside = sorted((s for s in self.servers if folded in s.casefold()), key=len)
        similar = difflib.get_close_matches(folded, list(self._folded), n=n, cutoff=0.5)
        return list(dict.fromkeys([*inside, *(self._folded[s] for s in similar)]))[:n]


# -- answers ----------------------------------------------------------------------------------------


def _keyword_score(entry: ServerEntry, patterns: Sequence[re.Pattern[str]]) -> float:
    """2 per keyword word found in the name, tags or profile, 1 in the description; 0 if one is missing."""
    score = 0.0
    for pattern in patterns:
        if pattern.search(entry.strong_text):
            score += 2.0
        elif pattern.search(entry.weak_text):
            score += 1.0
        else:
            return 0.0
    return score


def _server_item(entry: ServerEntry) -> dict[str, Any]:
    return {
        "name": entry.record.name,
        "description": _clip(entry.record.description, LIST_DESCRIPTION_CHARS),
        "domain": entry.domain,
        "tool_count": len(entry.tools),
        "keywords": entry.keywords(),
        "discovery": entry.discovery.state if entry.discovery else None,
    }


def _tool_item(tool: ToolEntry, match: str | None) -> dict[str, Any]:
    item: dict[str, Any] = {
        "server": tool.server,
        "name": tool.name,
        "description": _clip(tool.description, LIST_DESCRIPTION_CHARS),
        "action_entities": list(tool.action_entities[:MAX_PAIRS_SHOWN]),
        "input_properties": list(tool.properties),
        "required": list(tool.required),
    }
    if match is not None:
        item["match"] = match
    return item


def _listing(items: list[dict[str, Any]], total: int, f: Mapping[str, Any], message: str) -> dict[str, Any]:
    return {
        "total": total,
        "returned": len(items),
        "limit": f.get("limit", DEFAULT_LIMIT),
        "items": items,
        "message": message,
    }


def _more(total: int, returned: int, narrow: str) -> str:
    if total <= returned:
        return ""
    return f"Showing {returned} of {total}; narrow with {narrow} or raise limit (at most {MAX_LIMIT}). "


def _servers_message(total: int, returned: int, known: int) -> str:
    if total == 0:
        return (
            "No server matches these filters. Try one word of the keyword or domain, or a synonym; "
            f'catalog_query("servers", {{}}) lists all {known} servers.'
        )
    return _more(total, returned, "keyword or domain") + (
        'Call catalog_query("tools", {"server": NAME}) to see a server\'s tools, '
        "or activate_power(NAME) to use it."
    )


def _tools_message(total: int, returned: int, server: str | None) -> str:
    if total == 0 and server is not None:
        return (
            f"{server} has no tool matching these filters. Try a synonym or drop a filter; "
            f'catalog_query("tools", {{"server": {_q(server)}}}) lists all its tools.'
        )
    if total == 0:
        return (
            "No tool in the catalog matches these filters. Try a synonym or drop a filter, "
            'or search servers with catalog_query("servers", {"keyword": ...}).'
        )
    return _more(total, returned, "server, action, entity or name_pattern") + (
        "To use a tool, call activate_power(SERVER) and then the tool by name; input_properties are "
        "its arguments."
    )


def _no_tool_message(
    server: str, what: str, f: Mapping[str, Any], elsewhere: list[dict[str, Any]], maybe: str | None
) -> str:
    text = f"{server} has no tool to {what}."
    if maybe is not None:
        text = (
            f"{server} has no tool named for '{what}', but its tool {maybe!r} may do it (its description "
            f"mentions it): read that description, then call activate_power({_q(server)}) and the tool."
        )
    if elsewhere:
        others = ", ".join(f"{o['server']!r} (tool {o['tool']!r})" for o in elsewhere)
        return (
            f"{text} These servers have one: {others}. Call activate_power with one of them and then "
            "its tool, or ask the user which to use."
        )
    if maybe is not None:
        return text
    keyword = (f.get("entity") or f["action"]).strip()
    return (
        f'{text} No other server in the catalog has one either; try catalog_query("servers", '
        f'{{"keyword": {_q(keyword)}}}), or tell the user it cannot be done with the configured tools.'
    )


# -- measuring ----------------------------------------------------------------------------------------


def bench_catalog_query(view: CatalogView, n: int = 200) -> dict[str, dict[str, float]]:
    """Per query type: p50, p95 and max milliseconds over ``n`` queries (real server names, common
    verbs and nouns; misses included, which make check_tool scan every tool for other servers)."""
    names = sorted(view.servers)
    if not names:
        return {}
    verbs = ["create", "get", "list", "search", "delete", "update", "send", "run"]
    nouns = ["file", "issue", "weather", "user", "message", "database", "image", "price", "branch"]

    def filters(kind: str, i: int) -> dict[str, Any]:
        server, verb, noun = names[(i * 37) % len(names)], verbs[i % len(verbs)], nouns[i % len(nouns)]
        shapes: dict[str, list[dict[str, Any]]] = {
            "servers": [{"keyword": noun}, {"domain": noun, "limit": 100}, {"keyword": f"{verb} {noun}"}],
            "tools": [{"action": verb}, {"action": verb, "entity": noun}, {"name_pattern": f"*{noun}*"}],
            "check_tool": [{"server": server, "action": verb, "entity": noun}],
            "profile": [{"server": server}],
        }
        return shapes[kind][i % len(shapes[kind])]

    report: dict[str, dict[str, float]] = {}
    for kind in QUERY_TYPES:
        times: list[float] = []
        for i in range(n):
            args = filters(kind, i)
            started = time.perf_counter()
            view.query(kind, args)
            times.append((time.perf_counter() - started) * 1000)
        times.sort()
        report[kind] = {
            "p50_ms": round(statistics.median(times), 3),
            "p95_ms": round(times[min(len(times) - 1, int(0.95 * len(times)))], 3),
            "max_ms": round(times[-1], 3),
        }
    return report
