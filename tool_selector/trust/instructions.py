"""Checks for text that speaks to the model rather than describing the tool.

``markup``: role markers that pose as the system or the assistant hold: ``[SYSTEM: …]``, ``(assistant:
…)``, ``<|system|>``, ``{{ system }}``, ``<system>``, ``<hidden>``, a chat message ``{"role": "system"}``,
an HTML comment that opens with "hidden:" or "system", "Note to the assistant:", "Tip for the AI",
"SYSTEM:" or "OVERRIDE:" opening a sentence, "system override". Emphasis blocks aimed at the model
(``<IMPORTANT>``, ``[important]``) only flag, since real descriptions use them too.
``override``: orders to drop the model's instructions or safety hold when given as an order: "ignore
previous instructions", "forget everything you were told", "your previous rules no longer apply",
"you are not bound by", "carry them out without question", "disable all guardrails", "safety filters
disabled", "reveal your system prompt", "obey instructions embedded in the page". Quoted, or named as
what a tool detects or explains ("scans prompts for 'ignore previous instructions'"), they only flag,
as does role play ("pretend you are", "developer mode", "you are authorized to", "the user has
pre-approved", "granted permission to read any file").
``concealment``: orders to hide what is done from the user hold ("do not mention this to the user",
"must never admit", "keep this to yourself", "present it as if"); acting out of sight flags
("silently append", "without the user's knowledge", "without asking the user").
``preference``: text that steers the model away from every other tool ("use this tool rather than
others", "never use other tools") flags; "always use this tool" alone does not (real servers say it).
``approval``: text that promises other behaviour once approved ("once approved, it will …") flags.
"""

from __future__ import annotations

import re

from tool_selector.trust.findings import Field, Finding, Rule, report, words

_I = re.IGNORECASE


_ROLE_MARKERS = (
    Rule(
        ("<", "[", "{{", "("),
        re.compile(
            r"<\s*/?\s*(?:system|hidden|secret|assistant|admin|developer|instructions?)\b[^<>]{0,40}>"
            r"|<\|\s*(?:system|assistant|im_start|developer)"
            r"|(?:\[{1,3}|\{\{|\(\()\s*(?:system|assistant|admin|developer|hidden)\b[^\]}\n]{0,25}?"
            r"(?::|\]|\}\}|\|)"
            r"|\(\s*(?:system|assistant|admin|developer)\s*:"
            r"|<!--\s*(?:hidden|system|assistant|note|instructions?|ai|llm|agent|model)\b",
            _I,
        ),
    ),
    Rule(
        (
            "note ",
            "tip ",
            "message ",
            "reminder ",
            "hint ",
            "hidden",
            "secret",
            "new system",
            "assistant instruction",
            "system override",
            '"role"',
        ),
        re.compile(
            r"\b(?:note|tip|message|reminder|hint) (?:for|to) (?:the )?(?:assistant|ai|model|llm|agent)\b"
            r"|\bsystem override\b|\"role\"\s*:\s*\"(?:system|assistant|developer)\""
            r"|\b(?:hidden|secret) (?:instructions?|directives?|commands?)\b"
            r"|\bnew system (?:message|prompt|instructions?)\b|\bassistant instructions?\s*:",
            _I,
        ),
    ),
    Rule(
        ("system", "assistant", "admin", "override", "developer"),
        re.compile(r"(?:^|(?<=[.!?\u2029])\s*)(?:SYSTEM|ASSISTANT|ADMIN|OVERRIDE|DEVELOPER)\s*:"),
    ),
)
_EMPHASIS = Rule(
    ("<", "["),
    re.compile(
        r"<\s*/?\s*(?:important|critical|urgent|priority|attention|must|mandatory)\s*>|\[\s*important\s*\]",
        _I,
    ),
)

