"""The next call's arguments (tool_selector/route/arguments): the request's values mapped to a tool's
parameters by type and name, nothing invented, what is missing named. The schemas are the demo servers'
and the personal setups' own (eval/datasets/argument-fill and gateway-demo)."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

import pytest

from tests.support.paths import DATASETS
from tool_selector.route.arguments import Filled, fill_arguments

NOW = datetime(2026, 11, 20, 10, 0)  # a Friday


@cache
def _schemas() -> dict[str, dict[str, Any]]:
    catalogs = [
        DATASETS / "argument-fill" / "tools.json",
        DATASETS / "gateway-demo" / "tools.json",
        *sorted((DATASETS / "personal-setups").glob("*/tools.json")),
    ]
    tools = [t for catalog in catalogs for t in json.loads(catalog.read_text(encoding="utf-8"))]
    return {f"{t['server']}::{t['name']}": t["input_schema"] for t in tools}


def fill(tool: str, text: str, now: datetime | None = NOW) -> Filled:
    return fill_arguments(text, _schemas()[tool], now=now)


CURRENT, CONVERT = "time::get_current_time", "time::convert_time"


# -- time zones ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("what time is it in Tokyo right now?", "Asia/Tokyo"),
        ("whats the time in tokyo", "Asia/Tokyo"),
        ("Tokyo time?", "Asia/Tokyo"),
        ("time in New York?", "America/New_York"),
        ("what time is it in São Paulo", "America/Sao_Paulo"),
        ("get current time for timezone America/Argentina/Buenos_Aires", "America/Argentina/Buenos_Aires"),
    ],
)
def test_a_city_that_is_an_iana_zone_fills_a_timezone_parameter(text: str, zone: str) -> None:
    assert fill(CURRENT, text).arguments == {"timezone": zone}


@pytest.mark.parametrize(
    ("text", "zone"),
    [
        ("whats the time in san francisco", "America/Los_Angeles"),
        ("what's the time over in kyoto", "Asia/Tokyo"),
        ("is it still morning in Mumbai?", "Asia/Kolkata"),
        ("what time is it for the Boston office", "America/New_York"),
        ("current time in Pacific time", "America/Los_Angeles"),
        ("current time in CET", "Europe/Berlin"),
        ("what time is it in PST", "America/Los_Angeles"),
        ("current time in UTC", "UTC"),
    ],
)
def test_a_big_city_or_region_that_is_no_iana_name_fills_it_through_the_table(text: str, zone: str) -> None:
    assert fill(CURRENT, text).arguments == {"timezone": zone}


@pytest.mark.parametrize(
    "text",
    [
        "what's the time? the notes for the trip are in /home/sam/trips/london.md",
        "what time is it? see https://example.org/tokyo",
        "what's the time, I'm reading 'A Week in Paris'",
    ],
)
def test_a_city_inside_a_path_a_url_or_quoted_text_is_no_time_zone(text: str) -> None:
    filled = fill(CURRENT, text)
    assert filled.arguments == {} and filled.missing == ["timezone"]


def test_a_city_fills_a_timezone_parameter_only_when_the_request_speaks_of_time() -> None:
    filled = fill(
        "mailmodo::addContactToList", "add maria@lumen.studio, who lives in Berlin, to the list 'News'"
    )
    assert filled.arguments == {"email": "maria@lumen.studio", "listName": "News"}
    assert (
        fill(
            "mailmodo::addContactToList", "add maria@lumen.studio to 'News', her time zone is Berlin"
        ).arguments["timezone"]
        == "Europe/Berlin"
    )


@pytest.mark.parametrize(
    ("text", "source", "time", "target"),
    [
        ("convert 3pm London time to San Francisco time", "Europe/London", "15:00", "America/Los_Angeles"),
        ("what's 3pm London in SF", "Europe/London", "15:00", "America/Los_Angeles"),
        ("what time is it in Tokyo when it's 9am in Berlin", "Europe/Berlin", "09:00", "Asia/Tokyo"),
        ("my flight lands in Tokyo at 6am, what time is that in Boston?", "Asia/Tokyo", "06:00",
         "America/New_York"),
        ("convert 09:00 from America/Chicago to Asia/Singapore", "America/Chicago", "09:00",
         "Asia/Singapore"),
        ("it's noon in Chicago, what time is it in Auckland?", "America/Chicago", "12:00",
         "Pacific/Auckland"),
        ("convert 18:00 Berlin time to Tokyo time, I'm off to Denver next week", "Europe/Berlin", "18:00",
         "Asia/Tokyo"),
    ],
)  # fmt: skip
def test_two_zones_are_ordered_by_the_words_the_zone_the_given_time_belongs_to_is_the_source(
    text: str, source: str, time: str, target: str
) -> None:
    filled = fill(CONVERT, text)
    assert filled.arguments == {"source_timezone": source, "time": time, "target_timezone": target}
    assert filled.missing == []


def test_without_a_time_two_zones_go_in_order_and_from_to_decide() -> None:
    assert fill(CONVERT, "convert Boston time to Paris time").arguments == {
        "source_timezone": "America/New_York",
        "target_timezone": "Europe/Paris",
    }
    assert (
        fill(CONVERT, "to Paris from Boston, what's 5pm").arguments["source_timezone"] == "America/New_York"
    )


@pytest.mark.parametrize(
    ("text", "time"),
    [("3pm", "15:00"), ("9:30 in the morning", "09:30"), ("4:30pm", "16:30"), ("8 pm", "20:00"),
     ("noon", "12:00"), ("midnight", "00:00"), ("12am", "00:00"), ("14:05", "14:05")],
)  # fmt: skip
def test_a_time_is_written_as_the_schema_asks_on_a_24_hour_clock(text: str, time: str) -> None:
    assert fill(CONVERT, f"convert {text} to Tokyo time").arguments["time"] == time


# -- nothing invented ------------------------------------------------------------------------------


def test_nothing_is_filled_that_the_request_does_not_say_and_the_required_rest_is_missing() -> None:
    assert fill(CURRENT, "what time is it?") == Filled(arguments={}, missing=["timezone"], sources={})
    filled = fill(CONVERT, "convert 5pm to Tokyo time")
    assert filled.arguments == {"time": "17:00", "target_timezone": "Asia/Tokyo"}
    assert filled.missing == ["source_timezone"]
    assert fill("everything::get-sum", "add two numbers").missing == ["a", "b"]
    assert fill("fetch::fetch", "summarize this article for me").missing == ["url"]


def test_a_query_language_parameter_takes_no_plain_words() -> None:
    filled = fill(
        "Confluence Communication Server MCP Server::execute_cql_search", "search Confluence for 'onboarding'"
    )
    assert filled.arguments == {} and filled.missing == ["cql"]


def test_booleans_and_nested_objects_are_never_filled() -> None:
    assert fill("memory::create_entities", "remember that Alice works at Acme").missing == ["entities"]
    assert "raw" not in fill("fetch::fetch", "get https://example.org raw").arguments


# -- numbers ---------------------------------------------------------------------------------------


def test_a_number_is_a_count_only_when_the_words_say_so() -> None:
    assert fill("git::git_log", "show me the last 5 commits").arguments == {"max_count": 5}
    assert fill("git::git_log", "list the 10 most recent commits in /srv/app").arguments["max_count"] == 10
    since = fill("git::git_log", "what changed in /home/me/proj in the last 3 days?").arguments
    assert since == {"repo_path": "/home/me/proj", "start_timestamp": "2026-11-17"}
    assert fill("git::git_log", "show me the log, I fixed 2 bugs today").arguments.get("max_count") is None
    assert (
        "count"
        not in fill("Brave Search MCP Server::brave_web_search", "search for http 429 retries").arguments
    )
    assert "max_length" not in fill("fetch::fetch", "fetch https://x.org/issues?per_page=50").arguments


def test_first_lines_go_to_head_and_last_lines_to_tail() -> None:
    read = "filesystem::read_text_file"
    assert fill(read, "first 20 lines of /etc/hosts").arguments == {"path": "/etc/hosts", "head": 20}
    assert fill(read, "last 50 lines of /var/log/syslog").arguments == {"path": "/var/log/syslog", "tail": 50}
    assert fill(read, "read /data/2024/q3/report-7.txt").arguments == {"path": "/data/2024/q3/report-7.txt"}


def test_a_number_next_to_its_parameters_name_fills_it_and_generic_pairs_go_in_order() -> None:
    assert fill("Moodle MCP Server::get_quiz_grade", "grade of student 3051 on quiz 12").arguments == {
        "studentId": 3051,
        "quizId": 12,
    }
    assert fill("everything::get-sum", "what's 1,200 plus 350?").arguments == {"a": 1200, "b": 350}
    assert fill("everything::get-sum", "add the 2 numbers I gave you").arguments == {}
    route = "OpenStreetMap (OSM) MCP Server::get_route_directions"
    assert fill(route, "route from 48.8566, 2.3522 to 48.8606, 2.3376").arguments == {
        "from_latitude": 48.8566,
        "from_longitude": 2.3522,
        "to_latitude": 48.8606,
        "to_longitude": 2.3376,
    }


# -- kinds and cues --------------------------------------------------------------------------------


def test_paths_go_by_kind_a_folder_to_the_repository_files_to_the_files() -> None:
    assert fill("git::git_add", "in /home/priya/code/api, stage README.md and src/app.ts").arguments == {
        "repo_path": "/home/priya/code/api",
        "files": ["README.md", "src/app.ts"],
    }
    staged = fill("git::git_add", "stage src/routes/invoices.ts and src/lib/tax.ts")
    assert staged.missing == ["repo_path"]
    assert fill("filesystem::move_file", "move ~/Downloads/r.pdf to ~/Documents/").arguments == {
        "source": "~/Downloads/r.pdf",
        "destination": "~/Documents/",
    }


def test_a_branch_that_looks_like_a_path_is_the_branch_and_the_folder_the_repository() -> None:
    filled = fill("git::git_create_branch", "create a branch called feature/login-form in ~/code/shop")
    assert filled.arguments == {"repo_path": "~/code/shop", "branch_name": "feature/login-form"}
    assert fill("git::git_checkout", "switch to the develop branch").arguments == {"branch_name": "develop"}
    assert fill("Linear MCP Server::get_issue", "what's the latest issue").arguments == {}


def test_a_url_without_a_scheme_gets_https_for_a_uri_parameter() -> None:
    assert fill("fetch::fetch", "can you read www.bbc.co.uk/news for me").arguments == {
        "url": "https://www.bbc.co.uk/news"
    }


def test_quoted_text_goes_to_the_parameter_its_cue_word_names() -> None:
    thread = fill("MCP Teams Server::start_thread", "a thread titled 'Launch retro' saying 'add your notes'")
    assert thread.arguments == {"content": "add your notes", "title": "Launch retro"}
    replace = fill("Office-Word-MCP-Server::search_and_replace", "in plan.docx replace 'beta' with 'GA'")
    assert replace.arguments == {"filename": "plan.docx", "find_text": "beta", "replace_text": "GA"}
    assert fill("git::git_commit", "commit with the message 'fix login'").arguments == {
        "message": "fix login"
    }


def test_ids_keep_their_form_and_a_number_typed_id_is_a_number() -> None:
    assert fill("Linear MCP Server::get_issue", "status of ENG-1423?").arguments == {"issueId": "ENG-1423"}
    assert fill("Datadog MCP Server::get-monitor", "get Datadog monitor 48213").arguments == {
        "monitorId": 48213
    }
    assert fill("git::git_show", "show commit 3f9a2c1 in /srv/app").arguments == {
        "repo_path": "/srv/app",
        "revision": "3f9a2c1",
    }


def test_an_enum_is_respected() -> None:
    sizes = fill("filesystem::list_directory_with_sizes", "list /home/sam/videos sorted by size")
    assert sizes.arguments == {"path": "/home/sam/videos", "sortBy": "size"}
    assert fill("everything::get-structured-content", "structured content for Chicago").arguments == {
        "location": "Chicago"
    }
    outside = fill("everything::get-structured-content", "structured content for Boston")
    assert outside.arguments == {} and outside.missing == ["location"]
    assert (
        fill("@genm/switchbot-mcp::control_device", "turn off C4F2A1B2C3D4").arguments["command"] == "turnOff"
    )


def test_dates_are_iso_and_relative_ones_are_read_against_now() -> None:
    prices = "MCP Yahoo Finance::get_stock_price_date_range"
    assert fill(prices, "MSFT from Jan 2 2024 to March 1 2024").arguments == {
        "symbol": "MSFT",
        "start_date": "2024-01-02",
        "end_date": "2024-03-01",
    }
    sleep = "Oura MCP Server::get_sleep_data"
    assert fill(sleep, "sleep for the last 7 days").arguments == {
        "start_date": "2026-11-13",
        "end_date": "2026-11-20",
    }
    assert fill(sleep, "sleep since Monday").arguments == {"start_date": "2026-11-16"}
    assert fill(sleep, "sleep since Monday", now=None).arguments == {}
    assert fill("Todo List MCP Server::search-todos-by-date", "todos due tomorrow").arguments == {
        "date": "2026-11-21"
    }


def test_a_date_time_parameter_takes_a_date_only_with_its_time() -> None:
    event = "Outlook Meetings Scheduler MCP Server::create-event"
    assert fill(event, "'Sync' tomorrow at 3pm").arguments["start"] == "2026-11-21T15:00:00"
    assert "start" not in fill(event, "'Sync' tomorrow").arguments


def test_currencies_get_their_iso_codes_and_the_base_is_the_one_asked_about() -> None:
    rate = "Exchange Rate MCP Server::exchange_rate"
    assert fill(rate, "USD to JPY rate on 2025-01-15").arguments == {
        "baseCurrency": "USD",
        "targetCurrency": "JPY",
        "date": "2025-01-15",
    }
    assert fill(rate, "how many euros is a dollar").arguments == {
        "baseCurrency": "USD",
        "targetCurrency": "EUR",
    }


def test_the_words_of_a_search_fill_its_query() -> None:
    search = "ArXiv MCP Server::search_papers"
    assert fill(search, "search arxiv for diffusion models for protein design, max 20 results").arguments == {
        "query": "diffusion models for protein design",
        "max_results": 20,
    }
    assert fill("memory::search_nodes", "what do you remember about Alice?").arguments == {"query": "Alice"}
    assert fill("memory::search_nodes", "search my memory for 'Project Falcon'").arguments == {
        "query": "Project Falcon"
    }


def test_sources_name_the_part_of_the_request_each_value_came_from() -> None:
    filled = fill(CONVERT, "convert 3pm London time to San Francisco time")
    assert filled.sources == {"source_timezone": "London", "time": "3pm", "target_timezone": "San Francisco"}
    assert fill("Oura MCP Server::get_sleep_data", "sleep for the last 7 days").sources["start_date"] == (
        "the last 7 days"
    )


@pytest.mark.parametrize(
    "schema",
    [
        {},
        {"properties": []},
        {"properties": {"a": "not a dict", "b": {"type": 5}}, "required": "b"},
        {"properties": {"mode": {"enum": [1, None, {"x": 1}, True]}}, "required": ["mode"]},
        {"properties": {"code": {"type": "string", "pattern": "(unclosed"}}, "required": ["code"]},
        {"properties": {"when": {"anyOf": [{"type": "integer"}, {"type": "null"}]}}},
    ],
)
def test_a_malformed_schema_gives_no_error_and_values_only_for_parameters_it_declares(
    schema: dict[str, Any],
) -> None:
    filled = fill_arguments("set code X9 mode 1 when 3 at /tmp/a.txt", schema, now=NOW)
    assert set(filled.arguments) <= set(schema.get("properties") or {})


def test_a_day_range_and_a_time_range_give_a_start_and_an_end() -> None:
    fitbit = "Fitbit MCP Connector for AI::get_sleep_by_date_range"
    assert fill(fitbit, "sleep data for 1-7 June").arguments == {
        "startDate": "2026-06-01",
        "endDate": "2026-06-07",
    }
    airbnb = fill(
        "Airbnb MCP Server::airbnb_search", "airbnb in Porto for 2 adults, 12-15 Sept, under 120 a night"
    )
    assert airbnb.arguments == {
        "location": "Porto",
        "checkin": "2026-09-12",
        "checkout": "2026-09-15",
        "adults": 2,
    }
    event = fill(
        "Google Workspace MCP Server::create_event", "put 'Dentist' in my calendar thursday 9 to 10am"
    )
    assert event.arguments == {
        "summary": "Dentist",
        "start": "2026-11-26T09:00:00",
        "end": "2026-11-26T10:00:00",
    }


def test_numbers_that_are_not_coordinates_fill_no_latitude() -> None:
    chargers = "OpenStreetMap (OSM) MCP Server::find_ev_charging_stations"
    filled = fill(chargers, "EV chargers within 2 km of 10 Elm Road, Leeds")
    assert "latitude" not in filled.arguments and "longitude" not in filled.arguments
    assert fill("MCP Weather Free::get_weather", "weather at 38.72, -9.14").arguments == {
        "latitude": 38.72,
        "longitude": -9.14,
    }


def test_an_id_parameter_takes_an_id_never_a_plain_name() -> None:
    ynab = fill("YNAB MCP Server::list-transactions", "last 20 transactions on my checking account")
    assert "account_id" not in ynab.arguments and ynab.missing == ["account_id"]
    bot = fill("Attendee MCP Server::make_bot_speak", "have the bot say 'recording starts now' out loud")
    assert bot.arguments == {"text": "recording starts now"} and bot.missing == ["bot_id"]
    assert fill("Attendee MCP Server::make_bot_speak", "make bot_8Fz say 'hi'").arguments == {
        "bot_id": "bot_8Fz",
        "text": "hi",
    }


def test_the_words_after_a_colon_or_saying_are_the_body() -> None:
    assert fill("everything::echo", "repeat after me: testing 1 2 3").arguments == {
        "message": "testing 1 2 3"
    }
    email = fill(
        "Google Workspace MCP Server::send_email",
        "email anna@x.io, subject 'Beta', saying we ship on the 14th",
    )
    assert email.arguments == {"to": "anna@x.io", "subject": "Beta", "body": "we ship on the 14th"}
    sql = "Supabase MCP Server::execute_postgresql"
    assert fill(
        sql, "on the db run: select count(*) from orders where d > now() - interval '1 day'"
    ).arguments == {"query": "select count(*) from orders where d > now() - interval '1 day'"}


def test_a_name_in_a_sandbox_folder_is_joined_into_one_path() -> None:
    assert fill(
        "filesystem::create_directory", "create a folder called reports in /tmp/ts-demo"
    ).arguments == {"path": "/tmp/ts-demo/reports"}
    assert fill("filesystem::read_text_file", "read notes.txt in /tmp/ts-demo").arguments == {
        "path": "/tmp/ts-demo/notes.txt"
    }


def test_a_product_or_kind_named_before_a_thing_is_not_its_name() -> None:
    assert fill(
        "GitHub Repository MCP Server::get-file-content", "get package.json from a GitHub repo"
    ).arguments == {"path": "package.json"}
    assert (
        fill("AWS MCP Server::dynamodb_item_delete", "delete an item from a DynamoDB table").arguments == {}
    )
    assert fill("docker-mcp::get-logs", "show me the logs of the postgres-dev container").arguments == {
        "container_name": "postgres-dev"
    }


def test_a_pattern_any_word_fits_and_a_generic_search_phrase_are_no_values() -> None:
    flag = fill("GrowthBook MCP Server::create_feature_flag", "create a boolean flag defaulting to false")
    assert "id" not in flag.arguments
    assert fill("FetchSERP MCP Server::get_serp_html", "fetch the results page for a query").arguments == {}
    volume = "DataForSEO MCP Server::keywords-google-ads-search-volume"
    assert fill(volume, "search volume for 'soy candles' and 'beeswax candles'").arguments == {
        "keywords": ["soy candles", "beeswax candles"]
    }


def test_a_revision_never_takes_a_files_path_but_takes_a_commit_hash() -> None:
    schema = {
        "type": "object",
        "properties": {"repo_path": {"type": "string"}, "revision": {"type": "string"}},
        "required": ["repo_path", "revision"],
    }
    shown = fill_arguments("show the last commit's change to src/app.py", schema)
    assert "revision" not in shown.arguments and "revision" in shown.missing
    assert fill_arguments("show commit abc1234", schema).arguments == {"revision": "abc1234"}
