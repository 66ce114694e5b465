"""An in-process stand-in for a Weaviate server that the real weaviate-client v4 SDK talks to, for tests.

This is NOT Weaviate. It models Weaviate's protocol -- REST on one loopback port, the gRPC service
``weaviate.v1.Weaviate`` plus ``grpc.health.v1.Health/Check`` on another, built from the SDK's own
generated protobuf modules -- and Weaviate's documented hybrid/BM25F semantics, as far as the calls our
Weaviate backend makes need them. Read from Weaviate's source (adapters/repos/db/inverted,
usecases/traverser/hybrid, explorer_hybrid.go) and docs; anything not listed here is not modelled.

Modelled:
- REST: GET /v1/meta (``version``, ``grpcMaxMessageSize``), /v1/.well-known/{ready,live} (200) and
  openid-configuration (404: no OIDC), GET|POST /v1/schema, GET|DELETE /v1/schema/{name}; the class JSON
  comes back with Weaviate's defaults filled in so ``collection.config.get()`` parses it.
- gRPC: BatchObjects (upsert by uuid; per-object errors for an unknown property, a value of the wrong
  type for text / text[], a vector whose length differs from the collection's), BatchDelete (matches,
  successful), Aggregate (objects_count only), Search: fetch with the ``after`` cursor (uuid order),
  bm25, near_vector and hybrid; filters EQUAL, NOT_EQUAL, CONTAINS_ANY, CONTAINS_ALL, AND, OR, NOT on
  ``_id`` and text properties (whole values compared, as ``field`` tokenization does).
- Tokenization word / lowercase / whitespace / field; stopword presets ``en`` / ``none`` with additions
  and removals, removed from word-tokenized query terms only; a repeated query term multiplies its idf.
- BM25F as BlockMax WAND scores it (used by every collection made on Weaviate >= 1.30): each queried
  property is scored on its own, ``idf * boost * tf / (tf + k1 * (1 - b + b * len / avglen))`` with that
  property's own average length, and the property scores add up; ``idf = ln(1 + (N - n + 0.5) / (n +
  0.5))``, n averaged over the properties of one tokenization that hold the term. Operator OR; score 0
  is no hit. ``prop^1.5`` boosts: Weaviate parsed them with Atoi, a fractional boost silently weighing
  0, until PR #11471 (weaviate/weaviate#11440, reported on 1.37.0-rc.0, merged 2026-05-26). The fake
  parses floats from 1.37 on and Atoi before; the first fixed release is an assumption, not verified
  (``fractional_boosts=`` overrides it; ``bm25(q, query_properties=["p^0.5"])`` on a live server tells).
- Vector search: exact cosine / dot / l2-squared distance (Weaviate's HNSW is approximate).
- Hybrid: the vector set (weight alpha, score 1 - distance) and the keyword set (weight 1 - alpha), each
  of max(offset + limit, 100) hits (Weaviate's hybrid.DefaultLimit), fused by relativeScore (min-max per
  set; a set whose scores are all equal gives each hit the weight) or ranked (weight / (60 + rank)),
  in float32 like Weaviate, with its explainScore strings; order: score, then the raw score of the last
  set, then uuid. alpha 0 skips the vector set, alpha 1 the keyword set; no query text, no keyword hits;
  alpha > 0 without a vector is refused (no vectorizer to make one).
Not modelled: auto-schema (Weaviate's default AUTOSCHEMA_ENABLED=true would add an unknown property, here
it is refused), data types other than text / text[], multi-tenancy, references, several named vectors,
group-by, sort, rerank, generative, autocut, max vector distance, the BM25 AND operator, tokenizations
trigram / gse / kagome, pre-1.30 (classic WAND) scoring, per-property top-k truncation in BlockMax WAND,
persistence, replication and consistency levels. gRPC status codes of refusals are approximations.

Test hooks: ``version`` (claimed in /v1/meta, default 1.37.3 as docker-compose.weaviate.yml runs; the
SDK picks wire details from it, e.g. Hybrid ``alpha_param`` from 1.36.6), ``api_key`` (Bearer
on every REST request but /.well-known and on every gRPC call but the health check), ``fail_next``,
``calls`` / ``rest_calls``, ``sent_alpha``, ``count`` / ``properties`` / ``object``, ``stop()``. While
running, the SDK's connect-time PyPI version check is pointed at the fake (no network, no warning).
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import re
import socket
import threading
import time
import uuid as uuid_lib
from collections import Counter, defaultdict
from concurrent import futures
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import grpc  # type: ignore[import-untyped]
import numpy as np
import weaviate.connect.v4 as weaviate_v4
from google.protobuf.json_format import MessageToDict
from weaviate.proto.v1 import (
    aggregate_pb2,
    base_pb2,
    batch_delete_pb2,
    batch_pb2,
    health_weaviate_pb2,
    properties_pb2,
    search_get_pb2,
    weaviate_pb2_grpc,
)

DEFAULT_VERSION = "1.37.3"  # what docker-compose.weaviate.yml runs
GRPC_MAX_MESSAGE = 104_858_000
HYBRID_MIN_CANDIDATES = 100  # Weaviate's hybrid.DefaultLimit
DEFAULT_LIMIT = 10  # QUERY_DEFAULTS_LIMIT
# Weaviate's "en" preset (adapters/repos/db/inverted/stopwords/presets.go)
EN_STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their then there "
    "these they this to was will with".split()
)
_F = base_pb2.Filters
# What Weaviate fills in when it stores a class: the parts the SDK's config parser reads.
_CLASS_DEFAULTS = json.loads("""{
  "invertedIndexConfig": {"bm25": {"b": 0.75, "k1": 1.2}, "cleanupIntervalSeconds": 60,
    "indexNullState": false, "indexPropertyLength": false, "indexTimestamps": false,
    "stopwords": {"preset": "en", "additions": null, "removals": null}, "usingBlockMaxWAND": true},
  "multiTenancyConfig": {"enabled": false, "autoTenantCreation": false, "autoTenantActivation": false},
  "replicationConfig": {"factor": 1, "asyncEnabled": false, "deletionStrategy": "NoAutomatedResolution"},
  "shardingConfig": {"virtualPerPhysical": 128, "desiredCount": 1, "actualCount": 1, "key": "_id",
    "desiredVirtualCount": 128, "actualVirtualCount": 128, "strategy": "hash", "function": "murmur3"}
}""")
_HNSW_DEFAULTS = json.loads("""{"skip": false, "cleanupIntervalSeconds": 300, "maxConnections": 32,
  "efConstruction": 128, "ef": -1, "dynamicEfMin": 100, "dynamicEfMax": 500, "dynamicEfFactor": 8,
  "vectorCacheMaxObjects": 1000000000000, "flatSearchCutoff": 40000, "distance": "cosine",
  "filterStrategy": "sweeping", "pq": {"enabled": false}, "bq": {"enabled": false},
  "sq": {"enabled": false}}""")
_PROP_DEFAULTS = {"description": None, "indexFilterable": True, "indexSearchable": True}
_GO_TYPES = {str: "string", float: "float64", int: "int64", bool: "bool", list: "[]interface {}"}


class RefusedError(Exception):
    """A request the fake (as Weaviate would) turns down: a gRPC status or an HTTP status."""

    def __init__(self, message: str, code: Any = grpc.StatusCode.INVALID_ARGUMENT, http: int = 422) -> None:
        super().__init__(message)
        self.message, self.code, self.http = message, code, http


# -- text analysis and scoring ---------------------------------------------------------------------


def tokenize(text: str, tokenization: str) -> list[str]:
    """Weaviate's tokenizers (helpers.Tokenize) for the four modelled tokenizations."""
    if tokenization == "word":
        return re.findall(r"[^\W_]+", text.lower())
    if tokenization == "lowercase":
        return text.lower().split()
    if tokenization == "whitespace":
        return text.split()
    if tokenization == "field":
        return [text.strip()] if text.strip() else []
    raise RefusedError(f"the fake does not model tokenization {tokenization!r}")


