"""The Weaviate search backend (weaviate-client v4, collections API). The only module importing weaviate.

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

A query is one hybrid search: the query's tokens, our query vector, ``alpha`` and the configured
fusion. With the configured ``field_boosts`` it searches ``kw_all``: the same BM25 over the same tokens
as the embedded backend, so both rank, and therefore tier, alike. With other boosts (or a collection
filled under other boosts) it searches the ``kw_<field>`` properties boosted through
``query_properties`` (``kw_name^3``...): Weaviate's BM25F, which ranks close to but not exactly like
the embedded backend. The cosine the confidence reads is computed here from the returned vectors, as
the embedded backend computes it.

Failures: unreachable, timeouts, 502-504 and gRPC UNAVAILABLE are transient and retried (with backoff,
``weaviate.max_attempts`` tries), then raised as BackendUnavailableError naming the address; a refused
API key is a ConfigurationError; anything else (a rejected request) is a StoreError, not retried.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
import numpy as np
import weaviate
import weaviate.connect.v4 as weaviate_connection
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential
from weaviate.classes.config import (
    Configure,
    DataType,
    Property,
    StopwordsPreset,
    Tokenization,
    VectorDistances,
)
from weaviate.classes.data import DataObject
from weaviate.classes.init import AdditionalConfig, Auth, Timeout
from weaviate.classes.query import Filter, HybridFusion, MetadataQuery
from weaviate.collections import Collection
from weaviate.exceptions import (
    AuthenticationFailedError,
    InsufficientPermissionsError,
    UnexpectedStatusCodeError,
    WeaviateBaseError,
    WeaviateClosedClientError,
    WeaviateConnectionError,
    WeaviateGRPCUnavailableError,
    WeaviateInsertManyAllFailedError,
    WeaviateQueryError,
    WeaviateStartUpError,
    WeaviateTimeoutError,
)
from weaviate.util import generate_uuid5

from tool_selector.errors import (
    BackendUnavailableError,
    ConfigurationError,
    IndexMissingError,
    InvalidInputError,
    StoreError,
    ToolSelectorError,
)
from tool_selector.hashing import sha256_of
from tool_selector.models import SearchHit, ToolDocument
from tool_selector.search.backend import SearchQuery, UpsertResult
from tool_selector.search.text import boost_repeats, tokenize, weighted_tokens
from tool_selector.settings import DEFAULT_FIELD_BOOSTS, WeaviateSettings

logger = logging.getLogger(__name__)

T = TypeVar("T")

SCHEMA_VERSION = "ts-weaviate-v1"
UUID_NAMESPACE = "tool-selector"  # generate_uuid5(tool_id, namespace): the same tool, the same object
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
BATCH_SIZE = 200
DELETE_CHUNK = 1000
_EXPLAIN_KEYWORD = re.compile(
    r"Result Set keyword[^)]*\)\s*Document\s*\S+?:?\s*(?:original score\s*([-+0-9.eE]+)|contributed)"
)


# the backend's configuration is the settings group itself, passed whole by the composition root
WeaviateConfig = WeaviateSettings


class _OneTry:
    """Stands in for weaviate-client's internal gRPC retry, which sleeps 1+2+4+8+16+32 s on UNAVAILABLE
    before giving up: a resolve would hang for a minute while Weaviate is down. Each call is tried once
    here; this module retries transient failures itself (``weaviate.max_attempts``, short backoff)."""

    def __init__(self, n: float = 0) -> None:
        self.n = n

    def with_exponential_backoff(
        self, count: int, error: str, f: Callable[..., T], *args: Any, **kwargs: Any
    ) -> T:
        return f(*args, **kwargs)

    async def awith_exponential_backoff(
        self, count: int, error: str, f: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
    ) -> T:
        return await f(*args, **kwargs)


# a private name (the client is pinned to 4.23.x in pyproject.toml; a test checks it is still there)
weaviate_connection._Retry = _OneTry  # type: ignore[attr-defined,assignment]

TRANSIENT_CODES = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED")


def _rpc_code(exc: BaseException) -> str | None:
    """The gRPC status behind an SDK error (the SDK keeps only the details text in its message)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, grpc.RpcError) and hasattr(seen, "code"):
            return str(seen.code().name)
        seen = seen.__cause__ or seen.__context__
    return None