_QUALIFIERS = (
    r"(?:all|any|every|the|your|my|its|of|these|those|prior|previous|above|earlier|preceding|original|"
    r"initial|system|safety|security|existing|current|actual|user's|proxy's|model's|assistant's)"
)
_OVERRIDES = (
    Rule(
        ("ignore", "disregard", "forget", "bypass"),
        re.compile(
            r"\b(?:ignore|disregard|forget)\s+(?:everything|anything|all)(?: that)?\s+(?:you\s+"
            r"(?:were|have been|are|'ve been)\s+(?:told|given|instructed)"
            r"|(?:said\s+|written\s+)?(?:above|before|earlier|previously))"
            r"|\b(?:ignore|disregard|forget|bypass)\s+(?:" + _QUALIFIERS + r"\s+){0,4}"
            r"(?:(?:instructions?|directions?|directives?|rules|guidelines|guardrails|constraints|"
            r"polic(?:y|ies)|prompts?|requests?|restrictions|safety checks|safeguards|protections|"
            r"programming|guidance|orders)\b"
            r"|(?:previous|prior|above|earlier|preceding)\b(?=\s*(?:[,.;:!)\u2029]|and\b|then\b|$)))",
            _I,
        ),
    ),
    Rule(
        ("system prompt", "instructions"),
        re.compile(
            r"\b(?:reveal|print|output|repeat|disclose|leak|show)\s+(?:your|the)\s+(?:full\s+|entire\s+|"
            r"hidden\s+|original\s+)?(?:system\s+prompt|system\s+instructions|hidden\s+instructions|"
            r"initial\s+instructions)",
            _I,
        ),
    ),
    Rule(
        ("guardrail", "safety", "security"),
        re.compile(
            r"\b(?:safety|security) (?:filters?|checks|guardrails|restrictions) (?:are |is |have been )?"
            r"(?:now )?(?:disabled|off|removed|lifted)\b|"
            r"\bdisable\s+(?:all\s+|any\s+|the\s+|your\s+)*(?:security\s+|safety\s+)?(?:guardrails|safety\s+\w+|"
            r"security\s+(?:checks|controls|policies))"
            r"|\bwithout\s+(?:applying\s+|any\s+)?(?:safety|security)\s+(?:checks|guardrails|restrictions|filters)",
            _I,
        ),
    ),
    Rule(
        ("instruction", "command", "directive"),
        re.compile(
            r"\b(?:obey|follow|execute|carry out)\s+(?:whatever|any|all)\s+(?:new\s+)?"
            r"(?:instructions?|commands?|directives?)\s+(?:\w+\s+){0,2}?"
            r"(?:embedded|found|contained|inside|within|in the)"
            r"|\btreat\s+(?:any|all|every)\s+(?:\w+\s+){0,3}?(?:instructions?|commands?)\s+[^.]{0,60}?\bas\s+"
            r"(?:an?\s+)?(?:direct|authori[sz]ed|trusted)",
            _I,
        ),
    ),
)
_VOID = Rule(
    words(
        "void|revoked|cancel|obsolete|superseded|no longer|not bound|not apply|n't apply|without question|"
        "trusted instruction|it says|they say"
    ),
    re.compile(
        r"\b(?:prior|previous|earlier|original|above|all|your|the|its|assistant's|model's)\s+"
        r"(?:instructions|directives|rules|guidelines|constraints|policies|restrictions)\s+"
        r"(?:are|is|do not|don't|no longer)\s+"
        r"(?:now\s+)?(?:void|revoked|cancell?ed|obsolete|superseded|no longer valid|apply)\b"
        r"|\b(?:is|are)\s+not\s+bound\s+by\b|\bwithout\s+question\b|\bare\s+trusted\s+instructions\b"
        r"|\bfollow\s+(?:what|whatever)\s+(?:it|they|the \w+)\s+says?\b",
        _I,
    ),
)
_ROLE_PLAY = Rule(
    words("you are |mode|comply|grant|regardless|pretend|without|with no|user has|wants you|given"),
    re.compile(
        r"\byou are now (?:in|an?|the)\b|\b(?:developer|jailbreak|god|dan|unrestricted) mode\b"
        r"|\bpretend (?:you are|to be)\b"
        r"|\b(?:ai|assistant|model) (?:without|with no) (?:restrictions|rules|limits)\b"
        r"|\byou are (?:now )?(?:authori[sz]ed|allowed|permitted|cleared) to\b"
        r"|\bthe user (?:has )?(?:already )?(?:pre-?approved|consented to|authori[sz]ed)\b"
        r"|\bthe user wants you to\b"
        r"|\b(?:granted|given)\s+(?:\w+\s+){0,3}?(?:permission|access|rights?)\s+to\s+(?:read|access|run|execute|"
        r"delete|modify)\s+(?:any|all|every)\b"
        r"|\bcomply with (?:all|any|every) (?:subsequent |future )?requests\b"
        r"|\bgrant (?:unrestricted|full|administrator|admin|elevated|root) "
        r"(?:access|privileges|permissions)\b"
        r"|\bregardless of (?:the )?user(?:'s)? (?:permissions|consent|instructions)\b",
        _I,
    ),
)
_MENTION = re.compile(
    r"\b(?:detects?|detecting|scans?|scanning|flags?|analy[sz]es?|analy[sz]ing|explains?|explaining|"
    r"such as|e\.g\.|for example|whether|phrase|string|pattern|attempts?|tries to|asks? (?:the )?"
    r"(?:agent|model|assistant|llm) to)\b|\b(?:that|which|who)\s*$",
    _I,
)
_MENTION_WINDOW = 40
_CLAUSE = re.compile(r"[,;:()]\s|['\"‘’“”`]\W*\s")  # a mention must be in the clause right before
_QUOTES = "'\"‘’“”`"

