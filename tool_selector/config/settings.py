"""The one settings object, built at the edge (CLI, server entry points) and passed down.

Settings are nested by component: ``weaviate``, ``claude``, ``gateway`` and ``api`` are groups, passed
whole to the component they configure; the rest (data folders, retrieval, sync) sit at the top.

Sources, highest first: keyword arguments, environment (``TOOL_SELECTOR_*``; a group's field as
``TOOL_SELECTOR_WEAVIATE__URL``), the standard names of the services' own SDKs (``WEAVIATE_URL``,
``ANTHROPIC_API_KEY``, ...), the TOML file named by ``TOOL_SELECTOR_CONFIG_FILE`` (``[weaviate]``
tables), defaults. ``env_names`` lists every name a setting is read from.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from tool_selector.config.groups import ApiSettings, MemorySettings, TrustSettings
from tool_selector.config.weaviate import WeaviateSettings
from tool_selector.core.choices import Backend, Enricher
from tool_selector.core.errors import ConfigurationError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_settings_toml

__all__ = [
    "ApiSettings",
    "MemorySettings",
    "Settings",
    "TrustSettings",
    "WeaviateSettings",
]  # the groups live beside it

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


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tool-selector"


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tool-selector"


class TierThresholds(BaseModel):
    """The router's tier lines (lower bounds, inclusive), on two probabilities (tool_selector/route/tiers.py):
    ``activated`` on P(the top power is right); ``multiple_matches`` and ``weak_matches`` on P(a right
    power is among the top three)."""

    activated: float = Field(default=0.85, description="P(the top power is right) for activated")
    multiple_matches: float = Field(
        default=0.7, description="P(a right power in the top three) for multiple_matches"
    )
    weak_matches: float = Field(
        default=0.2,
        description="P(a right power in the top three) for weak_matches; below it, not_found "
        "(0.2: the highest line that sends at most 2 % of answerable requests to not_found, judged "
        "leave-one-dataset-out; docs/measurements.md)",
    )

    @model_validator(mode="after")
    def _ordered(self) -> TierThresholds:
        if not (0.0 <= self.weak_matches <= self.multiple_matches <= 1.0 and 0.0 <= self.activated <= 1.0):
            raise ValueError(
                "tier thresholds must lie within 0..1 and satisfy weak_matches <= multiple_matches"
            )
        return self


class ClaudeSettings(BaseModel):
    """The Claude enricher and its client; passed whole to the client."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    api_key: SecretStr | None = Field(default=None, description="Anthropic API key; None = no Claude")
    base_url: str | None = Field(default=None, description="None = https://api.anthropic.com")
    model: str = Field(default="claude-haiku-4-5", description="the model that profiles and enriches")
    timeout_s: float = Field(default=60.0, gt=0, le=600, description="one API call")
    max_attempts: int = Field(default=4, ge=1, le=10, description="tries on 429, 5xx and timeouts")
    concurrency: int = Field(default=4, ge=1, le=32, description="API calls at once during a sync")