def _transient(exc: BaseException) -> bool:
    """Unreachable, timed out, overloaded: worth another try. A rejected request is not."""
    if isinstance(exc, WeaviateClosedClientError):
        return False
    if isinstance(exc, WeaviateConnectionError | WeaviateStartUpError | WeaviateTimeoutError):
        return True
    if isinstance(exc, WeaviateGRPCUnavailableError):
        return True
    if isinstance(exc, UnexpectedStatusCodeError):
        return exc.status_code in (502, 503, 504)
    code = _rpc_code(exc)
    if code is not None:
        return code in TRANSIENT_CODES
    if isinstance(exc, WeaviateQueryError | WeaviateInsertManyAllFailedError):
        return any(m in str(exc) for m in (*TRANSIENT_CODES, "Deadline Exceeded", "failed to connect"))
    return isinstance(exc, ConnectionError | TimeoutError)


def _refused_key(exc: BaseException) -> bool:
    if isinstance(exc, AuthenticationFailedError | InsufficientPermissionsError):
        return True
    if isinstance(exc, UnexpectedStatusCodeError):
        return exc.status_code in (401, 403)
    if _rpc_code(exc) in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
        return True
    text = str(exc)
    return "UNAUTHENTICATED" in text or "PERMISSION_DENIED" in text


def keyword_text(value: str | list[str]) -> str:
    """A field's text as our tokenizer sees it, for a whitespace-tokenized keyword property."""
    text = value if isinstance(value, str) else " . ".join(value)
    return " ".join(tokenize(text))


def object_uuid(tool_id: str) -> str:
    return str(generate_uuid5(tool_id, UUID_NAMESPACE))


def _properties() -> list[Property]:
    readable = [
        Property(
            name="tool_id", data_type=DataType.TEXT, tokenization=Tokenization.FIELD, index_searchable=False
        ),
        Property(
            name="mcp_server_name",
            data_type=DataType.TEXT,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
        ),
        Property(name="text_hash", data_type=DataType.TEXT, index_searchable=False, index_filterable=False),
    ]
    readable += [
        Property(name=f, data_type=DataType.TEXT, tokenization=Tokenization.WORD) for f in TEXT_FIELDS
    ]
    readable += [
        Property(name=f, data_type=DataType.TEXT_ARRAY, tokenization=Tokenization.WORD) for f in ARRAY_FIELDS
    ]
    keyword = [
        Property(
            name=f"kw_{f}",
            data_type=DataType.TEXT,
            tokenization=Tokenization.WHITESPACE,
            index_filterable=False,
            description=f"{f} as tool-selector's tokenizer sees it (split, stemmed)",
        )
        for f in KEYWORD_FIELDS
    ]
    combined = [
        Property(
            name="kw_all",
            data_type=DataType.TEXT,
            tokenization=Tokenization.WHITESPACE,
            index_filterable=False,
        ),
        Property(name="kw_boosts", data_type=DataType.TEXT, index_searchable=False, index_filterable=False),
    ]
    return readable + keyword + combined


def boosts_key(boosts: dict[str, float]) -> str:
    return sha256_of(sorted((k, round(2 * v)) for k, v in boosts.items() if round(2 * v) > 0))[:16]


def object_properties(doc: ToolDocument, boosts: dict[str, float]) -> dict[str, Any]:
    """The Weaviate object of one search document (vector apart); ``kw_all`` is built for ``boosts``."""
    props: dict[str, Any] = {"tool_id": doc.id, "mcp_server_name": doc.server, "text_hash": doc.text_hash}
    for field in TEXT_FIELDS:
        value = doc.fields.get(field, "")
        props[field] = value if isinstance(value, str) else " . ".join(value)
    for field in ARRAY_FIELDS:
        value = doc.fields.get(field, [])
        props[field] = [value] if isinstance(value, str) else list(value)
    props["name"] = doc.name
    for field in KEYWORD_FIELDS:
        props[f"kw_{field}"] = keyword_text(doc.fields.get(field, ""))
    props["kw_all"] = " ".join(weighted_tokens(doc.fields, boosts))
    props["kw_boosts"] = boosts_key(boosts)
    return props


