"""The MCP gateway meeting a damaged search index while it runs, in-process (the mcp Client against the
server object ``tool-selector serve`` builds): resolve_intent answers with an error that names the
damaged file, tells the agent what to do and that it cannot work around it; after the operator's
rebuild it answers again, without a restart. (At start the gateway refuses a damaged index, as
``serve`` does: tests/routes/cli/test_cli_damaged_files.py.) Indexed without the model
(tests/support/index_damage.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.root.container import Container
from services.write.catalog import import_catalog_dir
from services.write.indexing import rebuild_index, refresh_index
from tests.support.catalogs import write_catalog
from tests.support.gateway_helpers import inprocess_gateway
from tests.support.index_damage import damage, indexed_without_the_model, stand_in
from tool_selector.config.settings import Settings

pytestmark = pytest.mark.anyio

TOOLS = {"weather": ["get_forecast", "get_alerts"], "files": ["read_file", "write_file"]}
QUERY = {"query": "weather forecast for Paris"}


async def test_resolve_intent_on_an_index_damaged_meanwhile_says_the_operator_must_rebuild(
    tmp_path: Path,
) -> None:
    data = indexed_without_the_model(tmp_path, TOOLS)
    settings = Settings(data_dir=data, cache_dir=tmp_path / "cache", index_check_s=0)
    async with inprocess_gateway(settings, stand_in()) as client:
        assert not (await client.call_tool("resolve_intent", QUERY)).is_error
        with Container(settings, embedder=stand_in()) as other:  # a sync in another process...
            grown = write_catalog(tmp_path / "grown", {**TOOLS, "files": [*TOOLS["files"], "move_file"]})
            import_catalog_dir(other, grown, approve=True, actor="test")
            refresh_index(other)
            other.backend.compact()  # a new full generation (a write alone adds a delta on the old one)
            hit = damage(data / "index", "garbage meta.json")  # ...whose new index is then damaged

            refused = await client.call_tool("resolve_intent", QUERY)
            assert refused.is_error and refused.structured_content is not None
            assert refused.structured_content["error"] == "index_damaged"
            assert refused.structured_content["can_proceed"] is False
            text = refused.structured_content["message"]
            assert f"The search index is damaged: {hit} is not valid JSON" in text
            assert "Next step: Tell the user the operator must run `tool-selector index rebuild`" in text

            rebuild_index(other)
        assert not (await client.call_tool("resolve_intent", QUERY)).is_error
