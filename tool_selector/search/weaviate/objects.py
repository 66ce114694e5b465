"""The Weaviate collection's layout, in plain Python (no SDK): its properties, the object of one search
document, the keyword properties a query searches, and a hit read back from an answer.

One collection (``Tool`` by default) holds one object per tool, with a deterministic UUID made from the
tool id and the vector our own embedder made (no server-side vectorizer). Each object carries:

- the design's readable properties: ``tool_id``, ``name``, ``description``, ``enhanced_description``,
  ``mcp_server_name``, ``action_entities``, ``semantic_keywords``, ``server_domain``, ``use_cases``,
  ``tags`` (plus ``server_description``, ``parameter_names`` and ``text_hash``), for people and filters;
- keyword properties, stored with whitespace tokenization and holding text as our own tokenizer sees
  it (identifiers split, stopwords dropped, Snowball-stemmed; Weaviate's word tokenizer neither stems
  nor splits ``camelCase``): one per searchable field, ``kw_<field>``, and ``kw_all``, every field's
  tokens repeated by the configured boosts, which is exactly the document the embedded backend's BM25
  scores (``weighted_tokens``), with ``kw_boosts`` naming the boosts it was built for.

A second collection (``<collection>Servers``, ``SERVERS``) holds one object per server document, laid
out the same way: ``mcp_server_name`` (the server's name, its id), ``text_hash``, readable properties,
``kw_<field>`` per searchable server field and ``kw_all`` built for the server field boosts.

A query is one hybrid search: the query's tokens, our query vector, ``alpha`` and the configured
fusion. With the configured ``field_boosts`` it searches ``kw_all``: the same BM25 over the same tokens
as the embedded backend, so both rank, and therefore tier, alike. With other boosts (or a collection
filled under other boosts) it searches the ``kw_<field>`` properties boosted through
``query_properties`` (``kw_name^3``...): Weaviate's BM25F, which ranks close to but not exactly like
the embedded backend. The cosine the confidence reads is computed from the returned vectors, as the
embedded backend computes it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from tool_selector.core.errors import IndexMissingError, InvalidInputError
from tool_selector.core.hashing import sha256_of
from tool_selector.core.models import SearchHit, ToolDocument
from tool_selector.search.text import boost_repeats, tokenize, weighted_tokens

SCHEMA_VERSION = "ts-weaviate-v1"
SERVER_SCHEMA_VERSION = "ts-weaviate-servers-v1"
UUID_NAMESPACE = "tool-selector"  # generate_uuid5(tool_id, namespace): the same tool, the same object
SERVER_UUID_NAMESPACE = "tool-selector-server"
TEXT_FIELDS = ("name", "description", "enhanced_description", "server_domain", "server_description")
ARRAY_FIELDS = ("action_entities", "semantic_keywords", "use_cases", "tags", "parameter_names")
# document field -> readable property; the search document's ``name``/``server_name`` fields hold split
# identifiers, so the readable ``name``/``mcp_server_name`` take the raw names from the document itself
KEYWORD_FIELDS = (
    "name",
    "server_name",
    "description",
    "parameter_names",
    "server_description",
    "tags",
    "action_entities",
    "enhanced_description",
    "semantic_keywords",
    "use_cases",
    "server_domain",
)
_EXPLAIN_KEYWORD = re.compile(
    r"Result Set keyword[^)]*\)\s*Document\s*\S+?:?\s*(?:original score\s*([-+0-9.eE]+)|contributed)"
)


@dataclass(frozen=True)
class PropertySpec:
    """One property of the collection in Weaviate's terms: ``data_type`` and ``tokenization`` are the
    values of the SDK's DataType and Tokenization; None leaves a setting at Weaviate's default."""

    name: str
    data_type: str = "text"
    tokenization: str | None = None
    searchable: bool | None = None
    filterable: bool | None = None
    description: str | None = None


def _properties(
    ids: tuple[str, ...], text: tuple[str, ...], array: tuple[str, ...], keyword: tuple[str, ...]
) -> tuple[PropertySpec, ...]:
    return (
        *(PropertySpec(p, tokenization="field", searchable=False) for p in ids),
        PropertySpec("text_hash", searchable=False, filterable=False),
        *(PropertySpec(f, tokenization="word") for f in text),
        *(PropertySpec(f, data_type="text[]", tokenization="word") for f in array),
        *(
            PropertySpec(
                f"kw_{f}",
                tokenization="whitespace",
                filterable=False,
                description=f"{f} as tool-selector's tokenizer sees it (split, stemmed)",
            )
            for f in keyword
        ),
        PropertySpec("kw_all", tokenization="whitespace", filterable=False),
        PropertySpec("kw_boosts", searchable=False, filterable=False),
    )


PROPERTIES: tuple[PropertySpec, ...] = _properties(
    ("tool_id", "mcp_server_name"), TEXT_FIELDS, ARRAY_FIELDS, KEYWORD_FIELDS
)


@dataclass(frozen=True)
class Layout:
    """One collection's layout: its properties, which of them name a hit (``id_property``: the
    document id; ``name_property``: its raw name) and which fields are searched."""

    target: Literal["tools", "servers"]
    schema_version: str
    uuid_namespace: str
    id_property: str
    name_property: str
    text_fields: tuple[str, ...]
    array_fields: tuple[str, ...]
    keyword_fields: tuple[str, ...]
    properties: tuple[PropertySpec, ...]
    boosts_setting: str


TOOLS = Layout(
    target="tools",
    schema_version=SCHEMA_VERSION,
    uuid_namespace=UUID_NAMESPACE,
    id_property="tool_id",
    name_property="name",
    text_fields=TEXT_FIELDS,
    array_fields=ARRAY_FIELDS,
    keyword_fields=KEYWORD_FIELDS,
    properties=PROPERTIES,
    boosts_setting="field_boosts",
)

SERVER_TEXT_FIELDS = ("server_description", "domain")
SERVER_ARRAY_FIELDS = ("tags", "tool_names", "tool_descriptions", "actions", "keywords")
SERVER_KEYWORD_FIELDS = ("server_name", *SERVER_TEXT_FIELDS, *SERVER_ARRAY_FIELDS)
SERVERS = Layout(
    target="servers",
    schema_version=SERVER_SCHEMA_VERSION,
    uuid_namespace=SERVER_UUID_NAMESPACE,
    id_property="mcp_server_name",  # a server document's id, server and name are the server's name
    name_property="mcp_server_name",
    text_fields=SERVER_TEXT_FIELDS,
    array_fields=SERVER_ARRAY_FIELDS,
    keyword_fields=SERVER_KEYWORD_FIELDS,
    properties=_properties(
        ("mcp_server_name",), SERVER_TEXT_FIELDS, SERVER_ARRAY_FIELDS, SERVER_KEYWORD_FIELDS
    ),
    boosts_setting="server_field_boosts",
)
LAYOUTS: dict[Literal["tools", "servers"], Layout] = {"tools": TOOLS, "servers": SERVERS}


def collection_name(collection: str, target: Literal["tools", "servers"]) -> str:
    """The configured collection holds the tools; ``<it>Servers`` the server documents."""
    return collection if target == "tools" else f"{collection}Servers"


def returned_properties(layout: Layout) -> list[str]:
    """What a search reads back to make a hit."""
    return list(dict.fromkeys([layout.id_property, layout.name_property, "mcp_server_name"]))


def not_ours(where: str, model_id: str, dim: int, said: str | None, missing: list[str]) -> IndexMissingError:
    """A collection this tool-selector did not make for this model (or made by an older layout)."""
    return IndexMissingError(
        f"The Weaviate collection {where} was not made by this tool-selector for {model_id} ({dim} "
        f"dimensions): it says {said!r}" + (f" and lacks {', '.join(missing)}." if missing else "."),
        hint="Rebuild it with `tool-selector index rebuild --backend weaviate`, or set "
        "TOOL_SELECTOR_WEAVIATE__COLLECTION to another name.",
    )


def empty_collection(where: str) -> IndexMissingError:
    return IndexMissingError(
        f"The Weaviate collection {where} is empty.",
        hint="Fill it with `tool-selector index rebuild --backend weaviate`.",
    )


def keyword_text(value: str | list[str]) -> str:
    """A field's text as our tokenizer sees it, for a whitespace-tokenized keyword property."""
    text = value if isinstance(value, str) else " . ".join(value)
    return " ".join(tokenize(text))