def go_float32(value: float | np.floating[Any]) -> str:
    """How Go's %v prints a float32 (shortest round-trip digits), as Weaviate's explainScore does."""
    f = np.float32(value)
    if f == 0:
        return "0"
    exponent = math.floor(math.log10(abs(float(f))))
    if exponent < -4 or exponent >= 6:  # strconv: shortest %g switches to %e at precision 6
        mantissa, _, exp = np.format_float_scientific(f, unique=True, trim="-").partition("e")
        return f"{mantissa.rstrip('.')}e{exp[0]}{int(exp[1:]):02d}"
    return str(np.format_float_positional(f, unique=True, trim="-"))


def parse_boost(text: str, fractional: bool) -> float:
    if fractional:
        try:
            return float(np.float32(text))
        except ValueError:
            return 0.0
    return float(int(text)) if re.fullmatch(r"[+-]?\d+", text) else 0.0  # Go's strconv.Atoi, error -> 0


def distance(metric: str, a: np.ndarray, b: np.ndarray) -> float:
    if metric == "dot":
        return float(-(a @ b))
    if metric == "l2-squared":
        return float(((a - b) ** 2).sum())
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return 1.0 - float(a @ b) / norm if norm else 1.0


@dataclass
class StoredObject:
    uuid: str
    props: dict[str, Any]
    vector: np.ndarray | None
    terms: dict[str, Counter[str]] = field(default_factory=dict)  # searchable property -> token counts
    lengths: dict[str, int] = field(default_factory=dict)


Hits = list[tuple[StoredObject, float]]  # (object, score or distance), best first


