"""The one settings object, built at the edge (CLI, server entry points) and passed down.

Sources, highest first: keyword arguments, environment (``TOOL_SELECTOR_*``; nested keys with ``__``),
the TOML file named by ``TOOL_SELECTOR_CONFIG_FILE`` (or passed as ``config_file``), defaults.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, Field, SecretStr, model_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from tool_selector.errors import ConfigurationError

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


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tool-selector"


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tool-selector"


class TierThresholds(BaseModel):
    """The router's tier lines (lower bounds, inclusive), on two probabilities (tool_selector/routing.py):
    ``activated`` on P(the top power is right); ``multiple_matches`` and ``weak_matches`` on P(a right
    power is among the top three)."""

    activated: float = 0.85
    multiple_matches: float = 0.7
    weak_matches: float = 0.1

    @model_validator(mode="after")
    def _ordered(self) -> TierThresholds:
        if not (0.0 <= self.weak_matches <= self.multiple_matches <= 1.0 and 0.0 <= self.activated <= 1.0):
            raise ValueError(
                "tier thresholds must lie within 0..1 and satisfy weak_matches <= multiple_matches"
            )
        return self


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="TOOL_SELECTOR_",
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        populate_by_name=True,
    )

    data_dir: Path = Field(default_factory=_default_data_dir, description="catalog database and index")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="model exports, eval indexes")
    backend: Literal["embedded", "weaviate"] = "embedded"
    embedding_model: Literal["all-MiniLM-L6-v2"] = "all-MiniLM-L6-v2"
    embedding_engine: Literal["onnx", "torch"] = "onnx"
    embedding_threads: int = Field(default=2, ge=1, le=64)
    alpha: float = Field(default=0.5, ge=0.0, le=1.0, description="0 = keyword only, 1 = vector only")
    field_boosts: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_FIELD_BOOSTS))
    thresholds: TierThresholds = Field(default_factory=TierThresholds)
    calibration_file: Path | None = Field(default=None, description="None = the packaged calibration")
    max_query_chars: int = Field(default=32_000, ge=16, description="longer queries are refused")
    candidates: int = Field(default=100, ge=10, description="hits per retriever before fusion")
    fusion: Literal["relative_score", "ranked"] = Field(
        default="relative_score", description="hybrid fusion: Weaviate's relativeScoreFusion or rankedFusion"
    )
    log_level: str = "WARNING"

    # -- the Weaviate backend (issue 6); used when backend = "weaviate" --
    weaviate_url: str = Field(
        default="http://localhost:8080",
        validation_alias=AliasChoices("TOOL_SELECTOR_WEAVIATE_URL", "WEAVIATE_URL"),
        description="Weaviate's HTTP address (REST)",
    )
    weaviate_grpc_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TOOL_SELECTOR_WEAVIATE_GRPC_URL", "WEAVIATE_GRPC_URL"),
        description="Weaviate's gRPC address; None = the HTTP host on port 50051",
    )
    weaviate_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TOOL_SELECTOR_WEAVIATE_API_KEY", "WEAVIATE_API_KEY")
    )
    weaviate_collection: str = Field(
        default="Tool", pattern=r"^[A-Z][A-Za-z0-9_]*$", description="collection (class) name"
    )
    weaviate_connect_timeout_s: float = Field(
        default=5.0, gt=0, le=120, description="connect and health check"
    )
    weaviate_query_timeout_s: float = Field(default=10.0, gt=0, le=600, description="one search or read")
    weaviate_insert_timeout_s: float = Field(default=60.0, gt=0, le=3600, description="one batch write")
    weaviate_max_attempts: int = Field(
        default=3, ge=1, le=10, description="tries on transient failures (unreachable, 502-504, timeouts)"
    )

    # -- write path: servers, discovery, enrichment (issue 3) --
    servers_file: Path | None = Field(default=None, description="None = <data_dir>/servers.json")
    discovery_concurrency: int = Field(default=8, ge=1, le=64, description="servers discovered at once")
    discovery_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="per server: start + initialize + listing tools"
    )
    enricher: Literal["auto", "offline", "claude", "none"] = Field(
        default="auto", description="auto = claude when an Anthropic API key is set, offline otherwise"
    )
    anthropic_api_key: SecretStr | None = Field(
        default=None, validation_alias=AliasChoices("TOOL_SELECTOR_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
    )
    anthropic_base_url: str | None = Field(
        default=None,
        validation_alias=AliasChoices("TOOL_SELECTOR_ANTHROPIC_BASE_URL", "ANTHROPIC_BASE_URL"),
        description="None = https://api.anthropic.com",
    )
    claude_model: str = "claude-haiku-4-5"
    claude_timeout_s: float = Field(default=60.0, gt=0, le=600)
    claude_max_attempts: int = Field(default=4, ge=1, le=10, description="tries on 429, 5xx and timeouts")
    claude_concurrency: int = Field(default=4, ge=1, le=32)
    profile_max_age_days: float = Field(default=7.0, gt=0, description="re-profile after this long")

    # -- the MCP gateway (issue 4) --
    gateway_max_active: int = Field(default=5, ge=1, le=100, description="upstream servers running at once")
    gateway_idle_timeout_s: float = Field(
        default=900.0, gt=0, description="an upstream unused this long is stopped"
    )
    gateway_start_timeout_s: float = Field(
        default=30.0, gt=0, le=600, description="start + initialize + list tools, per activation"
    )
    gateway_call_timeout_s: float = Field(default=120.0, gt=0, le=3600, description="per proxied tool call")
    gateway_stop_timeout_s: float = Field(
        default=6.0, gt=0, le=60, description="how long stopping one upstream may take"
    )

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
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @model_validator(mode="after")
    def _check_boosts(self) -> Settings:
        bad = {k: v for k, v in self.field_boosts.items() if v < 0}
        if bad:
            raise ValueError(f"field boosts must be >= 0, got {bad}")
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
        sources: list[PydanticBaseSettingsSource] = [init_settings, env_settings]
        toml_path = os.environ.get("TOOL_SELECTOR_CONFIG_FILE")
        if toml_path:
            sources.append(TomlConfigSettingsSource(settings_cls, toml_file=Path(toml_path)))
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