def boosts_key(boosts: dict[str, float]) -> str:
    return sha256_of(sorted((k, round(2 * v)) for k, v in boosts.items() if round(2 * v) > 0))[:16]


def object_properties(doc: ToolDocument, boosts: dict[str, float], layout: Layout = TOOLS) -> dict[str, Any]:
    """The Weaviate object of one search document (vector apart); ``kw_all`` is built for ``boosts``."""
    props: dict[str, Any] = {
        "mcp_server_name": doc.server,
        layout.id_property: doc.id,
        "text_hash": doc.text_hash,
    }
    for field in layout.text_fields:
        value = doc.fields.get(field, "")
        props[field] = value if isinstance(value, str) else " . ".join(value)
    for field in layout.array_fields:
        value = doc.fields.get(field, [])
        props[field] = [value] if isinstance(value, str) else list(value)
    props[layout.name_property] = doc.name
    for field in layout.keyword_fields:
        props[f"kw_{field}"] = keyword_text(doc.fields.get(field, ""))
    props["kw_all"] = " ".join(weighted_tokens(doc.fields, boosts))
    props["kw_boosts"] = boosts_key(boosts)
    return props


def query_properties(boosts: dict[str, float], layout: Layout = TOOLS) -> list[str]:
    """``kw_name^3``... for every searchable field whose boost is worth at least one copy.

    Weaviate before 1.3x parsed a boost with Atoi and silently scored ``name^1.5`` at 0, so boosts are
    sent as integers: round(2 x boost), the same weights the embedded backend gives each field (it
    repeats a field's tokens that many times)."""
    fields = layout.keyword_fields
    unknown = sorted(set(boosts) - set(fields))
    if unknown:
        raise InvalidInputError(
            f"No searchable field named {', '.join(unknown)} in the Weaviate {layout.target} collection.",
            hint=f"{layout.boosts_setting} may name: {', '.join(fields)}.",
        )
    weights = {f: round(2 * boosts.get(f, 0.0)) for f in fields}
    return [f"kw_{f}^{weights[f]}" for f in fields if weights[f] > 0]


