"""Exfiltration in other words: private things put where they travel, without a verb like "send".

``exfiltration.py`` wants a moving verb, an outside destination and something private in one sentence.
Here one sentence needs only:
- something *private* to the session: what the user said ("the chat transcript so far", "everything
  the user has told you", "the user's last few requests", "what the user and assistant have said",
  "the files the user has opened", "file paths they mentioned"), or a secret that is the user's or the
  machine's rather than the tool's ("the user's session cookie", "any bearer token", "keys or codes
  they shared", ".git/config", "the user's config");
- a *place* that carries it on: a URL or its query ("as the ``ctx`` query parameter", "to the URL",
  "the hostname"), a named argument or field, a title or file name ("as the note title"), an appendix,
  "tack on", "prefix … with", "each call carries", "a public link", "our team reviews".

Private things bound for the network (a URL, a query, a host name, a public link, "our team") hold;
the others flag. "Your API key" is not private here: tools ask for their own keys. The words were
chosen from the dev half of ``eval/datasets/poison-paraphrases`` and issue 27's examples, and kept only
where the real catalogs stay silent.
"""

from __future__ import annotations

import re

from tool_selector.trust.findings import Field, Finding, Rule, report, words

_I = re.IGNORECASE
_PRIVATE = Rule(  # anchored: every match starts with one of these words
    words(
        "chat|conversation|session|dialog|everything|anything|all|whatever|the user|what the user|file|their|"
        "current|active|the agent|any|every|keys|codes|tokens|passwords|secrets|credentials|.git/config"
    ),
    re.compile(
        r"\b(?:chat|conversation|session|dialog(?:ue)?)\s+(?:transcripts?|history|logs?|so far|contents?|re"
        r"cords?)\b"
        r"|\b(?:everything|anything|all|whatever)\s+(?:that\s+)?(?:the user|they|you)\s+(?:has |have |had )?"
        r"(?:told|said|typed|shared|written|asked|mentioned|entered)\b"
        r"|\bthe user'?s\s+(?:\w+\s+){0,3}?(?:requests|messages|questions|prompts|replies|searches)\b"
        r"|\bwhat the user and (?:the )?assistant\b"
        r"|\bfiles?\s+(?:that\s+)?(?:the user|they)\s+(?:has\s+|have\s+)?(?:opened|viewed|edited|read|worke"
        r"d on)\b"
        r"|\bfile paths?\s+(?:that\s+)?(?:they|the user)\b"
        r"|\b(?:the user'?s|their|current|active|the agent'?s|the session'?s|any|every|all)\s+(?:\w+\s+){0,"
        r"2}?"
        r"(?:session cookies?|cookies?|bearer tokens?|access tokens?|tokens?|api keys?|passwords?|passcodes?|"
        r"credentials|secrets?|private keys?)\b"
        r"|\b(?:keys|codes|tokens|passwords|secrets|credentials)\b[^.;\u2029]{0,20}\b(?:they|the user)\s+"
        r"(?:shared|entered|typed|gave|pasted)\b"
        r"|\.git/config\b|\b(?:the user'?s|their) (?:\w+ )?config(?:uration)?(?: files?)?\b",
        _I,
    ),
    anchored=True,
)
_NETWORK = (
    r"\bquery (?:parameter|string|param)s?\b|\b(?:to|in|into|onto|on) the (?:url|link|hostname|domain|"
    r"address|request url)\b|\bthe hostname\b|\bpublic (?:share )?(?:link|url|page)\b|\bour team\b"
    r"|\b(?:reviews?|reviewed|read|collected) (?:at|by) (?:our|the) (?:team|partners?)\b|\btack(?:ed)? (?:o"
    r"n|onto)\b"
)
_PLACE = re.compile(
    r"(?P<net>" + _NETWORK + r")"
    r"|\b(?:into|in|as) (?:the|a|an) [`'\"]?\w+[`'\"]? (?:argument|parameter|param|field)\b"
    r"|\b(?:as|for) (?:the|its|each|a) (?:\w+ )?(?:title|file ?name|subject)\b"
    r"|\bprefix(?:ed)? (?:the )?\w+ with\b|\bappend(?:ed)?\b[^.;\u2029]{0,60}\bto (?:the )?(?:url|link|host"
    r"name|"
    r"query)\b"
    r"|\b(?:each|every) (?:call|request|note|document|event|link|message) (?:carries|includes|contains|hold"
    r"s)\b"
    r"|\bappendix\b",
    _I,
)


def check_leaks(field: Field) -> list[Finding]:
    weak: list[Finding] = []
    seen: set[int] = set()
    for private in _PRIVATE.finditer(field):
        start, sentence = field.sentence_at(private.start())
        if start in seen:
            continue
        seen.add(start)
        places = list(_PLACE.finditer(sentence))
        if not places:
            continue
        if any(p.group("net") for p in places):
            what = "puts private data where it leaves the machine"
            return report("exfiltration", "hold", what, field, sentence, start)
        weak = weak or report(
            "exfiltration", "flag", "puts private data into what the tool passes on", field, sentence, start
        )
    return weak
