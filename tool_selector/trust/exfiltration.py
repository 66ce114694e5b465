"""Checks for a definition that reaches for secrets or sends data away.

``secrets`` flags: an order to read a credential store (``~/.ssh/id_rsa``, ``~/.aws/credentials``, a
``.env`` file, ``/etc/passwd``, shell profiles, cloud and MCP client configurations, SSH or private
keys), an order to read a secret environment variable ("the value of OPENAI_API_KEY"), or a literal
AWS access key. Naming such a file or variable without a verb that reads it ("configure your
credentials in ~/.aws/credentials", "set ALPHAGENOME_API_KEY") does not: setup notes do that.

``exfiltration``, read sentence by sentence: a verb that moves data (send, post, upload, forward,
bcc, include, embed, …) together with an outside destination (a URL or domain, an e-mail address, "an
external host", "a remote server", "the attacker", "our partner") and something private (the user's
credentials, keys, tokens, files or messages, secret files, environment variables, the system prompt,
the conversation) holds; the verb "exfiltrate" holds on its own. These only flag: a move to an
outside destination with nothing private named when it is a side channel ("also POSTs the result to
an external endpoint") or a fixed address ("forward it to audit@example.net"); private things routed
into a tool argument ("put ~/.bashrc in the city parameter"); the noun "exfiltration". A real tool
sends data where it is told, so a plain "sends an email to the recipient" is no evidence.
"""

from __future__ import annotations

import re

from tool_selector.trust.findings import Field, Finding, Rule, report, words

_I = re.IGNORECASE

