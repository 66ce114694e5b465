"""Stage 1, profile: a server and its tools -> the server profile, cached and stored by profile hash.

A server is re-profiled when its profile hash changes (its name, description or any tool changed),
when the profiler, model or prompt version changes, or when the stored profile is older than the
maximum age (7 days by default). Claude's answers are cached by profile hash + prompt version + model
(and expire with the same maximum age, so a re-profile after a week really asks again).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta

from pydantic import BaseModel

from semantic_enrichment.base import ProfileDraft, Profiler
from semantic_enrichment.cache import EnrichmentCache, cache_key
from tool_selector.core import hashing
from tool_selector.core.errors import LLMError
from tool_selector.core.models import ServerProfile, ServerSpec, ToolSpec

logger = logging.getLogger(__name__)


def compute_profile_hash(
    server: ServerSpec, tools: Sequence[ToolSpec], tool_hashes: Mapping[str, str] | None = None
) -> str:
    """sha256 over the server's name and description and its sorted tool hashes (``tool_hashes``, by
    tool id: their ``compute_hash()`` when the caller has them already)."""
    known = tool_hashes or {}
    return hashing.profile_hash(
        server.name, server.description, (known.get(t.id) or t.compute_hash() for t in tools)
    )


def needs_profile(
    stored: ServerProfile | None, profile_hash: str, profiler: Profiler, *, now: datetime, max_age: timedelta
) -> bool:
    if stored is None:
        return True
    same_inputs = (stored.profile_hash, stored.profiler, stored.model, stored.prompt_version) == (
        profile_hash,
        profiler.kind,
        profiler.model,
        profiler.prompt_version,
    )
    return not same_inputs or now - stored.last_updated > max_age


class ProfileOutcome(BaseModel):
    profile: ServerProfile
    cache_hit: bool = False
    fell_back: bool = False
    error: str = ""


def _record(
    server: ServerSpec, draft: ProfileDraft, profile_hash: str, profiler: Profiler, now: datetime
) -> ServerProfile:
    return ServerProfile(
        server_name=server.name,
        profile_hash=profile_hash,
        last_updated=now,
        profiler=profiler.kind,
        model=profiler.model,
        prompt_version=profiler.prompt_version,
        **draft.model_dump(),
    )


def profile_server(
    server: ServerSpec,
    tools: Sequence[ToolSpec],
    profiler: Profiler,
    cache: EnrichmentCache,
    *,
    now: datetime,
    max_age: timedelta,
    fallback: Profiler | None = None,
    refresh: bool = False,
    tool_hashes: Mapping[str, str] | None = None,
) -> ProfileOutcome:
    """Profile one server. When the profiler fails (LLMError) and a fallback is given, the fallback's
    profile is used and the failure is reported; the cache only ever receives validated profiles.
    ``refresh`` skips the cache (a forced re-profile) and stores the new profile in it;
    ``tool_hashes`` as in ``compute_profile_hash``."""
    profile_hash = compute_profile_hash(server, tools, tool_hashes)
    key = cache_key("profile", profile_hash, profiler.kind, profiler.model, profiler.prompt_version)
    cached = None if refresh else cache.get(key, ProfileDraft)
    if cached is not None:
        return ProfileOutcome(profile=_record(server, cached, profile_hash, profiler, now), cache_hit=True)
    try:
        draft = profiler.profile(server, tools)
    except LLMError as exc:
        if fallback is None:
            raise
        logger.warning(
            "profiling %s with %s failed, using %s: %s", server.name, profiler.kind, fallback.kind, exc
        )
        draft = fallback.profile(server, tools)
        profile = _record(server, draft, profile_hash, fallback, now)
        return ProfileOutcome(profile=profile, fell_back=True, error=str(exc))
    cache.set(key, draft, expire_s=max_age.total_seconds())
    return ProfileOutcome(profile=_record(server, draft, profile_hash, profiler, now))
