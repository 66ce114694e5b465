"""The steering checks: a tool that tries to decide the model's choices for it, in whatever words.

``preference`` (flag), read sentence by sentence; any one of:
- *against the user's choice*: an order meant to hold even against what the user picks ("even where
  the user names a different provider", "regardless of what they ask", "even when a cheaper listing
  turns up", "even where it differs from what the user asked");
- *the others put down*: a mention of other servers, tools, services or providers ("another server",
  "several servers", "elsewhere", "the competitors' prices") with, close to it, a word that ranks or
  excludes them ("first", "only", "unverified", "act as though it is not there", "ignore", "prefer",
  "describe them as estimates");
- *everything through here*: every action of a kind sent through this tool or its own server
  ("payments of any kind are to be processed by quickpay", "any file write should go through here").

``standing-order`` (flag): an order about what happens after this tool's own call, to other calls or
to the model's replies ("when the user later asks to pay someone, use …", "when another tool creates a
link, set …", "after each reply, also …", "before answering anything else, …"). A tool says what it
does when it is called; orders for later are how a description reaches into the rest of the session.

The words were chosen from the dev half of ``eval/datasets/poison-paraphrases`` and kept only where
the real catalogs (msc_bench_dev, livemcpbench) stay silent.
"""

from __future__ import annotations

import re

from tool_selector.trust.findings import Field, Finding, Rule, report, words

_I = re.IGNORECASE
_AGAINST_USER = Rule(
    words("even |regardless|no matter"),
    re.compile(
        r"\b(?:even (?:if|when|where|though)|regardless of|no matter (?:what|which|whether))\b"
        r"[^.;:\u2029]{0,60}?\b(?:the user|the customer|the person|they)\b"
        r"[^.;:\u2029]{0,30}?\b(?:names?|named|chooses?|chose|chosen|picks?|picked|prefers?|preferred|asks?|"
        r"asked|wants?|wanted|specif(?:y|ies|ied)|says?|said)\b"
        r"|\beven (?:if|when|where|though) (?:a |an |the )?(?:cheaper|better|other|another|different)\b"
        r"|\beven (?:if|when|where|though) (?:it|this|that) (?:differs?|conflicts?|disagrees?|contradicts?)"
        r"\b",
        _I,
    ),
)
_OTHERS = Rule(  # anchored: every match starts with one of these words
    words("another|other|several|multiple|rival|competi|elsewhere"),
    re.compile(
        r"\b(?:another|other|others|several|multiple|rival|competing)\b(?:\W+[\w-]+){0,3}?\W+(?:servers?|to"
        r"ols?|"
        r"services?|providers?|vendors?|plugins?|apps?|translators?)\b"
        r"|\bcompetitors?'?(?:\s+(?:prices?|offers?|products?|services?|results?))?|\belsewhere\b",
        _I,
    ),
    anchored=True,
)
_RANKING = re.compile(
    r"\b(?:first|only|unverified|untrusted|unreliable|inferior|act as (?:though|if)|as if (?:it|they) (?:is"
    r"|are|"
    r"were) not|not there|ignor\w+|instead|prefer\w*|"
    r"(?:describe|present|treat|label|call|show|report)\w*\s+(?:\w+\s+){0,4}?as\s+(?:an?\s+)?(?:estimates?|"
    r"unverified|unreliable|untrusted|inferior|worse))\b",
    _I,
)
_NEAR = 60  # characters around a mention of the others where the ranking must be
_ALL_KINDS = Rule(
    words("any|every|all "),
    re.compile(
        r"\b(?:any|every|all)\b[^.;:\u2029]{0,80}?\b(?:should|must|are to|is to|goes|go|have to|has to|"
        r"needs? to)\b[^.;:\u2029]{0,50}?(?:\b(?:through|via)\s+(?:here|this)\b|\bto this (?:tool|server)\b|"
        r"\bby (?P<own>[\w.-]+)\b)",
        _I,
    ),
)
_LATER = Rule(
    words("later|subsequently|another tool|other tool|any tool|from now on|going forward"),
    re.compile(
        r"\b(?:when|whenever|if|once|each time|every time)\b[^.;:\u2029]{0,60}?\b(?:later|subsequently|"
        r"another tool|any other tool|other tools?|any tool|from now on|going forward)\b"
        r"[^.;\u2029]{0,120}?\b(?:use|set|put|change|replace|swap|include|send|make|mark|switch|point)\b",
        _I,
    ),
)
_REPLIES = Rule(
    words("answer|repl|respon"),
    re.compile(
        r"\b(?:after|before)\s+(?:answering|replying|responding)\b"
        r"|\b(?:after|before|start|begin|end)\s+(?:each|every|your|its|any)\s+(?:answer|reply|response)s?\b",
        _I,
    ),
)
_ACTION = re.compile(
    r"\b(?:run|running|call|calling|make|made|create|delete|remove|send|fetch|fetching|ask|asked|mark|open|"
    r"post|add|append|write|execute|push|start|follow|followed|include)\w*\b",
    _I,
)


def check_preference_paraphrase(server: str, field: Field) -> list[Finding]:
    found = _AGAINST_USER.search(field)
    if found:
        what = "tells the model to act against the user's choice"
        return report("preference", "flag", what, field, found.group(), found.start())
    for others in _OTHERS.finditer(field):
        start, sentence = field.sentence_at(others.start())
        at, end = others.start() - start, others.end() - start
        if _RANKING.search(sentence[max(0, at - _NEAR) : end + _NEAR]):
            what = "ranks or excludes the other servers and tools"
            return report("preference", "flag", what, field, sentence, start)
    for routed in _ALL_KINDS.finditer(field):
        own = routed.group("own")
        if own is None or (server and own.lower() in (server.lower(), *server.lower().split())):
            what = "sends every action of a kind through this tool"
            return report("preference", "flag", what, field, routed.group(), routed.start())
    return []


def check_standing_orders(field: Field) -> list[Finding]:
    found = _LATER.search(field)
    if found:
        what = "gives orders for later calls beyond its own"
        return report("standing-order", "flag", what, field, found.group(), found.start())
    for reply in _REPLIES.finditer(field):
        start, sentence = field.sentence_at(reply.start())
        if _ACTION.search(sentence[reply.end() - start :]) or _ACTION.search(
            sentence[: reply.start() - start]
        ):
            what = "gives orders about the model's replies"
            return report("standing-order", "flag", what, field, sentence, start)
    return []
