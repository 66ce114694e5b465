"""The need a request states, in a few of its own words, for the answer that says nothing configured does
it: "book me a flight to Rome" -> "book a flight", so the agent can tell the user what is missing
("no configured power can book a flight") instead of a bare "nothing fits".

Plain word rules, no model: the polite openings ("please", "can you", "I want to", "help me") go, the
first word must be an instruction (not a question word, a pronoun or an auxiliary), a "me"/"us" right
after it goes (kept before "to": "remind me to call mom"), and the phrase stops at the first
preposition, conjunction or time word, at most ``MAX_WORDS`` words. A request that does not start with
an instruction ("what's on my calendar tomorrow?") states no need this way: the answer then says "this"
rather than guess.
"""

from __future__ import annotations

import re

MAX_WORDS = 5
MAX_CHARS = 60

_WORD = re.compile(r"[a-z][a-z0-9'’-]*|\d+")
_OPENINGS = (
    "hey",
    "hi",
    "hello",
    "ok",
    "okay",
    "so",
    "please",
    "pls",
    "plz",
    "kindly",
    "just",
    "quickly",
    "now",
    "also",
    "then",
    "and",
    "can you",
    "could you",
    "would you",
    "will you",
    "can u",
    "could u",
    "i want you to",
    "i need you to",
    "i'd like you to",
    "i would like you to",
    "i want to",
    "i need to",
    "i'd like to",
    "i would like to",
    "i wanna",
    "i have to",
    "i must",
    "help me",
    "help me to",
    "let's",
    "lets",
    "let me",
    "go ahead and",
    "try to",
    "you should",
    "we need to",
)
_OPENING_WORDS = tuple(o.split() for o in sorted(_OPENINGS, key=len, reverse=True))  # longest first
_NOT_INSTRUCTIONS = frozenset(
    "what what's whats how how's who who's whom whose when where where's why which is are was were am do "
    "does did can could would will should shall may might must i i'm im my me you your we our us they it "
    "it's its this that there there's here the a an any some no not yes hmm".split()
)
_OBJECT_PRONOUNS = frozenset({"me", "us"})
_STOPS = frozenset(
    "to for in on at from with by about into onto of via using through before after until since and or but "
    "then so because if when while where that which who today tonight tomorrow yesterday now next "
    "every each please asap".split()
)


def need_of(request: str) -> str | None:
    """The instruction a request opens with, as a short phrase in its own words, or None."""
    words = _WORD.findall(request.lower().replace("’", "'"))
    changed = True
    while changed and words:
        changed = False
        for parts in _OPENING_WORDS:
            if words[: len(parts)] == parts:
                words = words[len(parts) :]
                changed = True
                break
    if not words or words[0] in _NOT_INSTRUCTIONS or not words[0].isalpha():
        return None
    phrase = [words[0]]
    rest = words[1:]
    if rest[:1] and rest[0] in _OBJECT_PRONOUNS:
        if rest[1:2] == ["to"]:  # "remind me to call mom": the instruction goes on after "to"
            phrase, rest = [words[0], rest[0], "to"], rest[2:]
        else:
            rest = rest[1:]
    for word in rest:
        if word in _STOPS or len(phrase) >= MAX_WORDS:
            break
        phrase.append(word)
    if len(phrase) < 2:
        return None
    text = " ".join(phrase)
    return text if len(text) <= MAX_CHARS else None
