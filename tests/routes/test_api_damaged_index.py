"""The REST API over a damaged search index (a real uvicorn server): /health says which file is damaged,
resolve answers 503 naming the repair, and once another process has rebuilt the index resolve answers
again without a restart. Indexed without the model (tests/support/index_damage.py)."""

from __future__ import annotations

from pathlib import Path

from services.write.indexing import rebuild_index
from tests.support.api_helpers import running_api
from tests.support.index_damage import damage, indexed_without_the_model, stand_in
from tool_selector.config.settings import Settings

TOOLS = {"weather": ["get_forecast", "get_alerts"], "files": ["read_file", "write_file"]}


def test_a_damaged_index_is_reported_by_health_and_refused_by_resolve_until_rebuilt(tmp_path: Path) -> None:
    template = indexed_without_the_model(tmp_path / "template", TOOLS)
    hit = damage(template / "index", "truncated vectors.npy").relative_to(template)
    settings = Settings(data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache")
    with running_api(template, tmp_path / "api", settings, stand_in()) as api:
        served = api.settings.data_dir / hit
        with api.client(None) as anon:
            health = anon.get("/health").json()
        assert health["status"] == "degraded"
        assert health["backend_error"].startswith(
            f"IndexDamagedError: The search index is damaged: {served} "
        )
        assert "tool-selector index rebuild" in health["backend_error"]

        with api.client("viewer") as viewer:
            refused = viewer.post("/api/v1/resolve", json={"query": "weather forecast"})
            assert refused.status_code == 503
            error = refused.json()["error"]
            assert (error["code"], error["details"]["path"]) == ("index_damaged", str(served))
            assert error["hint"].startswith("Run `tool-selector index rebuild`")
            assert "tool-selector index rebuild" in error["next_step"]

            with api.container() as operator:  # `tool-selector index rebuild` in another process
                rebuild_index(operator)
            answered = viewer.post("/api/v1/resolve", json={"query": "weather forecast"})
            assert answered.status_code == 200, answered.text
        with api.client(None) as anon:
            assert anon.get("/health").json()["indexed_tools"] == 4