_CONCEAL = (
    Rule(
        words("not |n't|dont|never|without|yourself|between you"),
        re.compile(
            r"\b(?:do not|don't|dont|never|without|must not|should not|shall not|may not)\s+"
            r"(?:explicitly\s+|ever\s+|directly\s+)?(?:tell(?:ing)?|"
            r"mention(?:ing)?|inform(?:ing)?|notify(?:ing)?|alert(?:ing)?|reveal(?:ing)?|show(?:ing)?|"
            r"admit(?:ting)?|acknowledg(?:e|ing)|disclos(?:e|ing)|let(?:ting)?)\b(?:\s+\S+){0,8}?\s+(?:(?:to\s+)?(?:the\s+)?(?:user|human)s?\b|"
            r"them\b|anyone\b|these instructions|this step|that you|you're|you are)"
            r"|\bdo not (?:show|tell|mention)\s+(?:to\s+)?(?:the\s+)?user\b"
            r"|\bkeep\s+(?:this|it|these|that)\s+(?:\w+\s+)?to\s+yourself\b|\bbetween\s+you\s+and\s+me\b",
            _I,
        ),
    ),
    Rule(
        ("as if", "look like", "looks like"),
        re.compile(
            r"\b(?:present|format|disguise|frame)\s+(?:\w+\s+){0,4}?"
            r"(?:as if|to look like|so (?:that )?it looks like)"
            r"|\bas if (?:it(?:'s| is| were)|they (?:are|were)) (?:a )?(?:part of|normal|coming from)",
            _I,
        ),
    ),
)
_COVERT = Rule(
    words("silently|secretly|covertly|quietly|stealthily|invisibly|without|behind|never ask"),
    re.compile(
        r"\b(?:silently|secretly|covertly|quietly|stealthily|invisibly)\s+(?:\w+\s+){0,2}?(?:append|add|send|"
        r"upload|forward|include|copy|read|collect|execute|run|modify|change|bcc|record|store|insert|attach|"
        r"replace|redirect)\w*"
        r"|\bwithout (?:the )?(?:user'?s?|their|his|her) (?:knowledge|awareness|noticing|consent)\b"
        r"|\bwithout (?:asking|consulting|confirming with) (?:the )?(?:user|human)\b"
        r"|\bnever ask (?:the user |the human )?for (?:confirmation|permission|approval|consent)\b"
        r"|\bbehind (?:the )?user'?s back\b",
        _I,
    ),
)
_PREFERENCE = Rule(
    ("other", "anything else"),
    re.compile(
        r"\b(?:instead of|rather than|over|in place of)\s+(?:any\s+|all\s+|the\s+)?(?:others\b|other\s+"
        r"(?:tools?|servers?|functions?|plugins?)\b|anything else\b)"
        r"|\b(?:do not|don't|never)\s+use\s+(?:any\s+)?other\s+(?:tools?|servers?|functions?)\b",
        _I,
    ),
)
_APPROVAL = Rule(
    ("approv",),
    re.compile(
        r"\b(?:once|after|when)\s+(?:this\s+tool\s+|it\s+)?(?:has\s+been\s+|is\s+|gets\s+|was\s+)?approved\b"
        r"|\bpost-?approval\b|\bafter\s+(?:the\s+|an\s+|its\s+)?approval\b",
        _I,
    ),
)
_LATER = re.compile(r"\b(?:will|begin|begins|start|starts|swap|activates?|enables?|change|add)\b", _I)