def query_properties(boosts: dict[str, float]) -> list[str]:
    """``kw_name^3``... for every searchable field whose boost is worth at least one copy.

    Weaviate before 1.3x parsed a boost with Atoi and silently scored ``name^1.5`` at 0, so boosts are
    sent as integers: round(2 x boost), the same weights the embedded backend gives each field (it
    repeats a field's tokens that many times)."""
    unknown = sorted(set(boosts) - set(KEYWORD_FIELDS))
    if unknown:
        raise InvalidInputError(
            f"No searchable field named {', '.join(unknown)} in the Weaviate collection.",
            hint=f"field_boosts may name: {', '.join(KEYWORD_FIELDS)}.",
        )
    weights = {f: round(2 * boosts.get(f, 0.0)) for f in KEYWORD_FIELDS}
    return [f"kw_{f}^{weights[f]}" for f in KEYWORD_FIELDS if weights[f] > 0]


def explained_keyword_score(explain: str | None) -> float:
    """The BM25 score Weaviate reports for a hit's keyword part (0 when it was no keyword hit).
    Ranked fusion reports only a contribution, not the score: such a hit counts as 1.0."""
    if not explain:
        return 0.0
    found = _EXPLAIN_KEYWORD.search(explain)
    if found is None:
        return 0.0
    return float(found.group(1)) if found.group(1) else 1.0