@dataclass
class Collection:
    schema: dict[str, Any]
    objects: dict[str, StoredObject] = field(default_factory=dict)
    dim: int | None = None  # set by the first vector, as the vector index's dimensions are

    @property
    def name(self) -> str:
        return str(self.schema["class"])

    def prop(self, name: str) -> dict[str, Any] | None:
        return next((p for p in self.schema["properties"] if p["name"] == name), None)

    @property
    def vector_name(self) -> str:
        return str(next(iter(self.schema.get("vectorConfig") or {"default": None})))

    @property
    def metric(self) -> str:
        config = self.schema["vectorConfig"][self.vector_name]
        return str(config["vectorIndexConfig"].get("distance", "cosine"))

    def stopwords(self) -> frozenset[str]:
        config = self.schema["invertedIndexConfig"]["stopwords"]
        base = EN_STOPWORDS if config["preset"] == "en" else frozenset()
        return (base | set(config.get("additions") or [])) - set(config.get("removals") or [])

    def bm25(
        self, query: str, specs: list[str], pool: list[StoredObject], limit: int, fractional: bool
    ) -> Hits:
        """BlockMax-WAND BM25F of ``query`` over ``specs`` (``prop^boost``): [(object, score)], best first."""
        props: list[tuple[dict[str, Any], float]] = []
        for spec in specs or [p["name"] for p in self.schema["properties"] if p["indexSearchable"]]:
            name, _, boost_text = spec.partition("^")
            prop = self.prop(name)
            if prop is None or not prop["indexSearchable"]:
                raise RefusedError(f"Search index for property '{name}' not found: it cannot be searched")
            props.append((prop, parse_boost(boost_text, fractional) if boost_text else 1.0))
        bm = self.schema["invertedIndexConfig"]["bm25"]
        k1, b, n_all = float(bm["k1"]), float(bm["b"]), len(self.objects)
        scores: dict[str, float] = defaultdict(float)
        for tokenization in dict.fromkeys(p["tokenization"] for p, _ in props):
            group = [(p["name"], boost) for p, boost in props if p["tokenization"] == tokenization]
            terms = Counter(tokenize(query, tokenization))  # unique terms, each with its repeat count
            if tokenization == "word":
                terms = Counter({t: c for t, c in terms.items() if t not in self.stopwords()})
            for term, repeats in terms.items():
                held = [sum(1 for o in self.objects.values() if o.terms[p][term]) for p, _ in group]
                if not any(held):
                    continue
                n = sum(held) // sum(1 for h in held if h)
                idf = math.log(1 + (n_all - n + 0.5) / (n + 0.5)) * repeats
                for name, boost in group:
                    have = [o.lengths[name] for o in self.objects.values() if name in o.lengths]
                    average = sum(have) / len(have) if have and sum(have) else 40.0
                    for obj in pool:
                        tf = obj.terms[name][term]
                        if tf:
                            norm = k1 * (1 - b + b * obj.lengths[name] / average)
                            scores[obj.uuid] += idf * boost * tf / (tf + norm)
        hits = sorted((-s, u) for u, s in scores.items() if s > 0)
        return [(self.objects[u], float(np.float32(-s))) for s, u in hits[:limit]]

    def nearest(self, vector: np.ndarray, pool: list[StoredObject], limit: int) -> Hits:
        """[(object, distance)], nearest first."""
        if self.dim is not None and len(vector) != self.dim:
            raise RefusedError(
                "vector search: knn search: distance between entrypoint and query node: "
                f"vector lengths don't match: {self.dim} vs {len(vector)}"
            )
        found = [(distance(self.metric, vector, o.vector), o.uuid, o) for o in pool if o.vector is not None]
        return [(o, float(np.float32(d))) for d, _, o in sorted(found, key=lambda t: t[:2])[:limit]]


def fuse(sets: list[tuple[str, float, Hits]], ranked: bool) -> list[tuple[StoredObject, float, str]]:
    """Weaviate's FusionRelativeScore / FusionRanked: [(object, score, explainScore)], best first."""
    fused: dict[str, list[Any]] = {}  # uuid -> [object, score, explain, raw score of the last set]
    f32 = np.float32
    for name, weight, hits in sets:
        raws = [f32(raw) for _, raw in hits]
        low, high = (min(raws), max(raws)) if raws else (f32(0), f32(0))
        for rank, ((obj, _), raw) in enumerate(zip(hits, raws, strict=True)):
            previous = fused.get(obj.uuid)
            if ranked:
                score = f32(weight / (rank + 60))
                line = f"Document {obj.uuid} contributed {go_float32(score)} to the score"
                explain = (previous[2] if previous else "") + f"\nHybrid (Result Set {name}) {line}"
            else:
                score = f32(weight) if high == low else f32(weight) * ((raw - low) / (high - low))
                explain = (
                    f"\nHybrid (Result Set {name}) Document {obj.uuid}: original score {go_float32(raw)}, "
                    f"normalized score: {go_float32(score)}"
                ) + (" - " + previous[2] if previous else "")
            fused[obj.uuid] = [obj, score + (previous[1] if previous else f32(0)), explain, raw]
    order = sorted(fused.values(), key=lambda r: (-float(r[1]), -float(r[3]), r[0].uuid))
    return [(obj, float(score), explain) for obj, score, explain, _ in order]