def keyword_search(
    text: str, boosts: dict[str, float], *, combined: bool, layout: Layout = TOOLS
) -> tuple[str, list[str]]:
    """A query's keyword part: its terms as our tokenizer sees them, and the properties they search:
    ``kw_all`` when it was built for ``boosts`` (``combined``), else the per-field properties of
    :func:`query_properties`; none when no field counts."""
    terms = " ".join(tokenize(text))
    if combined:
        return terms, ["kw_all"] if boost_repeats(boosts) else []
    return terms, query_properties(boosts, layout)


def explained_keyword_score(explain: str | None) -> float:
    """The BM25 score Weaviate reports for a hit's keyword part (0 when it was no keyword hit).
    Ranked fusion reports only a contribution, not the score: such a hit counts as 1.0."""
    if not explain:
        return 0.0
    found = _EXPLAIN_KEYWORD.search(explain)
    if found is None:
        return 0.0
    return float(found.group(1)) if found.group(1) else 1.0


def search_hit(obj: Any, vector: np.ndarray | None, layout: Layout = TOOLS) -> SearchHit:
    """One object of a hybrid search's answer (fetched with its vector, score and explanation) as a
    hit; its cosine to the query ``vector`` (None when there is none)."""
    stored = obj.vector.get("default") if isinstance(obj.vector, dict) else obj.vector
    cosine = None
    if vector is not None and stored is not None:
        row = np.asarray(stored, dtype=np.float32)
        cosine = float(row @ vector)
    return SearchHit(
        id=str(obj.properties[layout.id_property]),
        server=str(obj.properties["mcp_server_name"]),
        name=str(obj.properties[layout.name_property]),
        score=float(obj.metadata.score or 0.0),
        keyword_score=explained_keyword_score(obj.metadata.explain_score),
        vector_score=cosine,
    )