class GatewaySettings(BaseModel):
    """The MCP gateway's upstream servers (``tool-selector serve``); passed whole to the power manager."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_active: int = Field(default=5, ge=1, le=100, description="upstream servers running at once")
    max_listed: int = Field(
        default=12,
        ge=1,
        le=1000,
        description="active powers' tools in one session's tools/list; the least recently used leave "
        "it first (still callable)",
    )
    idle_timeout_s: float = Field(default=900.0, gt=0, description="an upstream unused this long is stopped")
    start_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="start + initialize + list tools, per activation"
    )
    call_timeout_s: float = Field(default=120.0, gt=0, le=3600, description="per proxied tool call")
    stop_timeout_s: float = Field(
        default=6.0, gt=0, le=60, description="how long stopping one upstream may take"
    )
    # ~25k tokens at ~4 characters a token: Claude Code's default limit on one MCP tool's output
    max_result_chars: int = Field(
        default=100_000,
        ge=1_000,
        le=10_000_000,
        description="text of one proxied tool result shown to the agent; the rest is cut, with a note",
    )
    max_result_media_bytes: int = Field(
        default=5 * 2**20,  # the Claude API's limit for one image
        ge=0,
        le=100 * 2**20,
        description="images, audio and embedded resources of one proxied result; past it they are left out",
    )
    key_check_s: float = Field(
        default=10.0, gt=0, le=3600, description="serve --http: how often open sessions' keys are checked"
    )


GROUPS: dict[str, type[BaseModel]] = {
    "weaviate": WeaviateSettings,
    "claude": ClaudeSettings,
    "gateway": GatewaySettings,
    "api": ApiSettings,
    "trust": TrustSettings,
    "memory": MemorySettings,
}
# the names the services' own SDKs read, read too (without the prefix)
_BARE_ENV = {
    ("weaviate", "url"): "WEAVIATE_URL",
    ("weaviate", "grpc_url"): "WEAVIATE_GRPC_URL",
    ("weaviate", "api_key"): "WEAVIATE_API_KEY",
    ("claude", "api_key"): "ANTHROPIC_API_KEY",
    ("claude", "base_url"): "ANTHROPIC_BASE_URL",
}
ENV_PREFIX = "TOOL_SELECTOR_"


def env_names(group: str | None, field: str) -> list[str]:
    """Every environment variable a setting is read from, highest priority first."""
    if group is None:
        return [f"{ENV_PREFIX}{field}".upper()]
    names = [f"{ENV_PREFIX}{group}__{field}".upper()]
    if (group, field) in _BARE_ENV:
        names.append(_BARE_ENV[(group, field)])
    return names


class _StandardEnvironment(PydanticBaseSettingsSource):
    """Reads the grouped settings from the standard names of the services' SDKs (see ``env_names``)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {}
        environ = {k.upper(): v for k, v in os.environ.items()}
        for group, model in GROUPS.items():
            for field in model.model_fields:
                for name in env_names(group, field)[1:]:
                    if name in environ:
                        found.setdefault(group, {})[field] = environ[name]
                        break
        return found


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        populate_by_name=True,
    )

    data_dir: Path = Field(default_factory=_default_data_dir, description="catalog database and index")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="model exports, eval indexes")
    backend: Backend = Field(default="embedded", description="embedded (a folder on disk) or weaviate")
    embedding_model: Literal["tool-selector-relevance-v1", "all-MiniLM-L6-v2"] = Field(
        default="tool-selector-relevance-v1",
        description="the embedder: tool-selector-relevance-v1 = the relevance model shipped in the package "
        "(all-MiniLM-L6-v2 fine-tuned on tool requests, int8 ONNX; embedding_engine does not apply); "
        "all-MiniLM-L6-v2 = the general-purpose base model",
    )
    embedding_engine: Literal["onnx", "onnx-int8", "torch"] = Field(
        default="onnx",
        description="for all-MiniLM-L6-v2: onnx = an ONNX export made once into cache_dir; onnx-int8 = "
        "that export quantized to int8 (faster, other vectors: rebuild the index); torch = the checkpoint",
    )
    embedding_threads: int = Field(default=2, ge=1, le=64, description="threads of one embedding call")
    query_batch_window_ms: float = Field(
        default=2.0,
        ge=0.0,
        le=50.0,
        description="under load, how long the query batcher waits for more concurrent queries to embed "
        "together (0: embed each query on its own, no batcher)",
    )
    query_batch_max: int = Field(default=64, ge=1, le=1024, description="queries in one batched model call")
    ann_min_documents: int = Field(
        default=20_000,
        ge=1,
        description="embedded backend: from this many documents of a kind, vectors are searched "
        "approximately (faiss IVF, exact cosines for what it returns); below it, exactly",
    )
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="0 = keyword only, 1 = vector only")
    field_boosts: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_FIELD_BOOSTS), description="keyword weight per document field"
    )
    server_field_boosts: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_SERVER_FIELD_BOOSTS),
        description="keyword weight per server-document field",
    )
    thresholds: TierThresholds = Field(default_factory=TierThresholds, description="the router's tier lines")
    calibration_file: Path | None = Field(default=None, description="None = the packaged calibration")
    rerank: bool = Field(
        default=False,
        description="reorder the first candidates with the learned ranker (off: judged "
        "leave-one-dataset-out, it lowered tool recall on sets it was never fitted on; docs/measurements.md)",
    )
    arguments: bool = Field(
        default=True,
        description="take concrete arguments (URLs, paths, quoted text, dates, IDs...) out of the request "
        "before the keyword and vector search match it, and match them to the tools' parameters",
    )
    spelling: bool = Field(
        default=True,
        description="read a misspelled word of a request as the catalog's word one edit away ('tiem' -> "
        "'time'): a word that is neither English nor the catalog's (tool_selector/resolve/spelling.py)",
    )
    judge: bool = Field(
        default=True,
        description="read the capability judge's verdict on the top tool in the confidence (a small "
        "cross-encoder: can this tool do what the request asks? tool_selector/resolve/judge.py); the "
        "packaged calibration needs it",
    )
    judge_dir: Path | None = Field(default=None, description="None = the packaged capability judge")
    argument_weight: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="with arguments on: what a tool gains (on relative-score fusion's scale, where the best "
        "score is at most 1; scaled to the best score under ranked fusion) when its "
        "parameters take all of the request's specific arguments (URL, e-mail, path, file, time zone, date, "
        "ID, hash)",
    )
    ranker_file: Path | None = Field(
        default=None, description="None = the packaged ranker (written by `tool-selector lab train-ranker`)"
    )
    max_query_chars: int = Field(default=32_000, ge=16, description="longer queries are refused")
    max_file_bytes: int = Field(
        default=DEFAULT_MAX_FILE_BYTES,
        ge=1024,
        description="largest catalog, batch, dataset, queries, calibration or client-config file read",
    )
    candidates: int = Field(default=100, ge=10, description="hits per retriever before fusion")
    fusion: Literal["relative_score", "ranked"] = Field(
        default="relative_score", description="hybrid fusion: Weaviate's relativeScoreFusion or rankedFusion"
    )
    index_check_s: float = Field(
        default=2.0,
        ge=0,
        le=3600,
        description="how often a running gateway or API looks for a newer index (a sync in another process)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING", description="logging to stderr"
    )

    # -- write path: servers, discovery, enrichment --
    servers_file: Path | None = Field(default=None, description="None = <data_dir>/servers.json")
    discovery_concurrency: int = Field(default=8, ge=1, le=64, description="servers discovered at once")
    discovery_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="per server: start + initialize + listing tools"
    )
    enricher: Enricher = Field(
        default="auto", description="auto = claude when an Anthropic API key is set, offline otherwise"
    )
    profile_max_age_days: float = Field(default=7.0, gt=0, description="re-profile after this long")
    write_lock_timeout_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="how long a write (CLI, sync, REST, jobs) waits for another process's write to the "
        "catalog and index before it fails naming the holder (<data_dir>/write.lock)",
    )

    # -- the components, each passed whole to what it configures --
    weaviate: WeaviateSettings = Field(default_factory=WeaviateSettings, description="the Weaviate backend")
    claude: ClaudeSettings = Field(default_factory=ClaudeSettings, description="the Claude enricher")
    gateway: GatewaySettings = Field(default_factory=GatewaySettings, description="the MCP gateway")
    api: ApiSettings = Field(default_factory=ApiSettings, description="the REST API")
    trust: TrustSettings = Field(default_factory=TrustSettings, description="pinned tools and approvals")
    memory: MemorySettings = Field(default_factory=MemorySettings, description="confirmed choices")

    @property
    def db_path(self) -> Path:
        return self.data_dir / "catalog.db"

    @property
    def servers_path(self) -> Path:
        return self.servers_file or self.data_dir / "servers.json"

    @property
    def enrichment_cache_dir(self) -> Path:
        return self.cache_dir / "enrichment"

    @property
    def sync_lock_path(self) -> Path:
        return self.data_dir / "sync.lock"

    @property
    def write_lock_path(self) -> Path:
        return self.data_dir / "write.lock"

    @property
    def reports_path(self) -> Path:
        """The eval reports the console lists (``api.reports_dir``)."""
        return self.api.reports_dir or self.data_dir / "reports"

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @model_validator(mode="after")
    def _check_boosts(self) -> Settings:
        for name, boosts in (
            ("field_boosts", self.field_boosts),
            ("server_field_boosts", self.server_field_boosts),
        ):
            bad = {k: v for k, v in boosts.items() if v < 0}
            if bad:
                raise ValueError(f"{name} must be >= 0, got {bad}")
        return self

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        sources: list[PydanticBaseSettingsSource] = [
            init_settings,
            env_settings,
            _StandardEnvironment(settings_cls),
        ]
        toml_path = os.environ.get("TOOL_SELECTOR_CONFIG_FILE")
        if toml_path and Path(toml_path).exists():  # read with a size limit: it may name /dev/zero
            sources.append(InitSettingsSource(settings_cls, init_kwargs=read_settings_toml(Path(toml_path))))
        return tuple(sources)


def load_settings(**overrides: Any) -> Settings:
    """Build the settings at an entry point; configuration mistakes become a ConfigurationError."""
    from pydantic import ValidationError

    config_file = os.environ.get("TOOL_SELECTOR_CONFIG_FILE")
    if config_file and not Path(config_file).is_file():
        raise ConfigurationError(
            f"TOOL_SELECTOR_CONFIG_FILE points to {config_file!r}, which is not a file.",
            hint="Create the TOML file or unset the variable.",
        )
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}" for err in exc.errors()
        )
        raise ConfigurationError(
            f"Invalid settings: {problems}",
            hint="Fix the TOOL_SELECTOR_* environment variables or the TOML config file.",
        ) from exc