def matches(obj: StoredObject, where: base_pb2.Filters) -> bool:
    op = where.operator
    if op in (_F.OPERATOR_AND, _F.OPERATOR_OR):
        results = (matches(obj, sub) for sub in where.filters)
        return all(results) if op == _F.OPERATOR_AND else any(results)
    if op == _F.OPERATOR_NOT:
        return not matches(obj, where.filters[0])
    path = where.target.property if where.HasField("target") else (where.on[-1] if where.on else "")
    value = obj.uuid if path == "_id" else obj.props.get(path)
    have = set(value if isinstance(value, list) else [] if value is None else [value])
    want = [where.value_text] if where.HasField("value_text") else list(where.value_text_array.values)
    if not want:
        raise RefusedError("the fake models filters on text values only")
    if path == "_id":
        want = [str(uuid_lib.UUID(w)) for w in want]
    if op == _F.OPERATOR_EQUAL:
        return want[0] in have
    if op == _F.OPERATOR_NOT_EQUAL:
        return want[0] not in have
    if op == _F.OPERATOR_CONTAINS_ANY:
        return bool(have & set(want))
    if op == _F.OPERATOR_CONTAINS_ALL:
        return set(want) <= have
    raise RefusedError(f"the fake does not model the filter operator {_F.Operator.Name(op)}")


# -- schema ------------------------------------------------------------------------------------------


def normalise_class(config: dict[str, Any]) -> dict[str, Any]:
    """The class as Weaviate stores and returns it: capitalised name, defaults filled in."""
    name = str(config.get("class") or "")
    schema: dict[str, Any] = {
        "class": name[:1].upper() + name[1:],
        "description": config.get("description"),
        "properties": [],
    }
    schema.update(copy.deepcopy(_CLASS_DEFAULTS))
    given = config.get("invertedIndexConfig") or {}
    for part in ("bm25", "stopwords"):
        schema["invertedIndexConfig"][part].update(given.get(part) or {})
    if schema["invertedIndexConfig"]["stopwords"]["preset"] not in ("en", "none") or not name:
        raise RefusedError("a class needs a name; the fake models the stopword presets en and none only")
    for p in config.get("properties") or []:
        if p["dataType"][0] not in ("text", "text[]"):
            raise RefusedError(f"the fake models text and text[] properties only, not {p['dataType']}")
        tokenization = p.get("tokenization") or "word"
        tokenize("", tokenization)  # refuses an unmodelled tokenization
        kept = {k: p[k] for k in ("name", "dataType", *_PROP_DEFAULTS) if k in p}
        schema["properties"].append({**_PROP_DEFAULTS, **kept, "tokenization": tokenization})
    vectors = config.get("vectorConfig") or {"default": {}}
    if len(vectors) != 1 or any(
        list(v.get("vectorizer") or {"none": 0}) != ["none"] for v in vectors.values()
    ):
        raise RefusedError("the fake models one self-provided vector per collection (vectorizer none)")
    schema["vectorConfig"] = {
        n: {
            "vectorizer": {"none": {}},
            "vectorIndexType": v.get("vectorIndexType") or "hnsw",
            "vectorIndexConfig": {**_HNSW_DEFAULTS, **(v.get("vectorIndexConfig") or {})},
        }
        for n, v in vectors.items()
    }
    return schema


def batch_properties(collection: Collection, props: batch_pb2.BatchObject.Properties) -> dict[str, Any]:
    """A BatchObject's properties as Python values, checked against the schema as Weaviate does."""
    values: dict[str, Any] = MessageToDict(props.non_ref_properties)
    values.update({a.prop_name: list(a.values) for a in props.text_array_properties})
    others = [*props.int_array_properties, *props.boolean_array_properties, *props.number_array_properties]
    values.update({a.prop_name: [0] for a in others})  # not text: refused below, by type
    values.update({o.prop_name: {} for o in [*props.object_properties, *props.object_array_properties]})
    values.update({name: [] for name in props.empty_list_props})
    for name, value in values.items():
        prop = collection.prop(name)
        if prop is None:
            raise RefusedError(
                f"no such prop with name '{name}' found in class '{collection.name}' in the schema. "
                "Check your schema files for which properties in this class are available"
            )
        text = prop["dataType"] == ["text"]
        strings = isinstance(value, list) and all(isinstance(v, str) for v in value)
        if value is not None and not (isinstance(value, str) if text else strings):
            kind, want = ("text", "a string") if text else ("text array", "a string array")
            raise RefusedError(
                f"invalid {kind} property '{name}' on class '{collection.name}': "
                f"not {want}, but {_GO_TYPES.get(type(value), 'map[string]interface {}')}"
            )
    return {k: v for k, v in values.items() if v is not None}


