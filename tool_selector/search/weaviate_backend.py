"""The Weaviate search backend (weaviate-client v4, collections API). The only module importing weaviate.

The collection's layout (its properties, the objects, the keyword properties a query searches) is
described and built in ``weaviate_objects``; how a call is retried and its failures translated (a
transient one retried ``weaviate.max_attempts`` times) in ``weaviate_retry``. This module speaks to
the SDK: it connects, creates and checks the collection, writes, reads and searches, and says which
of the SDK's errors are which.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
import numpy as np
import weaviate
import weaviate.connect.v4 as weaviate_connection
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

from tool_selector.errors import IndexMissingError, InvalidInputError, StoreError
from tool_selector.models import SearchHit, ToolDocument
from tool_selector.search.backend import SearchQuery, UpsertResult
from tool_selector.search.weaviate_objects import (
    PROPERTIES,
    SCHEMA_VERSION,
    UUID_NAMESPACE,
    boosts_key,
    keyword_search,
    object_properties,
    search_hit,
)
from tool_selector.search.weaviate_retry import OneTry, SdkErrors, run_with_retries
from tool_selector.settings import DEFAULT_FIELD_BOOSTS
from tool_selector.settings_weaviate import WeaviateSettings

logger = logging.getLogger(__name__)

T = TypeVar("T")

BATCH_SIZE = 200
DELETE_CHUNK = 1000

# the backend's configuration is the settings group itself, passed whole by the composition root
WeaviateConfig = WeaviateSettings

# a private name (the client is pinned to 4.23.x in pyproject.toml; a test checks it is still there)
weaviate_connection._Retry = OneTry  # type: ignore[attr-defined,assignment]


# which of the SDK's errors are which (what each kind means is weaviate_retry's)
SDK_ERRORS = SdkErrors(
    closed=(WeaviateClosedClientError,),
    unreachable=(
        WeaviateConnectionError,
        WeaviateStartUpError,
        WeaviateTimeoutError,
        WeaviateGRPCUnavailableError,
    ),
    with_status=(UnexpectedStatusCodeError,),
    with_message=(WeaviateQueryError, WeaviateInsertManyAllFailedError),
    refused=(AuthenticationFailedError, InsufficientPermissionsError),
    rejected=(WeaviateBaseError, grpc.RpcError),
)


def object_uuid(tool_id: str) -> str:
    return str(generate_uuid5(tool_id, UUID_NAMESPACE))


def _properties() -> list[Property]:
    return [
        Property(
            name=p.name,
            data_type=DataType(p.data_type),
            tokenization=None if p.tokenization is None else Tokenization(p.tokenization),
            index_searchable=p.searchable,
            index_filterable=p.filterable,
            description=p.description,
        )
        for p in PROPERTIES
    ]


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
        missing = sorted({p.name for p in PROPERTIES} - have)
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
        return run_with_retries(
            what,
            action,
            address=self.address,
            max_attempts=self.config.max_attempts,
            errors=SDK_ERRORS,
            on_transient=self._reset,
        )

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
        combined = query.field_boosts == self.field_boosts and self._combined_current()
        terms, properties = keyword_search(query.text, query.field_boosts, combined=combined)
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
        hits = [search_hit(obj, vector) for obj in answer.objects]
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
