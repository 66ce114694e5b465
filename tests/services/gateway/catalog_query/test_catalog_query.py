"""catalog_query: structured queries over a snapshot of a real catalog store, enriched offline."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from eval.bench.catalog_query import bench_catalog_query
from services.gateway.catalog_query.filters import QUERY_TYPES
from services.gateway.catalog_query.view import CatalogView
from services.root.container import Container
from services.write.enriching import enrich_catalog
from tool_selector.catalog.store import CatalogStore
from tool_selector.catalog.writer import CatalogWriter
from tool_selector.config.settings import Settings
from tool_selector.core.errors import InvalidInputError, NotFoundError
from tool_selector.core.models import CreationMethod, DiscoveryStatus, ServerSpec, ToolSpec

TRACKER, GIT, WEATHER, MAIL, BARE = (
    "Issue Tracker",
    "Git Tools",
    "Weather Service",
    "Mail Relay",
    "Bare Server",
)
OBJ = {"type": "object"}


def _tool(server: str, name: str, description: str, **props: dict[str, Any]) -> ToolSpec:
    schema = {**OBJ, "properties": props, "required": list(props)[:1]} if props else {}
    return ToolSpec(server=server, name=name, description=description, input_schema=schema)


SERVERS = [
    ServerSpec(
        name=TRACKER,
        description="Track bugs and tasks for software teams.",
        metadata={"categories": ["project-management"]},
    ),
    ServerSpec(
        name=GIT,
        description="Work with local git repositories.",
        metadata={"categories": ["developer-tools"]},
    ),
    ServerSpec(
        name=WEATHER, description="Weather forecasts for any city.", metadata={"categories": ["weather"]}
    ),
    ServerSpec(name=MAIL, description="Send email through SMTP.", metadata={"categories": ["communication"]}),
]
TOOLS = [
    _tool(TRACKER, "create_issue", "Create a new issue in a project.", title={"type": "string"}, body={}),
    _tool(TRACKER, "list_issues", "List the open issues of a project.", project={"type": "string"}),
    _tool(TRACKER, "close_issue", "Close an issue by its number.", number={"type": "integer"}),
    _tool(
        TRACKER,
        "manage_labels",
        "Work with labels.",
        operation={"type": "string", "enum": ["create", "delete"]},
        label={"type": "string"},
    ),
    _tool(GIT, "git_create_branch", "Create a new branch from a base.", branch_name={}, base={}),
    _tool(GIT, "git_log", "Show the commit log.", max_count={"type": "integer"}),
    _tool(WEATHER, "get_forecast", "Get the weather forecast for a city.", city={"type": "string"}),
    _tool(MAIL, "send_email", "Send an email message to one or more recipients.", to={}, subject={}),
]
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def _fill(container: Container) -> None:
    """The catalog above, profiled and enriched by the real offline enricher; then a server with no
    profile yet (imported after the sync) and a failed discovery for the git server."""
    store = container.store
    CatalogWriter(store).import_catalog(SERVERS, TOOLS, actor="test", creation_method=CreationMethod.IMPORTED)
    summary = enrich_catalog(container, container.enrichers("offline"))
    assert summary.tools_enriched == len(TOOLS) and not summary.errors
    bare = ServerSpec(name=BARE, description="Pings hosts.")
    bare_tools = [
        _tool(BARE, "ping_host", "Ping a host."),
        _tool(BARE, "host_info", "Show details of a host."),
    ]
    CatalogWriter(store).import_catalog([bare], bare_tools, actor="test", creation_method=CreationMethod.CLI)
    store.put_discovery(
        [DiscoveryStatus(server=GIT, state="failed", error="spawn git-mcp ENOENT", last_attempt_at=NOW)]
    )


@pytest.fixture(scope="module")
def catalog(tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path) -> Iterator[Container]:
    settings = Settings(data_dir=tmp_path_factory.mktemp("cq-data"), cache_dir=session_cache_dir)
    with Container(settings) as container:
        _fill(container)
        yield container


@pytest.fixture(scope="module")
def view(catalog: Container) -> CatalogView:
    return CatalogView.load(catalog.store)


def _names(answer: dict[str, Any]) -> list[str]:
    return [item["name"] for item in answer["items"]]


# -- servers ------------------------------------------------------------------------------------------


def test_servers_by_keyword_match_the_name_and_categories_and_say_what_they_hold(view: CatalogView) -> None:
    answer = view.query("servers", {"keyword": "GIT"})
    assert _names(answer) == [GIT]
    item = answer["items"][0]
    assert item["tool_count"] == 2 and item["keywords"] == ["developer-tools"]
    assert item["discovery"] == "failed" and item["description"] == "Work with local git repositories."
    assert _names(view.query("servers", {"keyword": "weather"})) == [WEATHER]
    assert _names(view.query("servers", {"keyword": "developer tools"})) == [GIT]


def test_a_server_keyword_matches_word_starts_and_plurals_not_the_middle_of_words(view: CatalogView) -> None:
    assert _names(view.query("servers", {"keyword": "forecasts"})) == [WEATHER]
    assert _names(view.query("servers", {"keyword": "bugs"})) == [TRACKER]
    assert view.query("servers", {"keyword": "eather"})["total"] == 0


def test_servers_by_domain_match_the_profile_domain_and_categories_ignoring_case(view: CatalogView) -> None:
    assert _names(view.query("servers", {"domain": "Project Management"})) == [TRACKER]
    assert _names(view.query("servers", {"domain": "project-manage"})) == [TRACKER]
    assert _names(view.query("servers", {"domain": "communication", "keyword": "email"})) == [MAIL]
    assert view.query("servers", {"domain": "communication", "keyword": "git"})["total"] == 0


def test_the_limit_caps_the_items_and_total_counts_every_match(view: CatalogView) -> None:
    answer = view.query("servers", {"limit": 2})
    assert answer["total"] == 5 and answer["returned"] == 2 and len(answer["items"]) == 2
    assert "Showing 2 of 5" in answer["message"]
    assert view.query("servers", {})["returned"] == 5
    assert view.query("servers", {"limit": 500})["limit"] == 100


def test_no_matching_server_says_how_to_broaden_the_search(view: CatalogView) -> None:
    answer = view.query("servers", {"keyword": "blockchain"})
    assert answer["total"] == 0 and answer["items"] == []
    assert 'catalog_query("servers", {})' in answer["message"]


# -- tools ----------------------------------------------------------------------------------------------


def test_tools_by_action_and_entity_come_from_the_enrichment_pairs(view: CatalogView) -> None:
    answer = view.query("tools", {"action": "create", "entity": "issue"})
    assert _names(answer)[0] == "create_issue"
    first = answer["items"][0]
    assert first["server"] == TRACKER and first["match"] == "action_entities"
    assert "create issue" in first["action_entities"]
    assert first["input_properties"] == ["body", "title"] and first["required"] == ["title"]


def test_tools_show_the_original_description_never_the_enriched_text(
    view: CatalogView, catalog: Container
) -> None:
    answer = view.query("tools", {"server": TRACKER})
    enriched = catalog.store.get_enrichments()
    for item in answer["items"]:
        assert item["description"] == next(t.description for t in TOOLS if t.name == item["name"])
        assert item["description"] != enriched[f"{TRACKER}::{item['name']}"].enhanced_description


def test_verb_forms_plurals_and_synonyms_match_the_same_tool(view: CatalogView) -> None:
    assert _names(view.query("tools", {"action": "creates", "entity": "Issues"}))[0] == "create_issue"
    assert _names(view.query("tools", {"action": "add", "entity": "issue"}))[0] == "create_issue"
    assert _names(view.query("tools", {"action": "resolve", "entity": "issue"})) == ["close_issue"]


def test_an_action_matches_the_verb_of_a_pair_not_its_object(view: CatalogView) -> None:
    answer = view.query("tools", {"server": TRACKER, "action": "issue"})
    assert answer["total"] == 3 and {item["match"] for item in answer["items"]} == {"name"}


def test_a_schema_operation_enum_makes_a_tool_match_each_of_its_actions(view: CatalogView) -> None:
    answer = view.query("tools", {"server": TRACKER, "action": "delete", "entity": "label"})
    assert _names(answer) == ["manage_labels"]


def test_tools_by_entity_alone_or_by_action_alone(view: CatalogView) -> None:
    assert set(_names(view.query("tools", {"entity": "issue"}))) == {
        "create_issue",
        "list_issues",
        "close_issue",
    }
    created = _names(view.query("tools", {"action": "create"}))
    assert {"create_issue", "git_create_branch", "manage_labels"} <= set(created)
    assert "get_forecast" not in created


def test_a_tool_without_enrichment_still_matches_by_its_name(view: CatalogView) -> None:
    answer = view.query("tools", {"action": "ping", "entity": "host"})
    assert _names(answer) == ["ping_host"] and answer["items"][0]["match"] == "name"
    assert answer["items"][0]["action_entities"] == []


def test_a_name_pattern_is_a_case_insensitive_glob_and_plain_text_matches_anywhere(view: CatalogView) -> None:
    assert _names(view.query("tools", {"name_pattern": "*ISSUE*"})) == [
        "close_issue",
        "create_issue",
        "list_issues",
    ]
    assert _names(view.query("tools", {"name_pattern": "git_*"})) == ["git_create_branch", "git_log"]
    assert _names(view.query("tools", {"name_pattern": "branch"})) == ["git_create_branch"]
    assert view.query("tools", {"name_pattern": "branch*"})["total"] == 0


def test_tools_of_a_server_are_listed_with_total_and_limit(view: CatalogView) -> None:
    answer = view.query("tools", {"server": TRACKER, "limit": 3})
    assert answer["total"] == 4 and answer["returned"] == 3
    assert all(item["server"] == TRACKER and "match" not in item for item in answer["items"])


def test_server_names_are_found_ignoring_case(view: CatalogView) -> None:
    assert view.query("tools", {"server": "issue tracker"})["total"] == 4


def test_an_unknown_server_is_not_found_and_the_closest_names_are_listed(view: CatalogView) -> None:
    with pytest.raises(NotFoundError) as caught:
        view.query("tools", {"server": "Issue Trakcer"})
    assert "Issue Tracker" in caught.value.message and caught.value.details["closest"][0] == TRACKER
    assert "catalog_query" in caught.value.hint
    with pytest.raises(NotFoundError) as partial:
        view.query("profile", {"server": "git"})
    assert partial.value.details["closest"] == [GIT]


# -- check_tool -----------------------------------------------------------------------------------------


def test_check_tool_says_which_tool_to_call_when_the_server_has_one(view: CatalogView) -> None:
    answer = view.query("check_tool", {"server": TRACKER, "action": "create", "entity": "issue"})
    assert answer["has_tool"] is True
    assert answer["tools"][0] == {
        "name": "create_issue",
        "description": "Create a new issue in a project.",
        "match": "action_entities",
    }
    assert (
        answer["message"]
        == "Call activate_power(\"Issue Tracker\") and then Issue Tracker's tool 'create_issue'."
    )


def test_check_tool_names_other_servers_that_have_the_tool(view: CatalogView) -> None:
    answer = view.query("check_tool", {"server": TRACKER, "action": "create", "entity": "branch"})
    assert answer["has_tool"] is False and answer["tools"] == []
    assert answer["other_servers"] == [{"server": GIT, "tool": "git_create_branch"}]
    assert answer["message"].startswith("Issue Tracker has no tool to create branch.")
    assert "'Git Tools' (tool 'git_create_branch')" in answer["message"]


def test_check_tool_for_something_nobody_has_suggests_searching_servers(view: CatalogView) -> None:
    answer = view.query("check_tool", {"server": GIT, "action": "delete", "entity": "branch"})
    assert answer["has_tool"] is False and answer["other_servers"] == []
    assert 'catalog_query("servers", {"keyword": "branch"})' in answer["message"]


def test_a_tool_whose_description_alone_fits_is_a_maybe_and_better_servers_are_named(
    view: CatalogView,
) -> None:
    listed = view.query("tools", {"server": BARE, "action": "get", "entity": "host"})
    assert _names(listed) == ["host_info"] and listed["items"][0]["match"] == "description"
    answer = view.query("check_tool", {"server": BARE, "action": "get", "entity": "host"})
    assert answer["has_tool"] is False
    assert [(t["name"], t["match"]) for t in answer["tools"]] == [("host_info", "description")]
    assert "'host_info' may do it" in answer["message"] and "read that description" in answer["message"]
    forecast = view.query("check_tool", {"server": BARE, "action": "get", "entity": "forecast"})
    assert forecast["other_servers"] == [{"server": WEATHER, "tool": "get_forecast"}]


def test_check_tool_with_an_action_only(view: CatalogView) -> None:
    answer = view.query("check_tool", {"server": MAIL, "action": "send"})
    assert answer["has_tool"] is True and answer["entity"] is None
    assert [t["name"] for t in answer["tools"]] == ["send_email"]


# -- profile ---------------------------------------------------------------------------------------------


def test_profile_returns_the_stored_profile_tools_and_discovery(
    view: CatalogView, catalog: Container
) -> None:
    answer = view.query("profile", {"server": GIT})
    stored = catalog.store.get_profile(GIT)
    assert stored is not None
    assert answer["profile"] == stored.model_dump(mode="json")
    assert answer["profile_missing"] is False and answer["profile_current"] is True
    assert answer["tools"] == ["git_create_branch", "git_log"] and answer["tool_count"] == 2
    assert answer["discovery"]["state"] == "failed" and "ENOENT" in answer["discovery"]["error"]
    assert "activate_power" in answer["message"]


def test_a_server_without_a_profile_answers_with_what_is_known(view: CatalogView) -> None:
    answer = view.query("profile", {"server": BARE})
    assert answer["profile"] is None and answer["profile_missing"] is True
    assert answer["description"] == "Pings hosts." and answer["tools"] == ["host_info", "ping_host"]
    assert "tool-selector sync" in answer["message"]
    listed = view.query("servers", {"keyword": "bare"})["items"][0]
    assert listed["domain"] == "" and listed["discovery"] is None


# -- bad input ---------------------------------------------------------------------------------------


def test_an_unknown_query_type_lists_the_four_types_and_an_example(view: CatalogView) -> None:
    with pytest.raises(InvalidInputError) as caught:
        view.query("find", {})
    text = str(caught.value)
    assert all(kind in text for kind in QUERY_TYPES)
    assert 'catalog_query("tools", {' in text


def test_an_unknown_filter_names_the_allowed_filters(view: CatalogView) -> None:
    with pytest.raises(InvalidInputError) as caught:
        view.query("servers", {"name": "git"})
    assert "'name'" in caught.value.message
    assert "Allowed filters: domain, keyword, limit." in caught.value.message


@pytest.mark.parametrize(
    ("query_type", "filters", "says"),
    [
        ("servers", {"limit": "5"}, "must be a whole number"),
        ("servers", {"limit": True}, "must be a whole number"),
        ("servers", {"limit": 0}, "at least 1"),
        ("servers", {"keyword": 3}, "must be a string"),
        ("tools", {"entity": "   "}, "non-empty string"),
        ("tools", {"name_pattern": "x" * 301}, "at most 300"),
        ("check_tool", {"server": TRACKER}, "needs the filter 'action'"),
        ("profile", {}, "needs the filter 'server'"),
        ("profile", ["server"], "must be a JSON object"),
    ],
)
def test_bad_filters_are_refused_with_what_to_send(
    view: CatalogView, query_type: str, filters: Any, says: str
) -> None:
    with pytest.raises(InvalidInputError) as caught:
        view.query(query_type, filters)
    assert says in caught.value.message
    assert caught.value.hint


def test_query_types_are_read_ignoring_case_and_dashes(view: CatalogView) -> None:
    answer = view.query(" Check-Tool ", {"server": MAIL, "action": "send"})
    assert answer["query_type"] == "check_tool" and answer["has_tool"] is True


# -- the snapshot --------------------------------------------------------------------------------------


def test_every_answer_is_plain_json(view: CatalogView) -> None:
    for kind, filters in [
        ("servers", {}),
        ("tools", {}),
        ("check_tool", {"server": TRACKER, "action": "close"}),
        ("profile", {"server": TRACKER}),
    ]:
        answer = view.query(kind, filters)
        assert json.loads(json.dumps(answer)) == answer


def test_the_view_is_a_snapshot_that_knows_when_the_store_changed(settings: Settings) -> None:
    with Container(settings) as container:
        _fill(container)
        store: CatalogStore = container.store
        view = CatalogView.load(store)
        assert view.catalog_hash == store.catalog_hash() and view.is_current(store)
        CatalogWriter(store).import_catalog(
            [ServerSpec(name="New One", description="Newly added.")],
            [],
            actor="test",
            creation_method=CreationMethod.CLI,
        )
        assert view.query("servers", {})["total"] == 5
        assert not view.is_current(store)
        assert CatalogView.load(store).query("servers", {})["total"] == 6


def test_a_new_discovery_state_makes_the_view_out_of_date(settings: Settings) -> None:
    with Container(settings) as container:
        _fill(container)
        view = CatalogView.load(container.store)
        container.store.put_discovery([DiscoveryStatus(server=GIT, state="ok", last_attempt_at=NOW)])
        assert view.catalog_hash == container.store.catalog_hash()
        assert not view.is_current(container.store)


def test_the_benchmark_measures_every_query_type(view: CatalogView) -> None:
    report = bench_catalog_query(view, 5)
    assert set(report) == set(QUERY_TYPES)
    assert all(0 <= r["p50_ms"] <= r["p95_ms"] <= r["max_ms"] for r in report.values())
