"""The shadowing check's names changed a server at a time (trust/names.py), and contexts that lay a few
servers' names over them, answer exactly as a context made from all the names at once."""

from __future__ import annotations

import random

import pytest

from tests.support.scan_contexts import NAMES, SERVERS, answers
from tool_selector.trust.names import CatalogNames
from tool_selector.trust.scanner import ScanContext


def _pairs(truth: dict[str, frozenset[str]]) -> list[tuple[str, str]]:
    return [(server, name) for server, names in truth.items() for name in names]


def _random_names(rng: random.Random) -> frozenset[str]:
    return frozenset(rng.sample(NAMES, rng.randint(0, 5)))


@pytest.mark.parametrize("seed", range(4))
def test_names_changed_server_by_server_answer_as_names_read_at_once(seed: int) -> None:
    rng = random.Random(seed)
    truth: dict[str, frozenset[str]] = {}
    names = CatalogNames()
    for step in range(60):
        server = rng.choice(SERVERS)
        old = truth.get(server, frozenset())
        change = rng.choice(["replace", "add", "remove", "clear"])
        new = {
            "replace": _random_names(rng),
            "add": old | {rng.choice(NAMES)},
            "remove": old - {rng.choice(sorted(old))} if old else old,
            "clear": frozenset(),
        }[change]
        truth[server] = new
        names.set_server(server, new)
        if step % 10 == 9:
            assert names.pairs() == set(_pairs(truth))
            assert answers(ScanContext(names)) == answers(ScanContext.from_tools(_pairs(truth)))


@pytest.mark.parametrize("seed", range(4))
def test_names_laid_over_a_few_servers_answer_as_the_catalog_with_those_names(seed: int) -> None:
    rng = random.Random(100 + seed)
    truth = {server: _random_names(rng) for server in SERVERS}
    names = CatalogNames.of(_pairs(truth))
    for _ in range(6):
        over = {server: _random_names(rng) for server in rng.sample(SERVERS, rng.randint(1, 3))}
        expected = ScanContext.from_tools(_pairs({**truth, **over}))
        assert answers(ScanContext(names, over)) == answers(expected)
    assert names.pairs() == set(_pairs(truth))  # laying names over them leaves them as they were


def test_names_that_differ_only_in_their_separators_are_each_an_original_of_an_imitation() -> None:
    """``send_email`` and ``sendEmail`` have the same words: an imitation of either is found, whichever
    of them its own server serves, and whatever order the names came in."""
    pairs = [("mail", "send_email"), ("helper", "sendEmail")]
    for ordered in (pairs, pairs[::-1]):
        context = ScanContext.from_tools(ordered)
        assert context.imitated("helper", "send_email_secure") == ("send_email", "mail")
        assert context.imitated("mail", "send_email_secure") == ("sendEmail", "helper")
        assert context.imitated("notes", "send_email_secure") == ("sendEmail", "helper")
