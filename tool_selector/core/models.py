"""Domain models shared by every layer."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, computed_field

from tool_selector.core.choices import SearchMode
from tool_selector.core.hashing import sha256_of, tool_hash
from tool_selector.core.json_limits import Annotations, InputSchema, OutputSchema, ShallowMetadata
from tool_selector.core.names import ServerName, ToolName, tool_id  # ids are made and split there


class CreationMethod(StrEnum):
    DISCOVERED = "discovered"
    IMPORTED = "import"
    MANUAL = "manual"
    MANUAL_API = "manual_api"
    CLI = "cli"
    MCP_TOOL = "mcp_tool"


class ServerSpec(BaseModel):
    """A server as read from a catalog file or a registration request; its name keeps the naming rule
    (tool_selector/core/names.py), its metadata the depth limit (tool_selector/core/json_limits.py)."""

    model_config = ConfigDict(extra="forbid")

    name: ServerName
    description: str = ""
    metadata: ShallowMetadata = Field(default_factory=dict)


class ToolSpec(BaseModel):
    """A tool as read from a catalog file, an MCP server or a registration request; its server's name
    and its own keep the naming rule (tool_selector/core/names.py), so its id splits one way only, and
    its JSON values the depth and size limits (tool_selector/core/json_limits.py), so every answer that
    shows it can be written."""

    model_config = ConfigDict(extra="forbid")

    server: ServerName
    name: ToolName
    description: str = ""
    input_schema: InputSchema = Field(default_factory=dict)
    annotations: Annotations = Field(default_factory=dict)
    output_schema: OutputSchema | None = None

    @property
    def id(self) -> str:
        return tool_id(self.server, self.name)

    def compute_hash(self) -> str:
        """sha256 of the canonical JSON of name + description + input schema (what search reads)."""
        return tool_hash(self.name, self.description, self.input_schema)

    def definition(self) -> dict[str, Any]:
        """What an agent is handed for this tool, and so what an approval pins."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
            "output_schema": self.output_schema,
            "annotations": self.annotations,
        }

    def definition_hash(self) -> str:
        """sha256 of the canonical JSON of ``definition()``: the pinned hash (trust, issue 15)."""
        return sha256_of(self.definition())


class ServerRecord(ServerSpec):
    """A stored server, read as it is stored (a name or metadata an older version let in breaks no read:
    the store reads metadata over the depth limit as withheld)."""

    name: str = Field(min_length=1)
    metadata: dict[str, Any] = Field(default_factory=dict)
    content_hash: str
    creation_method: CreationMethod
    created_at: datetime
    updated_at: datetime
    created_by: str = ""
    modified_by: str = ""
    tool_count: int = 0


class ToolRecord(ToolSpec):
    """A stored tool, read as it is stored (the store reads a JSON value over the depth limit, which an
    older version let in, as withheld); its ``id`` (``server::name``) is serialised with it."""

    server: str = Field(min_length=1)
    name: str = Field(min_length=1)
    input_schema: dict[str, Any] = Field(default_factory=dict)
    annotations: dict[str, Any] = Field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    content_hash: str
    creation_method: CreationMethod
    created_at: datetime
    updated_at: datetime
    created_by: str = ""
    modified_by: str = ""

    @computed_field(description="server::name")  # type: ignore[prop-decorator]
    @property
    def tool_id(self) -> str:
        return self.id


DocumentKind = Literal["tool", "server"]


class ToolDocument(BaseModel):
    """What the search index holds for one tool, or for one server (``kind``): text fields (str or list
    of str) and a vector. A tool's id is ``server::tool``; a server document's id, server and name are
    the server's name. The two kinds are kept apart by the backends, so their ids never collide."""

    id: str
    server: str
    name: str
    fields: dict[str, str | list[str]]
    text_hash: str
    vector: list[float] | None = None
    kind: DocumentKind = "tool"


M = TypeVar("M", bound=BaseModel)


class MatchType(StrEnum):
    KEYWORD = "keyword"
    SEMANTIC = "semantic"
    HYBRID = "hybrid"
    REMEMBERED = "remembered"  # the gateway's memory of confirmed choices decided (route/memory.py)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One tool returned by a backend: its fused score and the raw scores it came from. A plain slotted
    dataclass: a resolve makes a few hundred of them inside this process (the hot path; validating them
    as pydantic models cost a third of a resolve on metatool); pydantic models are the edges'."""

    id: str
    server: str
    name: str
    score: float
    keyword_score: float = 0.0
    vector_score: float | None = None


def search_hit(
    id: str, server: str, name: str, score: float, keyword_score: float, vector_score: float | None
) -> SearchHit:
    """A backend's hit, made from its own index's fields."""
    return SearchHit(id, server, name, score, keyword_score, vector_score)


def with_score(hit: SearchHit, score: float) -> SearchHit:
    """``hit`` with another fused score."""
    return SearchHit(hit.id, hit.server, hit.name, score, hit.keyword_score, hit.vector_score)


class ToolCandidate(BaseModel):
    id: str
    server: str
    name: str
    score: float
    match_type: MatchType


class PowerCandidate(BaseModel):
    """A server ("power") ranked for a query."""

    name: str
    score: float
    match_type: MatchType
    tools: list[str] = Field(default_factory=list, description="its matching tool ids, best first")


class QueryPart(BaseModel):
    """One step of a multi-step request, searched on its own, and what fits that step best."""

    text: str
    powers: list[str] = Field(default_factory=list, description="the powers that fit this step, best first")
    tools: list[str] = Field(default_factory=list, description="the tool ids that fit this step, best first")


