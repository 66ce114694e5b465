"""A catalog and index as a tool-selector older than the naming rule (tool_selector/core/names.py) left them:
names with ``::`` stored unchecked, and their documents in the search index."""

from __future__ import annotations

from typing import Any

from services.root.container import Container
from services.write.indexing import build_index
from tool_selector.core.models import CreationMethod, ServerSpec, ToolSpec
from tool_selector.core.names import name_problem
from tool_selector.index.build import build_document, embedding_text


def store_as_older_version(
    container: Container, servers: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> None:
    """Store ``servers`` and ``tools`` (benchmark-format dicts) without checking their names, index the
    catalog, then write into the index the documents of the tools whose names break the rule, as an
    older version did (the current one leaves them out)."""
    server_specs = [
        ServerSpec.model_construct(name=s["name"], description=s.get("description", ""), metadata={})
        for s in servers
    ]
    tool_specs = [
        ToolSpec.model_construct(
            server=t["server"],
            name=t["name"],
            description=t.get("description", ""),
            input_schema={},
            annotations={},
            output_schema=None,
        )
        for t in tools
    ]
    container.writer.import_catalog(
        server_specs, tool_specs, creation_method=CreationMethod.IMPORTED, actor="older", trust="pin"
    )
    build_index(container)
    for spec in tool_specs:
        if name_problem(spec.name, "tool") is None:
            continue
        stored, server = container.store.get_tool(spec.id), container.store.get_server(spec.server)
        vector = container.embedder.embed_documents([embedding_text(stored, server)])[0]
        container.backend.upsert(
            [build_document(stored, server).model_copy(update={"vector": vector.tolist()})]
        )
