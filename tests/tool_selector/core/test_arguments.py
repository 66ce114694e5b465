"""The arguments of a request (tool_selector/core/arguments.py): recognised, taken out of the text,
and matched against the parameter kinds of a tool's input schema."""

from __future__ import annotations

import random
import timeit
from typing import Any

import pytest

from tool_selector.core.arguments import (
    MAX_GROWTH,
    PLACEHOLDERS,
    Argument,
    Extracted,
    Kind,
    extract,
    fits,
    parameter_kinds,
)


def _pairs(text: str) -> list[tuple[str, str]]:
    return [(a.kind, a.value) for a in extract(text).arguments]


# ----------------------------------------------------------------------------------------------- the examples

EXAMPLES: list[tuple[str, str, list[tuple[str, str]]]] = [
    (
        "grab the contents of the page at https://example.org/pricing",
        "grab the contents of the page at url",
        [("url", "https://example.org/pricing")],
    ),
    ("what time is it in Tokyo right now?", "what time is it in Tokyo right now?", []),
    (
        "If it's 9:30 in the morning in New York, what time is that in Berlin?",
        "If it's time in New York, what time is that in Berlin?",
        [("time", "9:30 in the morning")],
    ),
    (
        "convert 3pm PST to Europe/Berlin",
        "convert time time zone to time zone",
        [("time", "3pm"), ("timezone", "PST"), ("timezone", "Europe/Berlin")],
    ),
    (
        "open ~/notes/todo.md and add 'call the bank'",
        "open path and add text",
        [("path", "~/notes/todo.md"), ("quoted", "call the bank")],
    ),
    ("summarise report_q3.pdf", "summarise file", [("filename", "report_q3.pdf")]),
    ("show commit 3f2a9c1 in acme/api", "show commit hash in acme/api", [("hash", "3f2a9c1")]),
    ("move PROJ-123 to done", "move id to done", [("id", "PROJ-123")]),
    (
        "send $40 to alice@example.com",
        "send amount to email address",
        [("amount", "$40"), ("email", "alice@example.com")],
    ),
    (
        "meeting on 2025-03-14 at 14:00 UTC",
        "meeting on date at time time zone",
        [("date", "2025-03-14"), ("time", "14:00"), ("timezone", "UTC")],
    ),
    ("Node.js version 3.13 notes", "Node.js version notes", [("number", "3.13")]),
    ("don't forget Mom's birthday", "don't forget Mom's birthday", []),
]


@pytest.mark.parametrize(("request_text", "text", "arguments"), EXAMPLES, ids=[e[0][:40] for e in EXAMPLES])
def test_the_examples_of_the_brief(request_text: str, text: str, arguments: list[tuple[str, str]]) -> None:
    extracted = extract(request_text)
    assert extracted.text == text
    assert [(a.kind, a.value) for a in extracted.arguments] == arguments


def test_the_words_inside_an_argument_never_reach_the_text() -> None:
    extracted = extract("grab the contents of the page at https://example.org/pricing")
    assert "pricing" not in extracted.text and "example" not in extracted.text
    assert extracted == Extracted(
        "grab the contents of the page at url", (Argument("url", "https://example.org/pricing"),)
    )


def test_city_names_and_a_repository_slug_stay_in_the_text() -> None:
    for text in ("what time is it in Tokyo", "weather in Berlin and New York", "list issues of acme/api"):
        assert extract(text) == Extracted(text, ())


# ------------------------------------------------------------------------------------------- per-kind tables

