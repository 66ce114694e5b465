"""The small catalog and the live-Weaviate settings shared by the backend tests (the contract suite,
the embedded and the Weaviate backends): documents with HashingEmbedder vectors, so that what is
under test is the backend and not the model's semantics."""

from __future__ import annotations

import os

from tool_selector.config.settings import DEFAULT_FIELD_BOOSTS, DEFAULT_SERVER_FIELD_BOOSTS
from tool_selector.core.models import ToolDocument
from tool_selector.embedding.embedders import HashingEmbedder
from tool_selector.search.backend import SearchQuery

EMBEDDER = HashingEmbedder(dim=64)
# read at import, before the per-test environment isolation: a developer's live Weaviate
LIVE_URL = os.environ.get("WEAVIATE_URL")
LIVE_GRPC_URL = os.environ.get("WEAVIATE_GRPC_URL")
LIVE_API_KEY = os.environ.get("WEAVIATE_API_KEY")
LIVE_SKIP = (
    "WEAVIATE_URL is not set, so the contract suite did not run against a live Weaviate "
    "(set WEAVIATE_URL=http://localhost:8080 after `docker compose -f docker-compose.weaviate.yml up -d`)"
)


def doc(server: str, name: str, description: str, *, text_hash: str | None = None) -> ToolDocument:
    words = name.replace("_", " ")
    return ToolDocument(
        id=f"{server}::{name}",
        server=server,
        name=name,
        fields={"name": words, "description": description, "server_name": server},
        text_hash=text_hash or f"hash-of-{server}-{name}-{description}",
        vector=EMBEDDER.embed_query(f"{words} ({server}): {description}").tolist(),
    )


CATALOG = [
    doc("Code Host", "create_issue", "Open a new issue in a repository"),
    doc("Code Host", "list_issues", "List the issues of a repository with filters"),
    doc("Code Host", "close_issue", "Close an issue by number"),
    doc("Notes", "create_page", "Create a page in a notebook"),
    doc("Weather", "get_forecast", "Daily weather forecast for a city"),
    doc("Clock", "current_time", "The current time in a time zone"),
]


def query(text: str, **kwargs: object) -> SearchQuery:
    kwargs.setdefault("field_boosts", DEFAULT_FIELD_BOOSTS)
    return SearchQuery(text=text, vector=EMBEDDER.embed_query(text), **kwargs)  # type: ignore[arg-type]


def server_doc(
    name: str, description: str, tools: list[str], *, text_hash: str | None = None
) -> ToolDocument:
    """A server document as the indexer makes one (a few of its fields), with a HashingEmbedder vector."""
    tool_names = [t.replace("_", " ") for t in tools]
    return ToolDocument(
        id=name,
        server=name,
        name=name,
        fields={"server_name": name, "server_description": description, "tool_names": tool_names},
        text_hash=text_hash or f"hash-of-server-{name}-{description}",
        vector=EMBEDDER.embed_query(f"{name}: {description} Tools: {', '.join(tool_names)}").tolist(),
        kind="server",
    )


# the servers of CATALOG; their descriptions use words none of the tool documents has
SERVERS = [
    server_doc("Code Host", "Hosting of git repositories and pull requests", ["create_issue", "list_issues"]),
    server_doc("Notes", "A personal notebook", ["create_page"]),
    server_doc("Weather", "Meteorological service with rain radar", ["get_forecast"]),
    server_doc("Clock", "Zones and calendars", ["current_time"]),
]


def server_query(text: str, **kwargs: object) -> SearchQuery:
    kwargs.setdefault("field_boosts", DEFAULT_SERVER_FIELD_BOOSTS)
    return query(text, target="servers", **kwargs)