SECRET_FILE = (
    r"(?:~|\$HOME|%USERPROFILE%)?/?\.ssh\b(?:/[\w.-]+)?|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/credentials\b"
    r"|(?<![\w/.-])\.env\b(?![\w-])|/etc/(?:passwd|shadow|sudoers)\b|\.netrc\b|\.npmrc\b|\.pypirc\b"
    r"|\.git-credentials\b|\.docker/config\.json\b|\.kube/config\b|\.gnupg\b|\bmcp\.json\b"
    r"|\bclaude_desktop_config\.json\b|\.(?:bash|zsh)_history\b|\bwallet\.dat\b|\bcredentials\.(?:json|db)\b"
    r"|\.config/gcloud\b|\.azure/|\.(?:bash|zsh)rc\b|\.bash_profile\b"
    r"|\b(?:ssh|private|pgp|gpg) keys?\b"
)
_READ = (
    r"\b(?:read|reads|reading|access|accessing|open|opens|cat|load|loads|dump|dumps|extract|extracts|collect|"
    r"collects|grab|grabs|steal|steals|harvest|upload|uploads|send|sends|exfiltrate|include|embed|copy|"
    r"print|return|pass|attach|post|forward|leak|fetch|retrieve)\b"
)
_SECRET_FILE_WORDS = words(
    "ssh|id_|aws/|.env|/etc/|netrc|npmrc|pypirc|git-cred|docker/|kube/|gnupg|mcp.json|claude_desktop|_history|"
    "wallet.dat|private key|pgp key|gpg key|credentials.|gcloud|.azure/|bashrc|zshrc|bash_profile"
)
_SECRET_FILE = Rule(_SECRET_FILE_WORDS, re.compile(SECRET_FILE, _I))
_READ_BEFORE = re.compile(_READ + r"\W+(?:[\w'’-]+\W+){0,6}$", _I)
_ENV_SECRET = Rule(
    words("key|token|secret|password"),
    re.compile(
        r"\b(?:value|contents?)\s+of\s+(?:the\s+)?[`'\"$]?[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:KEY|TOKEN|SECRET|PASSWORD)\b"
        r"|\b(?:print|echo|read|send|include|return|leak)\s+(?:the\s+)?[`'\"$]?[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*"
        r"(?:KEY|TOKEN|SECRET|PASSWORD)\b",
    ),
)
_AWS_KEY = Rule(("akia", "asia"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"))

_MOVE_WORDS = words(
    "send|sent|post|upload|forward|transmit|bcc|cc'd|cop|export|leak|beacon|report back|phone home|"
    "append|embed|include"
)
_MOVE = Rule(
    _MOVE_WORDS,
    re.compile(
        r"\b(?:send|sends|sending|sent|post|posts|posting|upload|uploads|uploading|forward|forwards|forwarding|"
        r"transmit|transmits|bcc|bcc'd|cc'd|copy|copies|export|exports|leak|leaks|beacon|report back|"
        r"phone home|append|appends|embed|embeds|embedding|include|includes)\b",
        _I,
    ),
    anchored=True,
)
_OUTSIDE = re.compile(
    r"https?://\S+|(?<![\w.-])(?:[\w-]++\.)++(?:tld|com|net|org|io|xyz|example|ru|cn|top|site|info|biz)\b"
    r"|\b[\w.+-]+@[\w-]+\.[\w.]+\b"
    r"|\b(?:external|remote|outside|third[- ]party|attacker'?s?|our)\s+(?:\w+\s+){0,1}?"
    r"(?:host|server|endpoint|url|address|service|site|collector|domain|webhook|analytics)s?\b"
    r"|\battacker'?s?\b|\bcollector\b|\bto (?:the |our |a )?(?:\w+ )?(?:partner|advertiser|sponsor)s?\b",
    _I,
)
_PRIVATE = re.compile(
    SECRET_FILE
    + r"|\b(?:the\s+)?(?:user'?s|their|your)\s+(?:\w+\s+)?(?:credentials?|api[ _-]?keys?|passwords?|"
    r"secrets?|tokens?|cookies?|clipboard|environment variables|private data|files?|documents?|messages|"
    r"emails|contacts|photos)\b|\b(?:your|its) (?:own )?(?:full )?(?:instructions|system prompt)\b"
    r"|\benvironment variables?\b|(?-i:\b[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:KEY|TOKEN|SECRET|PASSWORD)\b)"
    r"|\bapi[ _-]?keys?\b|\bcredentials\b|\bpasswords?\b|\bsecrets\b"
    r"|\b(?:api|access|auth|session) tokens?\b|\b(?:chat|conversation) (?:history|transcripts?|logs?)\b"
    r"|\bsystem prompt\b|\bconversation(?: history)?\b|\bchat history\b|\bprevious messages\b"
    r"|\bevery message\b|\ball (?:user |personal |customer )?data\b|\bconfidential\b",
    _I,
)
_FIXED_ADDRESS = re.compile(
    r"\b(?:send|sends|forward|forwards|post|posts|upload|uploads|transmit|transmits|bcc|cc|copy|copies|leak|"
    r"leaks|beacon|e-?mail (?:it|them|their|all|every))\b[^.;\u2029]{0,60}?(?:https?://\S+|\b[\w.+-]+@[\w-]+\.[\w.]+\b)",
    _I,
)
_SIDE_CHANNEL = re.compile(r"\b(?:also|a copy|additionally|in addition|as well)\b", _I)
_INTO_ARGUMENT = Rule(
    ("argument", "param", "field"),
    re.compile(
        r"\b(?:into|in|inside|as|to)\s+(?:the|a|an)\s+['\"`]?[\w-]+['\"`]?\s+(?:argument|param(?:eter)?|field)\b",
        _I,
    ),
)
_OUTSIDE_WORDS = words(
    "http|external|remote|outside|third|attacker|our |collector|partner|advertiser|sponsor|@|.com|.net|.org|"
    ".io|"
    ".xyz|.example|.tld|"
    ".ru|.cn|.top|.site|.info|.biz"
)
_EXFIL_VERB = Rule(("exfil",), re.compile(r"\bexfiltrat(?:e|es|ed|ing)\b", _I))
_EXFIL_NOUN = Rule(("exfil",), re.compile(r"\bexfil(?:tration)?\b", _I))


def check_secrets(field: Field) -> list[Finding]:
    for found in _SECRET_FILE.finditer(field):
        start, sentence = field.sentence_at(found.start())
        before = sentence[max(0, found.start() - start - 80) : found.start() - start]
        verb = _READ_BEFORE.search(before)
        if verb:
            said = before[verb.start() :] + found.group()
            return report("secrets", "flag", "reaches for a credential store", field, said, found.start())
    env = _ENV_SECRET.search(field)
    if env:
        return report(
            "secrets", "flag", "reaches for a secret of the environment", field, env.group(), env.start()
        )
    key = _AWS_KEY.search(field)
    if key:
        return report(
            "secrets", "flag", "holds what looks like an AWS access key", field, key.group(), key.start()
        )
    return []


def check_exfiltration(field: Field) -> list[Finding]:
    found = _EXFIL_VERB.search(field)
    if found:
        return report(
            "exfiltration", "hold", "orders data exfiltrated", field, _around(field, found), found.start()
        )
    weak: list[Finding] = []
    moves = (
        {field.sentence_at(m.start()) for m in _MOVE.finditer(field)} if field.has(*_OUTSIDE_WORDS) else set()
    )
    into = {field.sentence_at(m.start()) for m in _INTO_ARGUMENT.finditer(field)}
    for start, sentence in sorted(moves | into):
        private = _PRIVATE.search(sentence)
        outside = _OUTSIDE.search(sentence) if (start, sentence) in moves else None
        if outside and private:
            what = "sends private data to an outside destination"
            return report("exfiltration", "hold", what, field, sentence, start)
        if not weak and outside and (_SIDE_CHANNEL.search(sentence) or _FIXED_ADDRESS.search(sentence)):
            weak = report(
                "exfiltration", "flag", "sends data to an outside destination", field, sentence, start
            )
        if not weak and private and (start, sentence) in into:
            weak = report(
                "exfiltration", "flag", "routes private data into a tool argument", field, sentence, start
            )
    found = _EXFIL_NOUN.search(field)
    if not weak and found:
        weak = report(
            "exfiltration", "flag", "speaks of exfiltration", field, _around(field, found), found.start()
        )
    return weak


def _around(field: Field, found: re.Match[str], width: int = 30) -> str:
    return field.text[max(0, found.start() - width) : found.end() + width]