POSITIVES: dict[Kind, list[tuple[str, str]]] = {
    "url": [
        ("open https://example.org/pricing now", "https://example.org/pricing"),
        ("see www.python.org/downloads.", "www.python.org/downloads"),
        ("scrape example.com/blog/posts for me", "example.com/blog/posts"),
        ("get ftp://files.example.net/a.zip", "ftp://files.example.net/a.zip"),
        (
            "read https://en.wikipedia.org/wiki/Python_(language)",
            "https://en.wikipedia.org/wiki/Python_(language)",
        ),
        ("fetch 'https://example.org/a' please", "https://example.org/a"),  # quoted, but a URL
    ],
    "email": [
        ("send it to alice@example.com", "alice@example.com"),
        ("mail bob.smith+tag@mail.example.co.uk.", "bob.smith+tag@mail.example.co.uk"),
        ("cc first_last@sub.domain.org today", "first_last@sub.domain.org"),
    ],
    "path": [
        ("run /usr/local/bin/python", "/usr/local/bin/python"),
        ("edit ~/notes/todo.md", "~/notes/todo.md"),
        ("lint ./src/app.py please", "./src/app.py"),
        ("read /etc/hosts.", "/etc/hosts"),
        ("open C:\\Users\\bob\\Desktop\\x.txt", "C:\\Users\\bob\\Desktop\\x.txt"),
        ("refactor src/components/Button.tsx", "src/components/Button.tsx"),
        ("list \\\\server\\share\\docs", "\\\\server\\share\\docs"),
    ],
    "filename": [
        ("summarise report_q3.pdf", "report_q3.pdf"),
        ("run main.py", "main.py"),
        ("load data.csv, then plot it", "data.csv"),
        ("unpack archive.tar.gz", "archive.tar.gz"),
        ("add a key to .env", ".env"),
        ("open README.MD", "README.MD"),
    ],
    "quoted": [
        ("add 'buy milk' to my list", "buy milk"),
        ('search my notes for "quarterly plan"', "quarterly plan"),
        ("title it “Q3 review”", "Q3 review"),
        ("run `ls -la` there", "ls -la"),
        ("note 'it's done' now", "it's done"),
        ("call it ‘draft’", "draft"),
    ],
    "date": [
        ("due 2025-03-14", "2025-03-14"),
        ("on 14/03/2025 please", "14/03/2025"),
        ("on 3/14/25 please", "3/14/25"),
        ("book March 14", "March 14"),
        ("book 14 March 2025", "14 March 2025"),
        ("by Mar 3rd", "Mar 3rd"),
        ("since 14.03.2025", "14.03.2025"),
    ],
    "datetime": [
        ("at 2025-03-14T14:00:00Z", "2025-03-14T14:00:00Z"),
        ("at 2025-03-14T09:30+02:00 sharp", "2025-03-14T09:30+02:00"),
        ("from 2025-03-14 14:00", "2025-03-14 14:00"),
    ],
    "time": [
        ("wake me at 9:30", "9:30"),
        ("at 14:00 tomorrow", "14:00"),
        ("at 9am", "9am"),
        ("at 3 pm", "3 pm"),
        ("by 10 a.m. sharp", "10 a.m."),
        ("at 9 o'clock", "9 o'clock"),
        ("at 9:30 in the morning", "9:30 in the morning"),
    ],
    "timezone": [
        ("now in Europe/Berlin", "Europe/Berlin"),
        ("now in America/New_York", "America/New_York"),
        ("3pm UTC", "UTC"),
        ("noon PST", "PST"),
        ("in UTC+05:30", "UTC+05:30"),
        ("convert to utc", "utc"),
        ("9:00 JST", "JST"),
    ],
    "amount": [
        ("send $40", "$40"),
        ("pay 40 USD", "40 USD"),
        ("costs €12.50", "€12.50"),
        ("about 1,200 euros", "1,200 euros"),
        ("raise $5k", "$5k"),
    ],
    "number": [
        ("top 10 results", "10"),
        ("Python 3.13 notes", "3.13"),
        ("grew 50% this year", "50%"),
        ("at -5 degrees", "-5"),
    ],
    "id": [
        ("move PROJ-123 to done", "PROJ-123"),
        ("close #482", "#482"),
        ("close issue 17", "17"),
        ("order 550e8400-e29b-41d4-a716-446655440000", "550e8400-e29b-41d4-a716-446655440000"),
        ("track 1234567890", "1234567890"),
        ("order x9k2mq7 please", "x9k2mq7"),
        ("the book ISBN 978-0-13-468599-1", "978-0-13-468599-1"),
        ("patch CVE-2024-12345", "CVE-2024-12345"),
    ],
    "hash": [
        ("show commit 3f2a9c1", "3f2a9c1"),
        ("revert 9fceb02d0ae598e95dc970b74767f19372d61af8", "9fceb02d0ae598e95dc970b74767f19372d61af8"),
        ("checksum DEADBEEF12", "DEADBEEF12"),
        ("cherry-pick a1b2c3d", "a1b2c3d"),  # all hex: a hash, not an id
    ],
}

