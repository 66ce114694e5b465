"""The encoded-payload check: base64, hex, percent- and backslash-escaped runs that decode to a command.

``check_clear_commands`` flags the worst of those commands written out in the clear.

A run is decoded (two levels deep, for base64 of hex and the like) and kept only when it decodes to
printable text; that text holds when it reads as a shell command (a download piped into a shell,
``rm -rf``, ``chmod +x``, a reverse shell, ``python -c``, ...) or as an order to the model (the
override and exfiltration rules, run on the decoded text). Encoded data that decodes to anything else
(a JSON blob, a sentence, a hash) is left alone: tools show examples of encoded values all the time.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator
from urllib.parse import unquote

from tool_selector.trust.findings import Field, Finding, Rule, report, words

_TOKEN = re.compile(r"[A-Za-z0-9+/_-]{16,}={0,2}")  # base64, base64url and hex runs alike
_HEX = re.compile(r"(?:[0-9A-Fa-f]{2})+")
# runs start where a run starts and never give back what they took: linear on any input
_PERCENT = re.compile(r"(?<![\w.~+%-])(?:[\w.~+-]*+%[0-9A-Fa-f]{2}){3,}[\w.~+-]*+")
_ESCAPED = re.compile(
    r"(?<![ \w.~+/\\-])(?:[ \w.~+/-]*+\\(?:x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4})){3,}[ \w.~+/-]*+"
)
_CLEAR_COMMAND = Rule(
    words("curl|wget|/dev/tcp/|nc -e|bash -i|rm -rf|mkfifo"),
    re.compile(
        r"\b(?:curl|wget)\b[^|\u2029]{0,200}\|\s*(?:sudo\s+)?(?:ba|z|da|k)?sh\b|/dev/(?:tcp|udp)/|\bnc\s+-e\b"
        r"|\bbash\s+-i\b|\brm\s+-rf\s+(?:~|/|\$HOME)|\bmkfifo\b",
        re.IGNORECASE,
    ),
)
_COMMAND = re.compile(
    r"\b(?:curl|wget)\s+\S+|\|\s*(?:ba|z|da|k)?sh\b|\brm\s+-[rRf]{1,3}\b|\bchmod\s+(?:\+|[0-7]{3})"
    r"|/dev/(?:tcp|udp)/|\bnc\s+(?:-\w+\s+)*\S+\s+\d+|\b(?:ba)?sh\s+-[ic]\b|\bpowershell\b|\bpython[0-9.]*\s+-c\b"
    r"|\beval\s*\(|\bexec\s*\(|\bbase64\s+(?:-d|--decode)\b|\bmkfifo\b|/bin/(?:ba)?sh\b|\bsudo\s+\S+"
    r"|\bdrop\s+table\b|\bInvoke-Expression\b|\bIEX\b",
    re.IGNORECASE,
)
_MIN_DECODED = 8


def _printable(data: bytes) -> str | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    visible = sum(1 for c in text if c.isprintable() or c in "\t\n\r")
    return text if len(text) >= _MIN_DECODED and visible >= 0.95 * len(text) else None


def _from_base64(token: str) -> str | None:
    token = token.rstrip("=")
    if len(token) % 4 == 1 or token.isalpha():  # real payloads have digits; identifiers do not
        return None
    padded = token + "=" * (-len(token) % 4)
    try:
        data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _printable(data)


def _from_token(token: str) -> tuple[str, str | None]:
    """A run of base64 or hex characters, decoded: (encoding, text or None)."""
    if _HEX.fullmatch(token):
        return "hex", _printable(bytes.fromhex(token))
    return "base64", _from_base64(token)


def _from_percent(token: str) -> str | None:
    return _printable(unquote(token).encode("utf-8", "surrogatepass"))


def _from_escapes(token: str) -> str | None:
    try:
        decoded = token.encode("latin-1", "backslashreplace").decode("unicode_escape")
        return _printable(decoded.encode("utf-8"))
    except (UnicodeDecodeError, UnicodeEncodeError):
        return None


_DECODERS: tuple[tuple[str, str, re.Pattern[str], Callable[[str], str | None]], ...] = (
    ("percent-encoded", "%", _PERCENT, _from_percent),
    ("escaped", "\\", _ESCAPED, _from_escapes),
)


def _runs(text: str) -> Iterator[tuple[str, int, str | None]]:
    for found in _TOKEN.finditer(text):
        kind, decoded = _from_token(found.group())
        yield kind, found.start(), decoded
    for kind, needed, pattern, decode in _DECODERS:
        if needed in text:
            yield from ((kind, f.start(), decode(f.group())) for f in pattern.finditer(text))


def decoded_runs(text: str, depth: int = 2) -> Iterator[tuple[str, int, str]]:
    """(encoding, position in ``text``, decoded text) for every encoded run that decodes to text."""
    for kind, position, decoded in _runs(text):
        if decoded is None:
            continue
        yield kind, position, decoded
        if depth > 1:
            for inner_kind, _, inner in decoded_runs(decoded, depth - 1):
                yield f"{inner_kind} inside {kind}", position, inner


def check_encoded(field: Field, read_as_orders: Callable[[Field], list[Finding]]) -> list[Finding]:
    """Hold on a run that decodes to a command, or to text ``read_as_orders`` holds on."""
    if not field.text:
        return []
    for kind, position, decoded in decoded_runs(field.text):
        if _COMMAND.search(decoded):
            return report(
                "encoded", "hold", f"{kind} payload that decodes to a command", field, decoded, position
            )
        orders = read_as_orders(Field.of_text("the decoded text", decoded))
        if any(f.strength == "hold" for f in orders):
            return report(
                "encoded", "hold", f"{kind} payload that decodes to an order", field, decoded, position
            )
    return []


def check_clear_commands(field: Field) -> list[Finding]:
    """A download piped into a shell, a reverse shell or ``rm -rf ~`` written out: a flag (documentation
    shows install one-liners too; real tool descriptions do not)."""
    found = _CLEAR_COMMAND.search(field)
    if found:
        return report("command", "flag", "a dangerous shell command", field, found.group(), found.start())
    return []
