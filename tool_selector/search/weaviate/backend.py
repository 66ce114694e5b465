"""The Weaviate search backend (weaviate-client v4, collections API). The only module importing weaviate.

Two collections: the configured one (``Tool``) for tool documents and ``<collection>Servers`` for
server documents, created, checked and dropped together. Their layouts (properties, objects, the
keyword properties a query searches) are described and built in ``objects``; how a call is
retried and its failures translated (a transient one retried ``weaviate.max_attempts`` times) in
``retry``. This module speaks to the SDK: it connects, creates and checks the collections,
writes, reads and searches, and says which of the SDK's errors are which.
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

from tool_selector.config.search import DEFAULT_FIELD_BOOSTS, DEFAULT_SERVER_FIELD_BOOSTS
from tool_selector.config.weaviate import WeaviateSettings
from tool_selector.core.errors import InvalidInputError, StoreError
from tool_selector.core.models import SearchHit, ToolDocument
from tool_selector.search.backend import SearchQuery, Target, UpsertResult
from tool_selector.search.weaviate.objects import (
    LAYOUTS,
    UUID_NAMESPACE,
    Layout,
    boosts_key,
    collection_name,
    empty_collection,
    keyword_search,
    not_ours,
    object_properties,
    returned_properties,
    search_hit,
)
from tool_selector.search.weaviate.retry import OneTry, SdkErrors, run_with_retries

logger = logging.getLogger(__name__)

T = TypeVar("T")

BATCH_SIZE = 200
DELETE_CHUNK = 1000

# the backend's configuration is the settings group itself, passed whole by the composition root
WeaviateConfig = WeaviateSettings

# a private name (the client is pinned to 4.23.x in pyproject.toml; a test checks it is still there)
weaviate_connection._Retry = OneTry  # type: ignore[attr-defined,assignment]


# which of the SDK's errors are which (what each kind means is retry.py's)
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


def object_uuid(doc_id: str, namespace: str = UUID_NAMESPACE) -> str:
    """A document's object UUID (a server document's under ``SERVERS.uuid_namespace``)."""
    return str(generate_uuid5(doc_id, namespace))


def _properties(layout: Layout) -> list[Property]:
    return [
        Property(
            name=p.name,
            data_type=DataType(p.data_type),
            tokenization=None if p.tokenization is None else Tokenization(p.tokenization),
            index_searchable=p.searchable,
            index_filterable=p.filterable,
            description=p.description,
        )
        for p in layout.properties
    ]


class WeaviateBackend:
    """SearchBackend on a Weaviate collection. The client connects on first use and reconnects after
    a transient failure; the collection is created (or checked) on first use."""

    def __init__(
        self,
        config: WeaviateConfig,
        *,
        model_id: str,
        dim: int,
        field_boosts: dict[str, float] | None = None,
        server_field_boosts: dict[str, float] | None = None,
    ) -> None:
        """``field_boosts`` / ``server_field_boosts``: the configured boosts, which each collection's
        ``kw_all`` is built for (None = the defaults)."""
        self.config = config
        self.model_id = model_id
        self.dim = dim
        self.field_boosts = dict(DEFAULT_FIELD_BOOSTS if field_boosts is None else field_boosts)
        self.server_field_boosts = dict(
            DEFAULT_SERVER_FIELD_BOOSTS if server_field_boosts is None else server_field_boosts
        )
        boosts: dict[Target, dict[str, float]] = {
            "tools": self.field_boosts,
            "servers": self.server_field_boosts,
        }
        self._boosts = boosts
        self._boosts_keys = {target: boosts_key(boosts) for target, boosts in self._boosts.items()}
        self.address = config.address  # a bad address is a ConfigurationError now, not at first query
        self._lock = threading.RLock()
        self._client: weaviate.WeaviateClient | None = None
        self._collections: dict[Target, Collection[Any, Any]] = {}
        self._combined: dict[Target, bool] = {}

    def collection_name(self, target: Target = "tools") -> str:
        return collection_name(self.config.collection, target)

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

    def _open(self, target: Target = "tools") -> Collection[Any, Any]:
        with self._lock:
            found = self._collections.get(target)
            if found is not None:
                return found
            client = self._connected()
            layout = LAYOUTS[target]
            try:
                name = self.collection_name(target)
                description = f"{layout.schema_version}; vectors: {self.model_id} ({self.dim})"
                if not client.collections.exists(name):
                    client.collections.create(
                        name,
                        description=description,
                        properties=_properties(layout),
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
                self._check(collection, description, layout)
            except BaseException:
                self._reset()
                raise
            self._collections[target] = collection
            return collection

    def _check(self, collection: Collection[Any, Any], description: str, layout: Layout) -> None:
        config = collection.config.get()
        have = {p.name for p in config.properties}
        missing = sorted({p.name for p in layout.properties} - have)
        if missing or (config.description or "") != description:
            name = self.collection_name(layout.target)
            raise not_ours(f"{name} at {self.address}", self.model_id, self.dim, config.description, missing)

    def _reset(self) -> None:
        with self._lock:
            client, self._client = self._client, None
            self._collections.clear()
        if client is not None:
            with contextlib.suppress(WeaviateBaseError):  # closing a broken client
                client.close()

    def _call(self, what: str, action: Callable[[Collection[Any, Any]], T], target: Target = "tools") -> T:
        """Run one operation on the collection of ``target``: retried while transient, then translated."""
        return self._run(what, lambda: action(self._open(target)))

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
        """Tool documents into the tool collection, server documents into the server collection."""
        result = UpsertResult()
        ready: dict[Target, list[ToolDocument]] = {"tools": [], "servers": []}
        for doc in documents:
            if doc.vector is None or len(doc.vector) != self.dim:
                result.errors[doc.id] = f"needs a vector of {self.dim} floats"
            else:
                ready["servers" if doc.kind == "server" else "tools"].append(doc)
        for target, docs in ready.items():
            for start in range(0, len(docs), BATCH_SIZE):
                self._write(docs[start : start + BATCH_SIZE], target, result)
        if result.errors:
            logger.warning("Weaviate refused %d of %d documents", len(result.errors), len(documents))
        return result

    def _write(self, chunk: Sequence[ToolDocument], target: Target, result: UpsertResult) -> None:
        layout, boosts = LAYOUTS[target], self._boosts[target]
        objects = [
            DataObject(
                uuid=object_uuid(d.id, layout.uuid_namespace),
                properties=object_properties(d, boosts, layout),
                vector=list(d.vector or []),
            )
            for d in chunk
        ]
        try:
            answer = self._call("a batch write", _insert(objects), target)
        except StoreError as exc:  # every object of the batch refused: report each, keep going
            for doc in chunk:
                result.errors[doc.id] = exc.message
            return
        for index, error in answer.errors.items():
            result.errors[chunk[index].id] = error.message
        result.written += len(chunk) - len(answer.errors)

    def delete(self, ids: Sequence[str], *, target: Target = "tools") -> int:
        removed = 0
        unique = list(dict.fromkeys(ids))
        namespace = LAYOUTS[target].uuid_namespace
        for start in range(0, len(unique), DELETE_CHUNK):
            uuids = [object_uuid(i, namespace) for i in unique[start : start + DELETE_CHUNK]]
            answer = self._call("a delete", _delete(uuids), target)
            removed += int(answer.successful)
        return removed

    def count(self, *, target: Target = "tools") -> int:
        answer = self._call("a count", lambda c: c.aggregate.over_all(total_count=True), target)
        return int(answer.total_count or 0)

    def ids(self, *, target: Target = "tools") -> dict[str, str]:
        """Ids with text hashes; an object whose ``kw_all`` was built for other boosts reports no hash,
        so the next index build rewrites it."""
        id_property, current_key = LAYOUTS[target].id_property, self._boosts_keys[target]

        def read(collection: Collection[Any, Any]) -> dict[str, str]:
            out: dict[str, str] = {}
            for obj in collection.iterator(return_properties=[id_property, "text_hash", "kw_boosts"]):
                props = obj.properties
                current = props.get("kw_boosts") == current_key
                out[str(props[id_property])] = str(props.get("text_hash") or "") if current else ""
            return out

        return self._call("reading the indexed ids", read, target)

    def hybrid_search(self, query: SearchQuery) -> list[SearchHit]:
        """On the collection of ``query.target``; an empty server collection finds nothing."""
        if query.vector is not None and query.vector.shape != (self.dim,):
            raise InvalidInputError(f"query vector must have {self.dim} dimensions")
        target, layout = query.target, LAYOUTS[query.target]
        combined = query.field_boosts == self._boosts[target] and self._combined_current(target)
        terms, properties = keyword_search(query.text, query.field_boosts, combined=combined, layout=layout)
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
                return_properties=returned_properties(layout),
            )

        answer = self._call("a search", search, target)
        if not answer.objects:
            if target == "tools" and self.count() == 0:
                raise empty_collection(f"{self.config.collection} at {self.address}")
            return []
        hits = [search_hit(obj, vector, layout) for obj in answer.objects]
        hits.sort(key=lambda h: (-h.score, h.id))
        return hits[: query.limit]

    def _combined_current(self, target: Target = "tools") -> bool:
        """Whether ``kw_all`` was built for the configured boosts (read from one object, once per
        connection: boosts change only with a restart, and a rebuild rewrites every object)."""
        combined = self._combined.get(target)
        if combined is None:

            def probe(collection: Collection[Any, Any]) -> bool:
                found = collection.query.fetch_objects(limit=1, return_properties=["kw_boosts"]).objects
                return not found or found[0].properties.get("kw_boosts") == self._boosts_keys[target]

            combined = self._combined[target] = self._call("reading the collection's boosts", probe, target)
            if not combined:
                logger.warning(
                    "the Weaviate collection %s was filled under other field boosts: searching per field "
                    "(Weaviate's BM25F) until `tool-selector index build` rewrites it",
                    self.collection_name(target),
                )
        return combined

    def refresh(self) -> bool:
        """Every process reads the same server: there is never a local copy to reload."""
        self._combined.clear()
        return False

    def drop(self) -> None:
        """Delete both collections (a rebuild starts from nothing)."""

        def drop() -> None:
            with self._lock:
                self._collections.clear()
                for target in LAYOUTS:
                    self._connected().collections.delete(self.collection_name(target))

        self._run("dropping the collections", drop)

    def close(self) -> None:
        self._reset()


def _insert(objects: list[DataObject[Any, Any]]) -> Callable[[Collection[Any, Any]], Any]:
    return lambda collection: collection.data.insert_many(objects)


def _delete(uuids: list[str]) -> Callable[[Collection[Any, Any]], Any]:
    return lambda collection: collection.data.delete_many(where=Filter.by_id().contains_any(uuids))
