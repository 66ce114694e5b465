"""The ``search`` settings group: how a request is matched against the index (``settings.search``):
the hybrid search's weights and candidates, the request's arguments and spelling, the optional ranker."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

DEFAULT_FIELD_BOOSTS: dict[str, float] = {
    # Tool and server fields; ratios measured on msc_bench_dev L1-4 (see README "Retrieval tuning").
    "name": 1.5,
    "server_name": 1.5,
    "description": 1.0,
    "parameter_names": 0.5,
    "server_description": 0.0,
    "tags": 0.0,
    # Enrichment fields (filled by the enricher). The design's 2.5/2/2/1.5/1.5 repeated the tool's own
    # name words 4-5 times and lowered keyword-only recall; 0.5 each (one copy of the words) measured
    # best with the offline enricher on msc_bench_dev and livemcpbench. server_domain is 0 like tags:
    # the offline domain is the server's categories, coarse and already in tags.
    "action_entities": 0.5,
    "enhanced_description": 0.5,
    "semantic_keywords": 0.5,
    "use_cases": 0.5,
    "server_domain": 0.0,
}

DEFAULT_SERVER_FIELD_BOOSTS: dict[str, float] = {
    # Server documents (one per server, searched beside the tools; tool_selector/index/build.py). Other
    # values measured within noise on msc_bench_dev and livemcpbench, except tool_descriptions 0, which
    # lost server R@1 0.786 -> 0.739 on msc (docs/internals.md, "Server documents").
    "server_name": 1.5,
    "server_description": 1.0,
    "tags": 0.5,
    "tool_names": 1.0,
    "tool_descriptions": 0.5,
    "actions": 0.5,
    "domain": 0.0,
    "keywords": 0.5,
}


class SearchSettings(BaseModel):
    """Hybrid search (keyword and vector, fused), what is read from the request before it, and the
    optional learned ranker after it (tool_selector/resolve/)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="0 = keyword only, 1 = vector only")
    fusion: Literal["relative_score", "ranked"] = Field(
        default="relative_score", description="hybrid fusion: Weaviate's relativeScoreFusion or rankedFusion"
    )
    candidates: int = Field(default=100, ge=10, description="hits per retriever before fusion")
    field_boosts: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_FIELD_BOOSTS), description="keyword weight per document field"
    )
    server_field_boosts: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SERVER_FIELD_BOOSTS),
        description="keyword weight per server-document field",
    )
    ann_min_documents: int = Field(
        default=20_000,
        ge=1,
        description="embedded backend: from this many documents of a kind, vectors are searched "
        "approximately (faiss IVF, exact cosines for what it returns); below it, exactly",
    )
    arguments: bool = Field(
        default=True,
        description="take concrete arguments (URLs, paths, quoted text, dates, IDs...) out of the request "
        "before the keyword and vector search match it, and match them to the tools' parameters",
    )
    argument_weight: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="with arguments on: what a tool gains (on relative-score fusion's scale, where the best "
        "score is at most 1; scaled to the best score under ranked fusion) when its "
        "parameters take all of the request's specific arguments (URL, e-mail, path, file, time zone, date, "
        "ID, hash)",
    )
    spelling: bool = Field(
        default=True,
        description="read a misspelled word of a request as the catalog's word one edit away ('tiem' -> "
        "'time'): a word that is neither English nor the catalog's (tool_selector/resolve/spelling.py)",
    )
    rerank: bool = Field(
        default=False,
        description="reorder the first candidates with the learned ranker (off: judged "
        "leave-one-dataset-out, it lowered tool recall on sets it was never fitted on; docs/measurements.md)",
    )
    ranker_file: Path | None = Field(
        default=None, description="None = the packaged ranker (written by `tool-selector lab train-ranker`)"
    )
    max_query_chars: int = Field(default=32_000, ge=16, description="longer queries are refused")

    @model_validator(mode="after")
    def _check_boosts(self) -> SearchSettings:
        for name, boosts in (
            ("field_boosts", self.field_boosts),
            ("server_field_boosts", self.server_field_boosts),
        ):
            bad = {k: v for k, v in boosts.items() if v < 0}
            if bad:
                raise ValueError(f"{name} must be >= 0, got {bad}")
        return self