@dataclass(frozen=True, eq=False)
class RequestVector:
    """A request's embedding held beside a resolution; two are equal when their values are."""

    values: Any

    def __eq__(self, other: object) -> bool:
        import numpy as np

        return isinstance(other, RequestVector) and bool(np.array_equal(self.values, other.values))

    __hash__ = None  # type: ignore[assignment]


class Resolution(BaseModel):
    """The resolver's answer: ranked tools and powers, and two absolute probabilities."""

    query: str
    mode: SearchMode
    tools: list[ToolCandidate]
    powers: list[PowerCandidate]
    confidence: float = Field(ge=0.0, le=1.0, description="P(the top power is right)")
    top3_confidence: float = Field(
        default=0.0, ge=0.0, le=1.0, description="P(a right power is among the top three)"
    )
    features: dict[str, float] = Field(default_factory=dict)
    parts: list[QueryPart] = Field(
        default_factory=list, description="the steps of a multi-step request; empty when it does not split"
    )
    # the request's embedding (of its text with the arguments taken out): never serialised; the gateway's
    # memory of confirmed choices compares requests by it (services/gateway/memory/recording.py)
    _vector: RequestVector | None = PrivateAttr(default=None)

    @property
    def vector(self) -> Any:
        return None if self._vector is None else self._vector.values

    def with_vector(self, values: Any) -> Resolution:
        self._vector = RequestVector(values)
        return self


TierName = Literal["activated", "multiple_matches", "weak_matches", "not_found"]


class ToolSummary(BaseModel):
    name: str
    description: str
    input_schema: dict[str, Any] = Field(default_factory=dict)


class PowerSummary(BaseModel):
    power: str
    description: str
    keywords: list[str] = Field(default_factory=list)
    score: float | None = None
    tools: list[str] = Field(default_factory=list)


class StepMatch(BaseModel):
    """One step of a multi-step request and what fits it best (tool_selector/route/steps.py)."""

    step: str = Field(description="this step of the request, in the user's words")
    powers: list[str] = Field(default_factory=list, description="the powers that fit this step, best first")
    tools: list[str] = Field(
        default_factory=list, description="the tools that fit this step as 'power::tool', best first"
    )


class Decision(BaseModel):
    """The router's answer in the design's response shapes, with the steps of a multi-step request:
    what every adapter renders as it is."""

    status: TierName
    confidence: float
    query: str
    message: str
    power: str | None = None
    match_type: MatchType | None = None
    tools: list[ToolSummary] | None = None
    matches: list[PowerSummary] | None = None
    available_powers: list[PowerSummary] | None = None
    parts: list[StepMatch] | None = Field(
        default=None,
        exclude_if=lambda parts: parts is None,
        description="a multi-step request only: each step and the powers and tools that fit it best",
    )


# -- enrichment (stages 1-2): stored in the catalog store, read by the indexer ------------------------

EnricherName = Literal["offline", "claude"]


class ServerProfile(BaseModel):
    """Stage 1's output for one server (the design's server profile)."""

    server_name: str
    domain: str = Field(max_length=200)
    primary_capabilities: list[str] = Field(default_factory=list, max_length=30)
    entity_types: list[str] = Field(default_factory=list, max_length=50)
    action_verbs: list[str] = Field(default_factory=list, max_length=50)
    integration_context: str = Field(default="", max_length=2000)
    semantic_keywords: list[str] = Field(default_factory=list, max_length=60)
    profile_hash: str = Field(description="sha256 over the server's name, description and sorted tool hashes")
    last_updated: datetime
    profiler: EnricherName
    model: str
    prompt_version: str


class ToolEnrichment(BaseModel):
    """Stage 2's output for one tool. For retrieval only: agents always see the original description."""

    tool_id: str
    enhanced_description: str = Field(default="", max_length=2000)
    action_entities: list[str] = Field(default_factory=list, max_length=40)
    semantic_keywords: list[str] = Field(default_factory=list, max_length=80)
    use_cases: list[str] = Field(default_factory=list, max_length=12)
    mcp_server_name: str
    server_domain: str = Field(default="", max_length=200)
    tool_hash: str = Field(description="the content hash of the tool this was made from")
    enrichment_hash: str = Field(description="sha256 of tool hash + profile hash + enricher + model + prompt")
    enricher: EnricherName
    model: str
    prompt_version: str
    last_updated: datetime


DiscoveryState = Literal["ok", "stale", "failed"]


class DiscoveryStatus(BaseModel):
    """The outcome of the last discovery of one configured server."""

    server: str
    state: DiscoveryState
    error: str = ""
    last_attempt_at: datetime
    last_success_at: datetime | None = None


# -- the MCP gateway (issue 4) ---------------------------------------------------------------------


class HintCounts(BaseModel):
    """How one kind of hint fared in a session: shown, then followed or ignored by the next call."""

    shown: int = 0
    followed: int = 0
    ignored: int = 0


class GatewaySessionStats(BaseModel):
    """One client session of the gateway: its calls and how it treated the gateway's hints."""

    session_id: str
    transport: str
    client: str = ""
    started_at: datetime
    last_seen_at: datetime
    calls: dict[str, int] = Field(default_factory=dict, description="tool name (own or namespaced) -> count")
    errors: int = 0
    upstream_errors: dict[str, int] = Field(
        default_factory=dict,
        description="power -> its calls through the gateway that failed: the tool's own error (isError), "
        "or the server could not be started or reached, crashed or timed out (counted in errors too)",
    )
    hints: dict[str, HintCounts] = Field(
        default_factory=dict, description="PREREQUISITE_SUGGESTED / suggested_next_actions -> counts"
    )
