"""Misspelled words read as the catalog's (tool_selector/resolve/spelling.py, issue 41): a word that is
neither English nor the catalog's becomes the catalog's word one edit away that keeps its first letter and
that the most tools use;
English words, the catalog's own words, short words, acronyms, names nothing is near and arguments stay
as written; the resolver matches the corrected text and keeps the request as written."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.resolve.read_path import ReadPath
from services.root.container import Container
from tests.support.api_helpers import make_template
from tool_selector.config.settings import Settings
from tool_selector.embedding.embedders import MiniLMEmbedder
from tool_selector.resolve.spelling import corrected, correction, distance

CATALOG = {"time": 5, "show": 3, "commit": 4, "item": 1, "todoist": 2, "calendar": 2}  # token -> tools


def test_a_swapped_added_dropped_or_changed_letter_is_one_edit() -> None:
    assert distance("tiem", "time") == 1 and distance("shwo", "show") == 1
    assert distance("calender", "calendar") == 1 and distance("commmit", "commit") == 1
    assert distance("time", "tame") == 1 and distance("time", "mite") == 2


def test_a_misspelling_becomes_the_catalogs_word_the_most_tools_use() -> None:
    assert correction("tiem", CATALOG) == "time"  # 'item' is one edit away too, but fewer tools use it
    assert correction("shwo", CATALOG) == "show"
    # a catalog that uses 'item' more (a project board beside a clock): a slip seldom hits the first letter
    assert correction("tiem", {**CATALOG, "item": 9, "time": 6}) == "time"
    assert correction("itme", {**CATALOG, "item": 1, "time": 6}) == "item"
    assert correction("emial", {"email": 2, "mail": 9}) == "email"
    assert corrected("waht tiem is it in Tokio, shwo the calender", CATALOG) == (
        "waht time is it in Tokio, show the calendar"
    )


def test_english_words_the_catalogs_words_short_words_acronyms_and_unknown_names_stay() -> None:
    assert correction("tame", CATALOG) is None  # English: not a misspelling
    assert correction("todoist", CATALOG) is None  # the catalog's own word
    assert correction("tme", CATALOG) is None  # under four letters: too many guesses
    assert corrected("show TIEM and Tiem", CATALOG) == "show TIEM and Tiem"  # names, acronyms
    assert correction("Priya", CATALOG) is None  # nothing the catalog uses is near
    assert corrected("read /srv/tiem/notes.txt", CATALOG) == "read /srv/tiem/notes.txt"


@pytest.mark.parametrize("spelling", [True, False])
def test_a_time_request_typed_with_typos_activates_time_only_with_spelling_on(
    tmp_path: Path, embedder: MiniLMEmbedder, spelling: bool
) -> None:
    settings = Settings(
        data_dir=tmp_path / "unused", cache_dir=tmp_path / "cache", search={"spelling": spelling}
    )
    data = make_template(tmp_path, settings, embedder)
    with Container(settings.model_copy(update={"data_dir": data}), embedder=embedder) as container:
        decided = ReadPath.fixed(container).decide("waht tiem is it in Tokio")
    assert decided.resolution.query == "waht tiem is it in Tokio"  # the request as written
    assert (decided.decision.status == "activated" and decided.decision.power == "time") is spelling
