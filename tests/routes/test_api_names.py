"""Names and ids through the REST API, over HTTP against a real uvicorn server, the real catalog database
and the real MiniLM model: the naming rule at registration and import, no ghost left in a running API's
search, and job ids an import-only key cannot probe."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from tests.support.api_helpers import RunningApi
from tests.support.legacy_names import store_as_older_version
from tool_selector.config.servers import ServerConfig, ServersFile, save_servers

V1 = "/api/v1"
ZEBRA = "Computes zebra stripes"
BAD_SERVER_NAMES = {
    "NUL": "bad\x00name",
    "newline": "two\nlines",
    "right-to-left override": "evil\u202etxt",
    "zero-width space": "ti\u200bme",
    "separator": "colA::b",
}


def refused(response: httpx.Response, *words: str) -> str:
    assert response.status_code == 422, response.text
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] in ("invalid_input", "catalog_file") and error["hint"]
    for word in words:
        assert word in error["message"], error["message"]
    return str(error["message"])


def server_names(client: httpx.Client) -> set[str]:
    listed = client.get(f"{V1}/servers")
    assert listed.status_code == 200, listed.text
    return {s["name"] for s in listed.json()}


def test_server_names_with_unseen_or_separating_characters_are_refused_at_registration(
    api_trusting: RunningApi,
) -> None:
    with api_trusting.client() as client:
        before = server_names(client)
        for name in BAD_SERVER_NAMES.values():
            refused(client.post(f"{V1}/servers", json={"name": name}), "server name")
        padded = client.post(f"{V1}/servers", json={"name": "  padded  ", "description": "Pads."})
        assert padded.status_code == 201, padded.text
        assert padded.json()["server"]["name"] == "padded"
        assert server_names(client) == before | {"padded"}


def test_a_case_copy_of_a_catalogued_or_configured_server_is_refused_naming_it(
    api_trusting: RunningApi,
) -> None:
    api = api_trusting
    save_servers(
        api.settings.servers_path, ServersFile(mcpServers={"Clock": ServerConfig(command="/bin/true")})
    )
    with api.client() as client:
        assert "time" in server_names(client)
        refused(client.post(f"{V1}/servers", json={"name": "TIME"}), "'time'", "only in case")
        refused(client.post(f"{V1}/servers", json={"name": "clock"}), "'Clock'", "only in case")
        same = client.post(f"{V1}/servers", json={"name": "time"})
        assert same.status_code == 200 and same.json()["outcome"] == "matched"
        csv = client.post(
            f"{V1}/catalog/import", content="server,tool\nTIME,now\n", headers={"content-type": "text/csv"}
        )
        refused(csv, "'time'", "only in case")
        mcp = {"mcpServers": {"CLOCK": {"command": "/bin/true"}}}
        refused(client.post(f"{V1}/catalog/import", json=mcp), "'Clock'", "only in case")
        assert "TIME" not in server_names(client)


def test_a_csv_batch_with_a_bad_server_name_is_refused_whole_listing_each_line(
    api_trusting: RunningApi,
) -> None:
    body = 'server,tool\nfresh,ok\n"bad\x00name",x\n"evil\u202etxt",y\ncolA,"b::t"\n'
    with api_trusting.client() as client:
        before = server_names(client)
        answer = client.post(
            f"{V1}/catalog/import", content=body.encode(), headers={"content-type": "text/csv"}
        )
        refused(answer)
        lines = sorted({p["line"] for p in answer.json()["error"]["problems"]})
        assert lines == [3, 4, 5]
        assert server_names(client) == before


def test_a_tool_id_never_reads_two_ways_and_a_deleted_server_leaves_no_ghost_in_search(
    api_trusting: RunningApi,
) -> None:
    with api_trusting.client() as client:
        assert client.post(f"{V1}/servers", json={"name": "colA"}).status_code == 201
        refused(client.post(f"{V1}/tools", json={"server": "colA", "name": "b::t"}), "contains '::'")
        refused(client.post(f"{V1}/servers", json={"name": "colA::b"}), "contains '::'")
        assert client.post(f"{V1}/servers", json={"name": "s1", "description": "Stripes."}).status_code == 201
        made = client.post(
            f"{V1}/tools",
            json={
                "server": "s1",
                "name": "a.b",
                "description": "Computes zebra stripes",
                "matching_mode": "force_create",
            },
        )
        assert made.status_code == 201, made.text
        found = client.get(f"{V1}/tools/search", params={"q": "zebra stripes"})
        assert found.status_code == 200 and found.json()["tools"][0]["id"] == "s1::a.b"
        deleted = client.delete(f"{V1}/servers/s1", params={"cascade": "true"})
        assert deleted.status_code == 200 and deleted.json()["tools_deleted"] == ["s1::a.b"]
        after = client.get(f"{V1}/tools/search", params={"q": "zebra stripes"})  # the same running API
        assert after.status_code == 200, after.text
        assert all(hit["server"] != "s1" for hit in after.json()["tools"])


def test_a_tool_an_older_version_stored_with_the_separator_is_refused_a_change_but_can_be_deleted(
    api_trusting: RunningApi,
) -> None:
    with api_trusting.container() as container:
        store_as_older_version(
            container, [{"name": "s1"}], [{"server": "s1", "name": "a::b", "description": ZEBRA}]
        )
    path = f"{V1}/tools/{quote('s1::a::b', safe='')}"
    with api_trusting.client() as client:
        assert client.get(path).status_code == 200  # nothing stored is lost
        refused(client.patch(path, json={"description": "Stripes."}), "cannot be changed", "contains '::'")
        assert client.delete(path).status_code == 200


def test_deleting_a_server_whose_tool_an_older_version_indexed_leaves_no_ghost_in_a_running_api(
    api_trusting: RunningApi,
) -> None:
    tools = [{"server": "s1", "name": "a::b", "description": ZEBRA}, {"server": "s1", "name": "plain"}]
    with api_trusting.container() as container:
        store_as_older_version(container, [{"name": "s1", "description": "Stripes."}], tools)
    with api_trusting.client() as client:
        deleted = client.delete(f"{V1}/servers/s1", params={"cascade": "true"})
        assert deleted.status_code == 200, deleted.text
        after = client.get(f"{V1}/tools/search", params={"q": "zebra stripes"})  # the same running API
        assert after.status_code == 200, after.text
        assert all(hit["server"] != "s1" for hit in after.json()["tools"])


@pytest.mark.parametrize("job_id", ["0123456789abcdef", "no-such-job"])
def test_an_import_only_key_is_refused_any_job_it_did_not_start_whether_or_not_it_exists(
    api_trusting: RunningApi, job_id: str
) -> None:
    batch = json.dumps({"servers": [{"name": "weather-api", "description": "Weather."}]})
    json_body = {"content-type": "application/json"}
    with api_trusting.client("only:import") as importer, api_trusting.client("admin") as admin:
        own = importer.post(f"{V1}/catalog/import", content=batch, headers=json_body)
        other = admin.post(f"{V1}/catalog/import", content=batch, headers=json_body)
        assert own.status_code == other.status_code == 202, (own.text, other.text)
        assert importer.get(f"{V1}/jobs/{own.json()['job']['id']}").status_code == 200
        missing = importer.get(f"{V1}/jobs/{job_id}")
        foreign = importer.get(f"{V1}/jobs/{other.json()['job']['id']}")
        assert missing.status_code == foreign.status_code == 403, (missing.text, foreign.text)
        assert missing.json()["error"]["code"] == "forbidden"
        assert missing.json() == foreign.json()  # nothing tells a missing job from another key's