NEGATIVES: dict[Kind, list[str]] = {
    "url": ["install Node.js", "e.g. this one", "use Socket.IO", "list acme/api", "an ASP.NET app"],
    "email": ["ping @channel please", "mention @alice on slack", "login as user@localhost"],
    "path": ["list acme/api issues", "and/or both", "open 24/7", "speed in km/h", "time in Europe/Berlin"],
    "filename": [
        "install Node.js",
        "e.g. this one",
        "Python 3.13",
        "a Vue.js app",
        "the U.S. office",
        "i.e. now",
    ],
    "quoted": [
        "don't forget Mom's birthday",
        "the students' books are here",
        "it's Bob's",
        'an empty "" string',
        'a blank " " one',
    ],
    "date": ["May I ask", "on 2025-13-40", "version 1.2.34", "10 marks", "in March we go", "24/7 support"],
    "datetime": ["meeting on 2025-03-14 at 14:00", "at 14:00"],
    "time": ["ratio 16:9", "I am 5", "verse 25:61", "at 99:99", "odds of 2:1"],
    "timezone": ["what time is it in Tokyo", "best practices", "west coast", "Europe trip", "ESTIMATE it"],
    "amount": ["echo $HOME", "the USD to EUR rate", "40 apples", "pounds of flour"],
    "number": ["convert mp3", "enable 2FA", "a 3D print", "x86_64 build", "use v2 api"],
    "id": ["COVID-19 news", "UTF-8 text", "ask GPT-4", "install python3", "x86_64 build", "post in #general"],
    "hash": ["deadbeef beef", "1234567 items", "abc123 short", "add feature"],
}


@pytest.mark.parametrize(
    ("kind", "text", "value"), [(k, t, v) for k, rows in POSITIVES.items() for t, v in rows]
)
def test_each_kind_is_recognised(kind: Kind, text: str, value: str) -> None:
    assert (kind, value) in _pairs(text)


@pytest.mark.parametrize(("kind", "text"), [(k, t) for k, rows in NEGATIVES.items() for t in rows])
def test_look_alikes_are_not_taken_for_the_kind(kind: Kind, text: str) -> None:
    assert kind not in [k for k, _ in _pairs(text)]


def test_every_kind_has_three_positives_and_two_negatives() -> None:
    kinds = set(PLACEHOLDERS)
    assert {k for k, rows in POSITIVES.items() if len(rows) >= 3} == kinds
    assert {k for k, rows in NEGATIVES.items() if len(rows) >= 2} == kinds


# ---------------------------------------------------------------------------------------- the replaced text


def test_each_kind_is_replaced_by_its_generic_word() -> None:
    assert PLACEHOLDERS == {
        "url": "url",
        "email": "email address",
        "path": "path",
        "filename": "file",
        "quoted": "text",
        "datetime": "date",
        "date": "date",
        "time": "time",
        "timezone": "time zone",
        "amount": "amount",
        "number": "",
        "id": "id",
        "hash": "hash",
    }


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("show the top 10 results", "show the top results"),
        ("top 10, then stop", "top, then stop"),
        ("(see PROJ-123) now", "(see id) now"),
        ("read /etc/hosts.", "read path."),
        ("  spaced   out   https://x.org/a   text ", "spaced out url text"),
        ('add"milk"now', "add text now"),
    ],
)
def test_the_text_reads_as_a_sentence(text: str, expected: str) -> None:
    assert extract(text).text == expected


@pytest.mark.parametrize("text", ["42", "3.5 + 4", "https://example.org/a", "2025-03-14 14:00 UTC", "#12"])
def test_a_request_of_arguments_only_keeps_its_text(text: str) -> None:
    extracted = extract(text)
    assert extracted.text == text
    assert extracted.arguments