class WeaviateBackend:
    """SearchBackend on a Weaviate collection. The client connects on first use and reconnects after
    a transient failure; the collection is created (or checked) on first use."""

    def __init__(
        self, config: WeaviateConfig, *, model_id: str, dim: int, field_boosts: dict[str, float] | None = None
    ) -> None:
        """``field_boosts``: the configured boosts, which ``kw_all`` is built for (None = the defaults)."""
        self.config = config
        self.model_id = model_id
        self.dim = dim
        self.field_boosts = dict(DEFAULT_FIELD_BOOSTS if field_boosts is None else field_boosts)
        self._boosts_key = boosts_key(self.field_boosts)
        self.address = config.address  # a bad address is a ConfigurationError now, not at first query
        self._lock = threading.RLock()
        self._client: weaviate.WeaviateClient | None = None
        self._collection: Collection[Any, Any] | None = None
        self._combined: bool | None = None

    # -- connection -----------------------------------------------------------------------------

    def _connect(self) -> weaviate.WeaviateClient:
        (host, port, secure), (ghost, gport, gsecure) = self.config.endpoints()
        return weaviate.connect_to_custom(
            http_host=host,
            http_port=port,
            http_secure=secure,
            grpc_host=ghost,
            grpc_port=gport,
            grpc_secure=gsecure,
            auth_credentials=Auth.api_key(self.config.api_key.get_secret_value())
            if self.config.api_key
            else None,
            additional_config=AdditionalConfig(
                timeout=Timeout(
                    init=self.config.connect_timeout_s,
                    query=self.config.query_timeout_s,
                    insert=self.config.insert_timeout_s,
                )
            ),
            # True skips only the gRPC ping and the client's version check against pypi.org at every connect;
            # the server version is still read, and an unreachable gRPC port fails the first call
            skip_init_checks=True,
        )

    def _connected(self) -> weaviate.WeaviateClient:
        with self._lock:
            if self._client is None:
                self._client = self._connect()
            return self._client

    def _open(self) -> Collection[Any, Any]:
        with self._lock:
            if self._collection is not None:
                return self._collection
            client = self._connected()
            try:
                name = self.config.collection
                description = f"{SCHEMA_VERSION}; vectors: {self.model_id} ({self.dim})"
                if not client.collections.exists(name):
                    client.collections.create(
                        name,
                        description=description,
                        properties=_properties(),
                        vector_config=Configure.Vectors.self_provided(
                            vector_index_config=Configure.VectorIndex.hnsw(
                                distance_metric=VectorDistances.COSINE
                            )
                        ),
                        inverted_index_config=Configure.inverted_index(
                            bm25_k1=1.2, bm25_b=0.75, stopwords_preset=StopwordsPreset.NONE
                        ),
                    )
                    logger.info("created Weaviate collection %s at %s", name, self.address)
                collection = client.collections.use(name)
                self._check(collection, description)
            except BaseException:
                self._reset()
                raise
            self._collection = collection
            return collection

    def _check(self, collection: Collection[Any, Any], description: str) -> None:
        config = collection.config.get()
        have = {p.name for p in config.properties}
        missing = sorted({p.name for p in _properties()} - have)
        if missing or (config.description or "") != description:
            raise IndexMissingError(
                f"The Weaviate collection {self.config.collection} at {self.address} was not made by "
                f"this tool-selector for {self.model_id} ({self.dim} dimensions): it says "
                f"{config.description!r}" + (f" and lacks {', '.join(missing)}." if missing else "."),
                hint="Rebuild it with `tool-selector index rebuild --backend weaviate`, or set "
                "TOOL_SELECTOR_WEAVIATE_COLLECTION to another name.",
            )

    def _reset(self) -> None:
        with self._lock:
            client, self._client, self._collection = self._client, None, None
        if client is not None:
            with contextlib.suppress(WeaviateBaseError):  # closing a broken client
                client.close()

    def _call(self, what: str, action: Callable[[Collection[Any, Any]], T]) -> T:
        """Run one operation on the collection: retried while transient, then translated."""
        return self._run(what, lambda: action(self._open()))

    def _run(self, what: str, action: Callable[[], T]) -> T:
        def attempt() -> T:
            try:
                return action()
            except BaseException as exc:
                if _transient(exc):
                    self._reset()
                raise

        retrying = Retrying(
            stop=stop_after_attempt(self.config.max_attempts),
            wait=wait_exponential(multiplier=0.2, max=2.0),
            retry=retry_if_exception(_transient),
            reraise=True,
        )
        try:
            return retrying(attempt)
        except ToolSelectorError:
            raise
        except BaseException as exc:
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            if _refused_key(exc):
                raise ConfigurationError(
                    f"Weaviate at {self.address} refused the API key while {what}: {exc}.",
                    hint="Set TOOL_SELECTOR_WEAVIATE_API_KEY to a key with read and write rights.",
                    address=self.address,
                ) from exc
            if _transient(exc):
                raise BackendUnavailableError(
                    f"Weaviate at {self.address} cannot be reached ({what}, "
                    f"{self.config.max_attempts} tries): {_first_line(exc)}",
                    hint="Start Weaviate (see docker-compose.weaviate.yml), check TOOL_SELECTOR_WEAVIATE_URL "
                    "and TOOL_SELECTOR_WEAVIATE_GRPC_URL, or set TOOL_SELECTOR_BACKEND=embedded.",
                    address=self.address,
                ) from exc
            if isinstance(exc, WeaviateBaseError | grpc.RpcError):
                raise StoreError(
                    f"Weaviate at {self.address} rejected {what}: {_first_line(exc)}",
                    hint="This is not retried; the message above says what Weaviate disliked.",
                    address=self.address,
                ) from exc
            raise

    # -- SearchBackend --------------------------------------------------------------------------

    def upsert(self, documents: Sequence[ToolDocument]) -> UpsertResult:
        result = UpsertResult()
        ready: list[ToolDocument] = []
        for doc in documents:
            if doc.vector is None or len(doc.vector) != self.dim:
                result.errors[doc.id] = f"needs a vector of {self.dim} floats"
            else:
                ready.append(doc)
        for start in range(0, len(ready), BATCH_SIZE):
            chunk = ready[start : start + BATCH_SIZE]
            objects = [
                DataObject(
                    uuid=object_uuid(d.id),
                    properties=object_properties(d, self.field_boosts),
                    vector=list(d.vector or []),
                )
                for d in chunk
            ]
            try:
                answer = self._call("a batch write", _insert(objects))
            except StoreError as exc:  # every object of the batch refused: report each, keep going
                for doc in chunk:
                    result.errors[doc.id] = exc.message
                continue
            for index, error in answer.errors.items():
                result.errors[chunk[index].id] = error.message
            result.written += len(chunk) - len(answer.errors)
        if result.errors:
            logger.warning("Weaviate refused %d of %d documents", len(result.errors), len(documents))
        return result

    def delete(self, ids: Sequence[str]) -> int:
        removed = 0
        unique = list(dict.fromkeys(ids))
        for start in range(0, len(unique), DELETE_CHUNK):
            uuids = [object_uuid(i) for i in unique[start : start + DELETE_CHUNK]]
            answer = self._call("a delete", _delete(uuids))
            removed += int(answer.successful)
        return removed

    def count(self) -> int:
        answer = self._call("a count", lambda c: c.aggregate.over_all(total_count=True))
        return int(answer.total_count or 0)

    def ids(self) -> dict[str, str]:
        """Ids with text hashes; an object whose ``kw_all`` was built for other boosts reports no hash,
        so the next index build rewrites it."""

        def read(collection: Collection[Any, Any]) -> dict[str, str]:
            out: dict[str, str] = {}
            for obj in collection.iterator(return_properties=["tool_id", "text_hash", "kw_boosts"]):
                current = obj.properties.get("kw_boosts") == self._boosts_key
                out[str(obj.properties["tool_id"])] = (
                    str(obj.properties.get("text_hash") or "") if current else ""
                )
            return out

        return self._call("reading the indexed ids", read)

    def hybrid_search(self, query: SearchQuery) -> list[SearchHit]:
        if query.vector is not None and query.vector.shape != (self.dim,):
            raise InvalidInputError(f"query vector must have {self.dim} dimensions")
        terms = " ".join(tokenize(query.text))
        combined = query.field_boosts == self.field_boosts and self._combined_current()
        properties = ["kw_all"] if combined and boost_repeats(query.field_boosts) else []
        if not combined:
            properties = query_properties(query.field_boosts)
        keyword_on = bool(terms and properties) and query.alpha < 1
        alpha = query.alpha if keyword_on else 1.0
        if not keyword_on and (query.vector is None or query.alpha == 0):
            return []  # as embedded: keyword only, and no keyword to search
        vector = None if query.vector is None else query.vector.astype(np.float32)
        fusion = HybridFusion.RELATIVE_SCORE if query.fusion == "relative_score" else HybridFusion.RANKED

        def search(collection: Collection[Any, Any]) -> Any:
            return collection.query.hybrid(
                query=terms if keyword_on else None,
                alpha=alpha,
                vector=None if vector is None else vector.tolist(),
                query_properties=properties or None,
                fusion_type=fusion,
                limit=max(query.limit, query.candidates),  # as embedded: fuse the candidates, keep limit
                return_metadata=MetadataQuery(score=True, explain_score=True),
                include_vector=True,
                return_properties=["tool_id", "name", "mcp_server_name"],
            )

        answer = self._call("a search", search)
        if not answer.objects:
            if self.count() == 0:
                raise IndexMissingError(
                    f"The Weaviate collection {self.config.collection} at {self.address} is empty.",
                    hint="Fill it with `tool-selector index rebuild --backend weaviate`.",
                )
            return []
        hits = []
        for obj in answer.objects:
            stored = obj.vector.get("default") if isinstance(obj.vector, dict) else obj.vector
            cosine = None
            if vector is not None and stored is not None:
                row = np.asarray(stored, dtype=np.float32)
                cosine = float(row @ vector)
            hits.append(
                SearchHit(
                    id=str(obj.properties["tool_id"]),
                    server=str(obj.properties["mcp_server_name"]),
                    name=str(obj.properties["name"]),
                    score=float(obj.metadata.score or 0.0),
                    keyword_score=explained_keyword_score(obj.metadata.explain_score),
                    vector_score=cosine,
                )
            )
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[: query.limit]

    def _combined_current(self) -> bool:
        """Whether ``kw_all`` was built for the configured boosts (read from one object, once per
        connection: boosts change only with a restart, and a rebuild rewrites every object)."""
        if self._combined is None:

            def probe(collection: Collection[Any, Any]) -> bool:
                found = collection.query.fetch_objects(limit=1, return_properties=["kw_boosts"]).objects
                return not found or found[0].properties.get("kw_boosts") == self._boosts_key

            self._combined = self._call("reading the collection's boosts", probe)
            if not self._combined:
                logger.warning(
                    "the Weaviate collection %s was filled under other field boosts: searching per field "
                    "(Weaviate's BM25F) until `tool-selector index build` rewrites it",
                    self.config.collection,
                )
        return self._combined

    def refresh(self) -> bool:
        """Every process reads the same server: there is never a local copy to reload."""
        self._combined = None
        return False

    def drop(self) -> None:
        """Delete the whole collection (a rebuild starts from nothing)."""

        def drop() -> None:
            with self._lock:
                self._collection = None
                self._connected().collections.delete(self.config.collection)

        self._run("dropping the collection", drop)

    def close(self) -> None:
        self._reset()


def _insert(objects: list[DataObject[Any, Any]]) -> Callable[[Collection[Any, Any]], Any]:
    return lambda collection: collection.data.insert_many(objects)


def _delete(uuids: list[str]) -> Callable[[Collection[Any, Any]], Any]:
    return lambda collection: collection.data.delete_many(where=Filter.by_id().contains_any(uuids))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
