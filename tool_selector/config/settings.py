"""The one settings object, built at the edge (CLI, server entry points) and passed down.

Settings are grouped by the stage or component they configure, one module a group, each group passed
whole to what it configures: ``embedding`` (the model), ``search`` (matching a request against the
index), ``confidence`` (calibration, judge, tier lines), ``sync`` (discovery, profiling, enrichment),
``weaviate``, ``claude``, ``gateway``, ``api``, ``trust`` and ``memory``. What every stage shares sits at
the top: where data lives, the backend, file and lock limits, logging.

Sources, highest first: keyword arguments, environment (``TOOL_SELECTOR_*``; a group's field as
``TOOL_SELECTOR_SEARCH__ALPHA``), the standard names of the services' own SDKs (``WEAVIATE_URL``,
``ANTHROPIC_API_KEY``, ...), the TOML file named by ``TOOL_SELECTOR_CONFIG_FILE`` (``[search]``
tables), defaults. ``env_names`` lists every name a setting is read from.

Names before the grouping (``TOOL_SELECTOR_ALPHA``, a top-level ``alpha`` in the TOML file or as a
keyword) are still read, as the grouped setting they became (``RENAMED``), each with one warning that
names the new name; a grouped name wins over an old one.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, InitSettingsSource, PydanticBaseSettingsSource, SettingsConfigDict

from tool_selector.config.api import ApiSettings
from tool_selector.config.claude import ClaudeSettings
from tool_selector.config.confidence import ConfidenceSettings, TierThresholds
from tool_selector.config.embedding import EmbeddingSettings
from tool_selector.config.gateway import GatewaySettings
from tool_selector.config.memory import MemorySettings
from tool_selector.config.search import DEFAULT_FIELD_BOOSTS, DEFAULT_SERVER_FIELD_BOOSTS, SearchSettings
from tool_selector.config.sync import SyncSettings
from tool_selector.config.trust import TrustSettings
from tool_selector.config.weaviate import WeaviateSettings
from tool_selector.core.choices import Backend
from tool_selector.core.errors import ConfigurationError
from tool_selector.core.files import DEFAULT_MAX_FILE_BYTES, read_settings_toml

__all__ = [
    "DEFAULT_FIELD_BOOSTS",
    "DEFAULT_SERVER_FIELD_BOOSTS",
    "ApiSettings",
    "ClaudeSettings",
    "ConfidenceSettings",
    "EmbeddingSettings",
    "GatewaySettings",
    "MemorySettings",
    "SearchSettings",
    "Settings",
    "SyncSettings",
    "TierThresholds",
    "TrustSettings",
    "WeaviateSettings",
]  # every group, importable from here too

log = logging.getLogger(__name__)


def _default_data_dir() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "tool-selector"


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tool-selector"


GROUPS: dict[str, type[BaseModel]] = {
    "embedding": EmbeddingSettings,
    "search": SearchSettings,
    "confidence": ConfidenceSettings,
    "sync": SyncSettings,
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
# The flat names of the settings that were grouped (issue 43), as environment variables: the old name
# (lower case, without the prefix: a TOML key or keyword) -> (group, field).
RENAMED: dict[str, tuple[str, str]] = {
    old[len(ENV_PREFIX) :].lower(): tuple(new.split(".", 1))  # type: ignore[misc]
    for old, new in {
        "TOOL_SELECTOR_EMBEDDING_MODEL": "embedding.model",
        "TOOL_SELECTOR_EMBEDDING_ENGINE": "embedding.engine",
        "TOOL_SELECTOR_EMBEDDING_THREADS": "embedding.threads",
        "TOOL_SELECTOR_QUERY_BATCH_WINDOW_MS": "embedding.query_batch_window_ms",
        "TOOL_SELECTOR_QUERY_BATCH_MAX": "embedding.query_batch_max",
        "TOOL_SELECTOR_ALPHA": "search.alpha",
        "TOOL_SELECTOR_FUSION": "search.fusion",
        "TOOL_SELECTOR_CANDIDATES": "search.candidates",
        "TOOL_SELECTOR_FIELD_BOOSTS": "search.field_boosts",
        "TOOL_SELECTOR_SERVER_FIELD_BOOSTS": "search.server_field_boosts",
        "TOOL_SELECTOR_ANN_MIN_DOCUMENTS": "search.ann_min_documents",
        "TOOL_SELECTOR_ARGUMENTS": "search.arguments",
        "TOOL_SELECTOR_ARGUMENT_WEIGHT": "search.argument_weight",
        "TOOL_SELECTOR_SPELLING": "search.spelling",
        "TOOL_SELECTOR_RERANK": "search.rerank",
        "TOOL_SELECTOR_RANKER_FILE": "search.ranker_file",
        "TOOL_SELECTOR_MAX_QUERY_CHARS": "search.max_query_chars",
        "TOOL_SELECTOR_THRESHOLDS": "confidence.thresholds",
        "TOOL_SELECTOR_CALIBRATION_FILE": "confidence.calibration_file",
        "TOOL_SELECTOR_JUDGE": "confidence.judge",
        "TOOL_SELECTOR_JUDGE_DIR": "confidence.judge_dir",
        "TOOL_SELECTOR_ENRICHER": "sync.enricher",
        "TOOL_SELECTOR_DISCOVERY_CONCURRENCY": "sync.discovery_concurrency",
        "TOOL_SELECTOR_DISCOVERY_TIMEOUT_S": "sync.discovery_timeout_s",
        "TOOL_SELECTOR_PROFILE_MAX_AGE_DAYS": "sync.profile_max_age_days",
    }.items()
}
_warned: set[tuple[str, str]] = set()


def env_names(group: str | None, field: str) -> list[str]:
    """Every environment variable a setting is read from, highest priority first."""
    if group is None:
        return [f"{ENV_PREFIX}{field}".upper()]
    names = [f"{ENV_PREFIX}{group}__{field}".upper()]
    if (group, field) in _BARE_ENV:
        names.append(_BARE_ENV[(group, field)])
    names += [f"{ENV_PREFIX}{old}".upper() for old, new in RENAMED.items() if new == (group, field)]
    return names


def _renamed(old: str, where: str) -> tuple[str, str]:
    group, field = RENAMED[old]
    if (old, where) not in _warned:
        _warned.add((old, where))
        log.warning(
            "%s is the old name of the setting %s.%s; it is read for now: rename it to %s",
            old if where != "environment" else f"{ENV_PREFIX}{old}".upper(),
            group,
            field,
            f"{ENV_PREFIX}{group}__{field}".upper()
            if where == "environment"
            else f"{group}.{field} ({where})",
        )
    return group, field


def regroup(values: dict[str, Any], where: str) -> dict[str, Any]:
    """``values`` (keywords or a TOML file's keys) with the old flat names moved into their groups; a
    name given in its group too keeps the grouped value."""
    out = {k: v for k, v in values.items() if k not in RENAMED}
    for old, value in values.items():
        if old in RENAMED:
            group, field = _renamed(old, where)
            section = out.get(group)
            section = dict(section) if isinstance(section, dict) else {} if section is None else section
            if isinstance(section, dict):
                section.setdefault(field, value)
                out[group] = section
    return out


class _Regrouped(PydanticBaseSettingsSource):
    """Another source's values with the old flat names moved into their groups (see ``regroup``)."""

    def __init__(self, settings_cls: type[BaseSettings], inner: PydanticBaseSettingsSource, where: str):
        super().__init__(settings_cls)
        self.inner, self.where = inner, where

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads the inner source whole

    def __call__(self) -> dict[str, Any]:
        return regroup(self.inner(), self.where)


class _OldEnvironment(PydanticBaseSettingsSource):
    """The old flat environment names (``TOOL_SELECTOR_ALPHA``, ``TOOL_SELECTOR_THRESHOLDS__ACTIVATED``), read
    as the grouped settings they became, below the grouped names."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {}
        environ = {k.upper(): v for k, v in os.environ.items()}
        for old in RENAMED:
            name = f"{ENV_PREFIX}{old}".upper()
            nested = {k[len(name) + 2 :].lower(): v for k, v in environ.items() if k.startswith(name + "__")}
            if name not in environ and not nested:
                continue
            group, field = _renamed(old, "environment")
            annotation = GROUPS[group].model_fields[field].annotation
            complex_value = annotation is not None and (
                getattr(annotation, "__origin__", None) is dict
                or (isinstance(annotation, type) and issubclass(annotation, BaseModel))
            )
            value: Any = environ.get(name)
            if value is not None and complex_value:
                try:
                    value = json.loads(value)
                except json.JSONDecodeError as exc:
                    raise ConfigurationError(
                        f"{name} is not JSON ({exc}).",
                        hint=f"Set {ENV_PREFIX}{group.upper()}__{field.upper()} to a JSON object instead.",
                    ) from exc
            if nested:
                value = {**(value if isinstance(value, dict) else {}), **nested}
            found.setdefault(group, {})[field] = value
        return found


class _StandardEnvironment(PydanticBaseSettingsSource):
    """Reads the grouped settings from the standard names of the services' SDKs (see ``env_names``)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False  # unused: __call__ reads every group at once

    def __call__(self) -> dict[str, Any]:
        found: dict[str, dict[str, Any]] = {}
        environ = {k.upper(): v for k, v in os.environ.items()}
        for (group, field), name in _BARE_ENV.items():
            if name in environ:
                found.setdefault(group, {})[field] = environ[name]
        return found


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=ENV_PREFIX,
        env_nested_delimiter="__",
        extra="forbid",
        validate_default=True,
        populate_by_name=True,
    )

    # -- what every stage shares: where data lives, limits, logging --
    data_dir: Path = Field(default_factory=_default_data_dir, description="catalog database and index")
    cache_dir: Path = Field(default_factory=_default_cache_dir, description="model exports, eval indexes")
    servers_file: Path | None = Field(default=None, description="None = <data_dir>/servers.json")
    backend: Backend = Field(default="embedded", description="embedded (a folder on disk) or weaviate")
    max_file_bytes: int = Field(
        default=DEFAULT_MAX_FILE_BYTES,
        ge=1024,
        description="largest catalog, batch, dataset, queries, calibration or client-config file read",
    )
    index_check_s: float = Field(
        default=2.0,
        ge=0,
        le=3600,
        description="how often a running gateway or API looks for a newer index (a sync in another process)",
    )
    write_lock_timeout_s: float = Field(
        default=30.0,
        ge=0,
        le=3600,
        description="how long a write (CLI, sync, REST, jobs) waits for another process's write to the "
        "catalog and index before it fails naming the holder (<data_dir>/write.lock)",
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="WARNING", description="logging to stderr"
    )

    # -- the stages and components, each passed whole to what it configures --
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings, description="the embedder")
    search: SearchSettings = Field(default_factory=SearchSettings, description="matching a request")
    confidence: ConfidenceSettings = Field(
        default_factory=ConfidenceSettings, description="an answer's confidence and tier"
    )
    sync: SyncSettings = Field(default_factory=SyncSettings, description="discovery and enrichment")
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

    def changed(self, group: str, **fields: Any) -> Settings:
        """A copy with some fields of one group changed, validated (``settings.changed("search",
        rerank=False)``); the groups are frozen."""
        model = GROUPS[group]
        current: BaseModel = getattr(self, group)
        return self.model_copy(update={group: model.model_validate({**dict(current), **fields})})

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
            _Regrouped(settings_cls, init_settings, "keyword"),
            env_settings,
            _OldEnvironment(settings_cls),
            _StandardEnvironment(settings_cls),
        ]
        toml_path = os.environ.get("TOOL_SELECTOR_CONFIG_FILE")
        if toml_path and Path(toml_path).exists():  # read with a size limit: it may name /dev/zero
            toml = InitSettingsSource(settings_cls, init_kwargs=read_settings_toml(Path(toml_path)))
            sources.append(_Regrouped(settings_cls, toml, "settings file"))
        return tuple(sources)


def _named(loc: tuple[int | str, ...]) -> str:
    """A setting as an error names it: ``search.alpha (TOOL_SELECTOR_SEARCH__ALPHA)``."""
    dotted = ".".join(str(p) for p in loc)
    if not dotted:
        return "settings"
    return f"{dotted} ({ENV_PREFIX}{'__'.join(str(p) for p in loc).upper()})"


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
        problems = "; ".join(f"{_named(err['loc'])}: {err['msg']}" for err in exc.errors())
        raise ConfigurationError(
            f"Invalid settings: {problems}",
            hint="Fix the TOOL_SELECTOR_* environment variables or the TOML config file.",
        ) from exc