def _vector(source: Any, name: str) -> np.ndarray | None:
    """The single-vector bytes of a BatchObject, a Hybrid or a NearVector message."""
    if source.vector_bytes:
        return np.frombuffer(source.vector_bytes, dtype="<f4").astype(np.float64)
    for v in source.vectors:
        if v.name in ("", name) and v.type != base_pb2.Vectors.VECTOR_TYPE_MULTI_FP32:
            return np.frombuffer(v.vector_bytes, dtype="<f4").astype(np.float64)
    for v in getattr(source, "vector_for_targets", []):
        return _vector(v, name)
    legacy = getattr(source, "vector", [])
    return np.asarray(legacy, dtype=np.float64) if len(legacy) else None


# -- the servers ----------------------------------------------------------------------------------------


def _rpc(method: Any) -> Any:
    def handler(self: _Servicer, request: Any, context: grpc.ServicerContext) -> Any:
        try:
            self.fake._admit_grpc(method.__name__, request, context)
            return method(self, request)
        except RefusedError as exc:
            context.abort(exc.code, exc.message)

    handler.__name__ = method.__name__
    return handler


class _Servicer(weaviate_pb2_grpc.WeaviateServicer):
    def __init__(self, fake: FakeWeaviate) -> None:
        self.fake = fake

    @_rpc
    def BatchObjects(self, request: batch_pb2.BatchObjectsRequest) -> batch_pb2.BatchObjectsReply:  # noqa: N802 (gRPC method name)
        start, errors = time.monotonic(), []
        with self.fake.lock:
            for index, obj in enumerate(request.objects):
                try:
                    self.fake._put(obj)
                except RefusedError as exc:
                    errors.append(batch_pb2.BatchObjectsReply.BatchError(index=index, error=exc.message))
        return batch_pb2.BatchObjectsReply(took=time.monotonic() - start, errors=errors)

    @_rpc
    def BatchDelete(self, request: batch_delete_pb2.BatchDeleteRequest) -> batch_delete_pb2.BatchDeleteReply:  # noqa: N802 (gRPC method name)
        with self.fake.lock:
            collection = self.fake._collection(request.collection)
            hit = [u for u, o in collection.objects.items() if matches(o, request.filters)]
            if not request.dry_run:
                for u in hit:
                    del collection.objects[u]
        objects = [
            batch_delete_pb2.BatchDeleteObject(uuid=uuid_lib.UUID(u).bytes, successful=not request.dry_run)
            for u in hit
        ]
        return batch_delete_pb2.BatchDeleteReply(
            matches=len(hit),
            successful=0 if request.dry_run else len(hit),
            failed=0,
            objects=objects if request.verbose else [],
        )

    @_rpc
    def Aggregate(self, request: aggregate_pb2.AggregateRequest) -> aggregate_pb2.AggregateReply:  # noqa: N802 (gRPC method name)
        if request.aggregations or request.HasField("group_by"):
            raise RefusedError("the fake models Aggregate objects_count only")
        with self.fake.lock:
            pool = self.fake._pool(request.collection, request)
        return aggregate_pb2.AggregateReply(
            single_result=aggregate_pb2.AggregateReply.Single(objects_count=len(pool))
        )

    @_rpc
    def Search(self, request: search_get_pb2.SearchRequest) -> search_get_pb2.SearchReply:  # noqa: N802 (gRPC method name)
        start = time.monotonic()
        with self.fake.lock:
            results = self.fake._search(request)
        return search_get_pb2.SearchReply(took=time.monotonic() - start, results=results)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        self.server.fake._open_sockets.add(self.connection)

    def finish(self) -> None:
        with contextlib.suppress(OSError):
            super().finish()
        self.server.fake._open_sockets.discard(self.connection)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            status, payload = self.server.fake._rest(
                self.command, urlsplit(self.path).path, self.headers.get("Authorization"), raw
            )
        except RefusedError as exc:
            status, payload = exc.http, {"error": [{"message": exc.message}]}
        data = b"" if payload is None else json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _serve  # noqa: N815


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeWeaviate


