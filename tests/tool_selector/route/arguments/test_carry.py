"""Which earlier values a later call carries (tool_selector/route/arguments/carry.py): only a parameter
whose whole name says where the session works; never what one call is about, a direction or a secret
(the names below that must not carry were found carrying in review: root_domain, db_password, ...)."""

from __future__ import annotations

import pytest

from services.gateway.sessions import SessionView
from tool_selector.route.arguments.carry import carried, names_a_place, next_arguments

PLACES = [
    "repo_path", "repoPath", "repository", "projectId", "project_id", "projectid", "database", "db_name",
    "DBName", "root", "working_dir", "workdir", "cwd", "owner", "org", "account_id", "spreadsheetId",
    "region", "aws_region", "environmentId", "environmentSlug", "teamId", "namespace", "tenantId",
    "subscriptionId", "datasetId", "baseId", "bucket_name", "boardId", "repo_owner",
]  # fmt: skip
NOT_PLACES = [
    "path", "file_path", "content", "text", "message", "timezone", "url", "query", "directory", "dir",
    "source", "destination", "branch_name", "table", "name", "id", "title", "new_name", "default_path",
    "root_domain", "root_password", "db_password", "account_password", "account_key", "api_key",
    "project_summary", "project_description", "db_query", "ownerAddress", "contractAccountId",
    "to_account", "target_repo", "dest_bucket", "team_message", "channel", "sheet_name",
]  # fmt: skip


@pytest.mark.parametrize("name", PLACES)
def test_a_name_that_says_where_the_session_works_carries(name: str) -> None:
    assert names_a_place(name)


@pytest.mark.parametrize("name", NOT_PLACES)
def test_what_one_call_is_about_a_direction_or_a_secret_never_carries(name: str) -> None:
    assert not names_a_place(name)


def test_a_place_passed_two_different_values_is_not_guessed_and_one_the_request_gives_wins() -> None:
    view = SessionView()
    view.passed("git", {"repo_path": "/home/ana/shop", "message": "fix"})
    view.passed("git", {"repo_path": "/home/ana/shop", "message": "docs"})
    view.passed("db", {"database": "sales"})
    view.passed("db", {"database": "hr"})
    earlier = view.earlier()
    assert carried(["repo_path", "message"], [], earlier["git"]) == {"repo_path": "/home/ana/shop"}
    assert carried(["repo_path"], ["repo_path"], earlier["git"]) == {}  # the request gave it
    assert carried(["database"], [], earlier["db"]) == {}  # two values: never a guess


def _schema(*names: str, required: tuple[str, ...] = ()) -> dict[str, object]:
    return {
        "type": "object",
        "properties": {n: {"type": "string", "description": n.replace("_", " ")} for n in names},
        "required": list(required or names),
    }


def test_the_respelled_words_add_a_value_only_from_words_the_user_wrote() -> None:
    """ "tiem" hides that "Sydney" is a time zone: the speller's reading adds it. In review, the respelled
    reading put a value on another parameter ("convert 3pm londn Tokyo": both zones Tokyo) and a name
    corrected into another word ("swich to brnach relase": "relate"); neither is taken now."""
    zone = _schema("timezone")
    assert next_arguments(
        zone, ["Whats the tiem in Sydney now?"], respelled="Whats the time in Sydney now?"
    ) == (
        {"timezone": "Australia/Sydney"},
        [],
    )
    convert = _schema("source_timezone", "time", "target_timezone")
    words = "convert 3pm londn Tokyo"
    found, _ = next_arguments(convert, [words], respelled="convert 3pm london Tokyo")
    alone, _ = next_arguments(convert, [words])
    assert all(found.get(k) == v for k, v in alone.items())  # what the words gave stays
    assert list(found.values()).count("Asia/Tokyo") <= 1, found  # never one zone on both
    branch = _schema("branch_name")
    found, _ = next_arguments(branch, ["swich to brnach relase"], respelled="switch to branch relate")
    assert found.get("branch_name") != "relate", found