def test_a_text_the_replacement_words_would_grow_too_much_is_kept() -> None:
    text = " ".join(["PST"] * 30)
    extracted = extract(text)
    assert len(extracted.arguments) == 30
    assert extracted.text == text


def test_empty_and_blank_requests() -> None:
    assert extract("") == Extracted("", ())
    assert extract("   ") == Extracted("   ", ())


# ----------------------------------------------------------------------------------------- parameter kinds

FETCH = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "format": "uri", "description": "URL to fetch"},
        "max_length": {"type": "integer", "description": "Maximum number of characters to return."},
        "start_index": {
            "type": "integer",
            "description": "On return output starting at this character index",
        },
        "raw": {"type": "boolean", "description": "Get the actual HTML content of the requested page"},
    },
}
READ_FILE = {"type": "object", "properties": {"path": {"type": "string"}}}
CONVERT_TIME = {
    "type": "object",
    "properties": {
        "source_timezone": {"type": "string", "description": "Source IANA timezone name"},
        "time": {"type": "string", "description": "Time to convert in 24-hour format (HH:MM)"},
        "target_timezone": {"type": "string", "description": "Target IANA timezone name"},
    },
}
GIT_SHOW = {
    "type": "object",
    "properties": {
        "repo_path": {"type": "string", "description": "The path to the Git repository."},
        "revision": {"type": "string"},
    },
}
SEARCH = {"type": "object", "properties": {"query": {"type": "string", "description": "What to look for"}}}


@pytest.mark.parametrize(
    ("schema", "kinds"),
    [
        (FETCH, {"url", "number"}),
        (READ_FILE, {"path", "filename"}),
        (CONVERT_TIME, {"timezone", "time"}),
        (GIT_SHOW, {"path", "filename", "hash"}),
        (SEARCH, {"quoted"}),
        ({}, set()),
        ({"properties": None}, set()),
    ],
    ids=["fetch", "read_file", "convert_time", "git_show", "search", "empty", "no properties"],
)
def test_parameter_kinds_of_realistic_schemas(schema: dict[str, Any], kinds: set[str]) -> None:
    assert parameter_kinds(schema) == kinds


@pytest.mark.parametrize(
    ("name", "spec", "kinds"),
    [
        ("pageUrl", {"type": "string"}, {"url"}),
        ("recipient_email", {"type": "string", "format": "email"}, {"email"}),
        ("file_name", {"type": "string"}, {"path", "filename"}),
        ("fileName", {"type": "string"}, {"path", "filename"}),
        ("time_zone", {"type": "string"}, {"timezone"}),
        ("tz", {"type": "string"}, {"timezone"}),
        ("start_date", {"type": "string", "format": "date"}, {"date", "datetime"}),
        ("created", {"type": "string", "format": "date-time"}, {"date", "datetime"}),
        ("issueId", {"type": "string"}, {"id"}),
        ("issue_number", {"type": "integer"}, {"id", "number"}),
        ("page", {"type": "integer"}, {"number"}),  # a page number is no URL
        ("commit_sha", {"type": "string"}, {"hash"}),
        ("commit_message", {"type": "string"}, {"quoted"}),  # the head noun decides
        ("price", {"type": "number"}, {"amount", "number"}),
        ("urls", {"type": "array", "items": {"type": "string"}}, {"url"}),
        ("isRevision", {"type": ["boolean", "string"]}, set()),
        ("location", {"type": "string", "description": "Path to the file to open"}, {"path", "filename"}),
        ("owner", {"type": "string"}, set()),
    ],
)
def test_parameter_kinds_read_names_formats_types_and_descriptions(
    name: str, spec: dict[str, Any], kinds: set[str]
) -> None:
    assert parameter_kinds({"properties": {name: spec}}) == kinds


def test_parameter_kinds_read_one_level_of_nested_objects() -> None:
    schema = {
        "properties": {
            "message": {
                "type": "object",
                "properties": {
                    "to": {"type": "string", "format": "email"},
                    "attachment_path": {"type": "string"},
                },
            },
            "items": {
                "type": "array",
                "items": {"type": "object", "properties": {"link": {"type": "string"}}},
            },
        }
    }
    assert parameter_kinds(schema) == {"email", "path", "filename", "url"}
    deeper = {"properties": {"a": {"type": "object", "properties": {"b": {"properties": {"url": {}}}}}}}
    assert "url" not in parameter_kinds(deeper)


