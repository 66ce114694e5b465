from tests.support.api_helpers import RunningApi


def test_health_needs_no_key_and_resolve_needs_one(api: RunningApi) -> None:
    with api.client(None) as anon, api.client("viewer") as viewer:
        assert anon.get("/health").json()["indexed_tools"] == 52
        refused = anon.post("/api/v1/resolve", json={"query": "git diff"})
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "unauthorized"
        ok = viewer.post("/api/v1/resolve", json={"query": "show the git diff of my repository"})
        assert ok.status_code == 200 and ok.json()["power"] == "git"