class FakeWeaviate:
    """A loopback Weaviate stand-in: ``with FakeWeaviate() as fake: weaviate.connect_to_custom(...)``.

    ``version`` is what /v1/meta claims (the SDK picks wire details from it, e.g. Hybrid ``alpha_param``
    from 1.36.6, and it decides how ``^`` boosts parse, see the module docstring); ``api_key`` makes every
    call need ``Authorization: Bearer <key>``.
    """

    def __init__(
        self,
        api_key: str | None = None,
        version: str = DEFAULT_VERSION,
        fractional_boosts: bool | None = None,
    ) -> None:
        major, minor, *_ = (int(p) for p in re.findall(r"\d+", version))
        if (major, minor) < (1, 30):
            raise ValueError("the fake models Weaviate 1.30 or newer (BlockMax WAND scoring)")
        self.api_key, self.version = api_key, version
        self.boosts = (major, minor) >= (1, 37) if fractional_boosts is None else fractional_boosts
        self.lock = threading.RLock()
        self.collections: dict[str, Collection] = {}
        self.calls: list[tuple[str, Any]] = []  # (gRPC method, request), health checks included
        self.rest_calls: list[tuple[str, str]] = []  # (HTTP method, path)
        self._failures: list[tuple[str, str]] = []  # (transport, code), consumed first to last
        self._open_sockets: set[socket.socket] = set()
        self._grpc = grpc.server(
            futures.ThreadPoolExecutor(max_workers=8),
            options=[("grpc.max_receive_message_length", GRPC_MAX_MESSAGE)],
        )
        weaviate_pb2_grpc.add_WeaviateServicer_to_server(_Servicer(self), self._grpc)
        health = grpc.unary_unary_rpc_method_handler(
            self._health,
            request_deserializer=health_weaviate_pb2.WeaviateHealthCheckRequest.FromString,
            response_serializer=health_weaviate_pb2.WeaviateHealthCheckResponse.SerializeToString,
        )
        self._grpc.add_generic_rpc_handlers(
            [grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": health})]
        )
        self.grpc_port = self._grpc.add_insecure_port("127.0.0.1:0")
        self._http = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._http.fake = self
        self.http_port = self._http.server_address[1]
        self.url = f"http://127.0.0.1:{self.http_port}"
        self._thread: threading.Thread | None = None
        self._pypi_url: str | None = None

    # -- lifecycle and hooks -------------------------------------------------------------------------

    def start(self) -> FakeWeaviate:
        # connect() asks PyPI for the SDK's latest version (an upgrade nudge, no part of Weaviate): ask
        # this fake instead (a 404), so tests use no network and never see that warning
        self._pypi_url = weaviate_v4.PYPI_PACKAGE_URL
        weaviate_v4.PYPI_PACKAGE_URL = f"{self.url}/fake/pypi-version-check"
        self._grpc.start()
        self._thread = threading.Thread(
            target=self._http.serve_forever, args=(0.05,), name="fake-weaviate-rest", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Close both ports and every open connection: a stopped fake refuses connections."""
        self._grpc.stop(grace=None).wait()
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()
        if self._pypi_url is not None:
            weaviate_v4.PYPI_PACKAGE_URL, self._pypi_url = self._pypi_url, None
        for sock in list(self._open_sockets):
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def __enter__(self) -> FakeWeaviate:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def fail_next(self, n: int, code: str = "unavailable", transport: str = "grpc") -> None:
        """The next n gRPC calls (health checks excepted) fail: ``unavailable`` with UNAVAILABLE
        (transient), ``invalid`` with INVALID_ARGUMENT (permanent). transport="rest" fails the next n
        REST requests instead, with 503 / 422."""
        if code not in ("unavailable", "invalid") or transport not in ("grpc", "rest"):
            raise ValueError(
                f"fail_next: code unavailable|invalid, transport grpc|rest; not {code}, {transport}"
            )
        with self.lock:
            self._failures += [(transport, code)] * n

    @staticmethod
    def sent_alpha(hybrid: Any) -> float:
        """The alpha of a Hybrid request as the server reads it: ``alpha_param`` from SDKs talking to a
        server >= 1.36.6, else the older ``alpha`` field."""
        if hybrid.use_alpha_param:
            return float(hybrid.alpha_param) if hybrid.HasField("alpha_param") else 0.75
        return float(hybrid.alpha)

    def count(self, collection: str) -> int:
        with self.lock:
            return len(self._collection(collection).objects)

    def properties(self, collection: str) -> dict[str, dict[str, Any]]:
        """The schema's properties by name, as GET /v1/schema/{collection} returns them."""
        with self.lock:
            return {p["name"]: copy.deepcopy(p) for p in self._collection(collection).schema["properties"]}

    def object(self, collection: str, uuid: str) -> dict[str, Any] | None:
        """One stored object: ``{"uuid", "properties", "vector"}``, or None."""
        with self.lock:
            found = self._collection(collection).objects.get(str(uuid_lib.UUID(str(uuid))))
            if found is None:
                return None
            vector = None if found.vector is None else [float(x) for x in found.vector]
            return {"uuid": found.uuid, "properties": copy.deepcopy(found.props), "vector": vector}

    def _take_failure(self, transport: str) -> str | None:
        with self.lock:
            for i, (where, code) in enumerate(self._failures):
                if where == transport:
                    del self._failures[i]
                    return code
        return None

    def _admit_grpc(self, method: str, request: Any, context: grpc.ServicerContext) -> None:
        with self.lock:
            self.calls.append((method, request))
        if self.api_key is not None:
            given = dict(context.invocation_metadata()).get("authorization")
            if given != f"Bearer {self.api_key}":
                raise RefusedError("unauthorized: invalid api key", grpc.StatusCode.UNAUTHENTICATED)
        failure = self._take_failure("grpc")
        if failure == "unavailable":
            raise RefusedError("fake: injected transient failure", grpc.StatusCode.UNAVAILABLE)
        if failure == "invalid":
            raise RefusedError("fake: injected permanent failure", grpc.StatusCode.INVALID_ARGUMENT)

    def _health(self, request: Any, context: grpc.ServicerContext) -> Any:
        with self.lock:
            self.calls.append(("Check", request))
        return health_weaviate_pb2.WeaviateHealthCheckResponse(
            status=health_weaviate_pb2.WeaviateHealthCheckResponse.SERVING
        )

    # -- REST --------------------------------------------------------------------------------------------

    def _rest(self, method: str, path: str, auth: str | None, raw: bytes) -> tuple[int, Any]:
        with self.lock:
            self.rest_calls.append((method, path))
        if path in ("/v1/.well-known/ready", "/v1/.well-known/live"):
            return 200, None
        if path == "/v1/.well-known/openid-configuration":
            return 404, None  # no OIDC configured
        if path.startswith("/fake/"):
            return 404, {}  # the SDK's PyPI version check (see start()) learns nothing
        if self.api_key is not None and auth != f"Bearer {self.api_key}":
            why = "unauthorized: invalid api key" if auth else "anonymous access not enabled"
            raise RefusedError(why, http=401)
        failure = self._take_failure("rest")
        if failure:
            raise RefusedError(
                f"fake: injected {failure} failure", http=503 if failure == "unavailable" else 422
            )
        parts = path.strip("/").split("/")
        with self.lock:
            if path == "/v1/meta" and method == "GET":
                meta = {"hostname": "http://[::]:8080", "modules": {}, "version": self.version}
                return 200, {**meta, "grpcMaxMessageSize": GRPC_MAX_MESSAGE}
            if path == "/v1/schema" and method == "GET":
                return 200, {"classes": [c.schema for c in self.collections.values()]}
            if path == "/v1/schema" and method == "POST":
                schema = normalise_class(json.loads(raw or b"{}"))
                if schema["class"] in self.collections:
                    raise RefusedError(f'class name "{schema["class"]}" already exists', http=422)
                self.collections[schema["class"]] = Collection(schema)
                return 200, schema
            if parts[:2] == ["v1", "schema"] and len(parts) == 3:
                name = parts[2][:1].upper() + parts[2][1:]
                if method == "GET":
                    found = self.collections.get(name)
                    return (200, found.schema) if found else (404, None)
                if method == "DELETE":
                    self.collections.pop(name, None)
                    return 200, None
        raise RefusedError(f"the fake does not serve {method} {path}", http=404)

    # -- storage and search (called with self.lock held) ----------------------------------------------

    def _collection(self, name: str) -> Collection:
        found = self.collections.get(name[:1].upper() + name[1:])
        if found is None:
            raise RefusedError(f"class {name} not found", grpc.StatusCode.NOT_FOUND)
        return found

    def _pool(self, name: str, request: Any) -> list[StoredObject]:
        objects = list(self._collection(name).objects.values())
        return [o for o in objects if matches(o, request.filters)] if request.HasField("filters") else objects

    def _put(self, message: batch_pb2.BatchObject) -> None:
        collection = self._collection(message.collection)
        try:
            key = str(uuid_lib.UUID(message.uuid))
        except ValueError:
            raise RefusedError(f"invalid uuid {message.uuid!r}") from None
        props = batch_properties(collection, message.properties)
        vector = _vector(message, collection.vector_name)
        if vector is not None and collection.dim is not None and len(vector) != collection.dim:
            raise RefusedError(
                f"new node has a vector with length {len(vector)}. "
                f"Existing nodes have vectors with length {collection.dim}"
            )
        obj = StoredObject(key, props, vector)
        for prop in collection.schema["properties"]:
            if prop["indexSearchable"] and prop["name"] in props:
                value = props[prop["name"]]
                tokens = [
                    t
                    for v in (value if isinstance(value, list) else [value])
                    for t in tokenize(v, prop["tokenization"])
                ]
                obj.terms[prop["name"]], obj.lengths[prop["name"]] = Counter(tokens), len(tokens)
            else:
                obj.terms[prop["name"]] = Counter()
        if vector is not None and collection.dim is None:
            collection.dim = len(vector)
        collection.objects[key] = obj

    def _search(self, request: search_get_pb2.SearchRequest) -> list[search_get_pb2.SearchResult]:
        for unsupported in ("group_by", "generative", "rerank", "near_text", "near_object", "boost"):
            if request.HasField(unsupported):
                raise RefusedError(f"the fake does not model Search with {unsupported}")
        if request.sort_by:
            raise RefusedError("the fake does not model Search with sort_by")
        collection = self._collection(request.collection)
        pool = self._pool(request.collection, request)
        limit, offset = request.limit or DEFAULT_LIMIT, request.offset
        hits: list[tuple[StoredObject, dict[str, Any]]]
        if request.HasField("hybrid_search"):
            hits = self._hybrid(collection, request.hybrid_search, pool, offset + limit)
        elif request.HasField("bm25_search"):
            bm25 = request.bm25_search
            scored = collection.bm25(bm25.query, list(bm25.properties), pool, offset + limit, self.boosts)
            hits = [(o, {"score": s}) for o, s in scored]
        elif request.HasField("near_vector"):
            vector = _vector(request.near_vector, collection.vector_name)
            if vector is None:
                raise RefusedError("near_vector needs a vector")
            near = collection.nearest(vector, pool, offset + limit)
            hits = [
                (o, {"distance": d, "certainty": 1 - d / 2 if collection.metric == "cosine" else None})
                for o, d in near
            ]
        else:
            after = str(uuid_lib.UUID(request.after)) if request.after else ""
            later = [o for o in sorted(pool, key=lambda o: o.uuid) if o.uuid > after]
            hits = [(o, {}) for o in later[: offset + limit]]
        return [self._result(collection, obj, meta, request) for obj, meta in hits[offset : offset + limit]]

    def _hybrid(self, collection: Collection, hybrid: Any, pool: list[StoredObject], total: int) -> list[Any]:
        if hybrid.HasField("near_text") or hybrid.bm25_search_operator.operator > 1:  # 1: OR
            raise RefusedError("the fake models hybrid with a vector and OR keyword matching only")
        alpha = self.sent_alpha(hybrid)
        candidates = max(total, HYBRID_MIN_CANDIDATES)
        sets = []
        if alpha > 0:
            near = hybrid.near_vector if hybrid.HasField("near_vector") else hybrid
            vector = _vector(near, collection.vector_name)
            if vector is None:
                raise RefusedError(
                    f"could not vectorize input for collection {collection.name} with search-type hybrid. "
                    "Make sure a vectorizer module is configured for this collection"
                )
            nearest = collection.nearest(vector, pool, candidates)
            sets.append(("vector,hybridVector", alpha, [(o, 1 - d) for o, d in nearest]))
        if alpha < 1:
            found = collection.bm25(hybrid.query, list(hybrid.properties), pool, candidates, self.boosts)
            sets.append(("keyword,bm25", 1 - alpha, found))
        fused = fuse(sets, ranked=hybrid.fusion_type == hybrid.FUSION_TYPE_RANKED)
        return [(obj, {"score": score, "explain": explain}) for obj, score, explain in fused[:total]]

    def _result(self, collection: Collection, obj: StoredObject, meta: dict[str, Any], request: Any) -> Any:
        wanted = request.metadata
        md = search_get_pb2.MetadataResult(id=obj.uuid, id_as_bytes=uuid_lib.UUID(obj.uuid).bytes)
        if wanted.score and "score" in meta:
            md.score, md.score_present = meta["score"], True
        if wanted.explain_score and "explain" in meta:
            md.explain_score, md.explain_score_present = meta["explain"], True
        if wanted.distance and "distance" in meta:
            md.distance, md.distance_present = meta["distance"], True
        if wanted.certainty and meta.get("certainty") is not None:
            md.certainty, md.certainty_present = meta["certainty"], True
        if (wanted.vector or len(wanted.vectors)) and obj.vector is not None:
            md.vectors.append(
                base_pb2.Vectors(
                    name=collection.vector_name,
                    vector_bytes=obj.vector.astype("<f4").tobytes(),
                    type=base_pb2.Vectors.VECTOR_TYPE_SINGLE_FP32,
                )
            )
        every = not request.HasField("properties") or request.properties.return_all_nonref_properties
        names = (
            [p["name"] for p in collection.schema["properties"]]
            if every
            else request.properties.non_ref_properties
        )
        props = properties_pb2.Properties()
        for name in names:
            value = obj.props.get(name)
            if isinstance(value, list):
                props.fields[name].list_value.text_values.SetInParent()
                props.fields[name].list_value.text_values.values.extend(value)
            elif value is not None:
                props.fields[name].text_value = value
        found = search_get_pb2.PropertiesResult(non_ref_props=props, target_collection=collection.name)
        return search_get_pb2.SearchResult(properties=found, metadata=md)