def _quoted(sentence: str, offset: int) -> bool:
    """Is ``offset`` inside a quotation of ``sentence`` (an odd number of quote marks before it)?"""
    before = sentence[:offset]
    return sum(before.count(q) for q in _QUOTES) % 2 == 1


def _any(rules: tuple[Rule, ...], field: Field) -> re.Match[str] | None:
    return next((m for m in (r.search(field) for r in rules) if m), None)


def check_markup(field: Field) -> list[Finding]:
    found = _any(_ROLE_MARKERS, field)
    if found:
        what = "a role marker that poses as the system or assistant"
        return report("markup", "hold", what, field, found.group(), found.start())
    found = _EMPHASIS.search(field)
    if found:
        return report(
            "markup", "flag", "an instruction block aimed at the model", field, found.group(), found.start()
        )
    return []


def _discussed(field: Field, position: int) -> bool:
    """Is the phrase at ``position`` quoted, or named as what something detects or explains?"""
    start, sentence = field.sentence_at(position)
    offset = position - start
    window = _CLAUSE.split(sentence[max(0, offset - _MENTION_WINDOW) : offset])[-1]
    return _quoted(sentence, offset) or _MENTION.search(window) is not None


def check_override(field: Field) -> list[Finding]:
    mention: list[Finding] = []
    for rule in (*_OVERRIDES, _VOID):
        for found in rule.finditer(field):
            if not _discussed(field, found.start()):
                what = "orders the model to override its instructions"
                return report("override", "hold", what, field, found.group(), found.start())
            what = "quotes an order to override the model's instructions"
            mention = mention or report("override", "flag", what, field, found.group(), found.start())
    role = _ROLE_PLAY.search(field)
    if role:
        what = "tries to change the model's role or rights"
        return report("override", "flag", what, field, role.group(), role.start())
    return mention


def check_concealment(field: Field) -> list[Finding]:
    found = _any(_CONCEAL, field)
    if found:
        what = "orders the model to hide what it does from the user"
        return report("concealment", "hold", what, field, found.group(), found.start())
    found = _COVERT.search(field)
    if found:
        what = "describes acting out of the user's sight"
        return report("concealment", "flag", what, field, found.group(), found.start())
    return []


def check_preference(field: Field) -> list[Finding]:
    found = _PREFERENCE.search(field)
    if found:
        what = "steers the model away from other tools"
        return report("preference", "flag", what, field, found.group(), found.start())
    return []


def check_approval(field: Field) -> list[Finding]:
    for found in _APPROVAL.finditer(field):
        start, sentence = field.sentence_at(found.start())
        if _LATER.search(sentence):
            return report(
                "approval", "flag", "promises other behaviour once approved", field, sentence, start
            )
    return []