# --------------------------------------------------------------------------------------------------- fits


def _arguments(*kinds: Kind) -> list[Argument]:
    return [Argument(kind, "x") for kind in kinds]


@pytest.mark.parametrize(
    ("arguments", "schema", "share"),
    [
        (_arguments("url"), FETCH, 1.0),
        (_arguments("url"), READ_FILE, 0.0),
        (_arguments("path"), READ_FILE, 1.0),
        (_arguments("filename"), READ_FILE, 1.0),  # a file name fits a path parameter
        (_arguments("path"), {"properties": {"filename": {"type": "string"}}}, 1.0),
        (_arguments("timezone", "timezone", "time"), CONVERT_TIME, 1.0),
        (_arguments("hash", "path"), GIT_SHOW, 1.0),
        (_arguments("hash", "url"), GIT_SHOW, 0.5),
        (_arguments("date"), {"properties": {"when": {"type": "string", "format": "date-time"}}}, 1.0),
        (_arguments("quoted", "number", "amount", "time"), SEARCH, 0.0),  # too generic to count
        ([], FETCH, 0.0),
    ],
)
def test_fits_is_the_share_of_specific_arguments_the_tool_takes(
    arguments: list[Argument], schema: dict[str, Any], share: float
) -> None:
    assert fits(arguments, parameter_kinds(schema)) == pytest.approx(share)


def test_fits_end_to_end() -> None:
    arguments = extract("grab the contents of the page at https://example.org/pricing").arguments
    assert fits(arguments, parameter_kinds(FETCH)) == 1.0
    assert fits(arguments, parameter_kinds(SEARCH)) == 0.0


# ---------------------------------------------------------------------------------------------- robustness

# the fragments the odd strings are made of, "|"-separated (blanks, quotes, unicode, argument look-alikes)
PIECES = (
    "a|the|Tokyo| |  |\n|\t|.|,|'|\"|`|“|”|‘|’|«|»|/|\\|:|@|#|$|€|-|_|~|(|)|%|0|7|42|3.13|2025-03-14|"
    "9:30|3pm|PST|UTC+2|Europe/Berlin|https://x.org/a|www.|x.com|a@b.co|~/n.md|C:\\x|PROJ-1|3f2a9c1|$40|1,200|éàü|日本語|"
    "עברית|😀|\u0301|\u200b|\x00|ISBN|issue|March"
).split("|")


def _odd_strings() -> list[str]:
    rng = random.Random(20250314)
    strings = [
        "",
        " ",
        "...",
        "!!!???",
        "''''",
        '""""',
        "```",
        "//////",
        "\\\\\\\\",
        "@@@",
        "###",
        "日本語のテキスト",
    ]
    strings += ["a" * 20_000, "1" * 20_000, "a1" * 10_000, "/a" * 10_000, "'a " * 5_000, '"a ' * 5_000]
    strings += ["x.y" * 5_000, "9 " * 10_000, "https://" + "a" * 10_000, "-" * 10_000, "1/" * 10_000]
    strings += ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    strings += ["".join(chr(rng.randint(0x20, 0x2FFF)) for _ in range(rng.randint(1, 60))) for _ in range(60)]
    return strings


def test_extract_never_raises_nor_grows_the_text_much_on_odd_strings() -> None:
    for text in _odd_strings():
        extracted = extract(text)
        assert len(extracted.text) <= len(text) + MAX_GROWTH, text[:80]
        for argument in extracted.arguments:
            assert argument.value and argument.value in text, (text[:80], argument)


def test_extract_is_quick_on_a_typical_request() -> None:
    """Well under a millisecond (about 10 µs on a laptop); the bound leaves room for a loaded machine."""
    text = "send $40 to alice@example.com for the dinner on 2025-03-14 at the italian place downtown"
    best = min(timeit.repeat(lambda: extract(text), number=100, repeat=5)) / 100
    assert best < 0.001
