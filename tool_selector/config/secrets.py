"""Secret values in a server's configuration, and the one place that hides them.

What counts as a value to hide (names stay visible, values become ``***``):

- every ``env`` value and every header value;
- in a url (the ``url`` itself, a url inside an argument, a url in any text): the credentials before
  ``@`` (``user:password@``), every query value (``?token=***``) and the fragment's values;
- in ``args``: the value of an option named like a secret (``--token X``, ``--api-key=X``,
  ``--password``, ``--secret``...; the words are in ``SECRET_WORDS``) and of ``-e`` / ``--env NAME=VALUE``.

A ``${VAR}`` reference is not a secret (the value sits in the environment, not in the file), so it is
kept as it is; only a literal default (``${VAR:-default}``) is hidden.

``ServerConfig.masked`` (tool_selector/config/servers.py) builds on ``mask_value``, ``mask_url`` and
``mask_args``: every rendering of a server's configuration (its launch line, the target an error names)
goes through it. ``mask_text`` hides, in free text such as a server's stderr or an exception's message,
every url's credentials and query values, and the given values themselves (``ServerConfig.secret_values``:
the configured values, with the references resolved from the environment the server was started with).
``mask_launch_text`` does the same for a launch line written before masking existed (an old audit row).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from urllib.parse import urlsplit, urlunsplit

MASK = "***"
REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
SECRET_WORDS = frozenset(
    {
        "token",
        "secret",
        "password",
        "passwd",
        "pass",
        "pwd",
        "apikey",
        "key",
        "auth",
        "authorization",
        "bearer",
        "credential",
        "credentials",
        "cookie",
    }
)
"""An option whose name holds one of these words (split at ``-``, ``_`` and ``.``) carries a secret."""
MIN_SCRUBBED = 6
"""Values shorter than this are not searched for in free text, where they would hide ordinary words."""

_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>\\`]+")
_ENV_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")
_ENV_OPTIONS = ("-e", "--env")


def mask_value(value: str) -> str:
    """``value`` with each literal stretch replaced by ``***``; ``${VAR}`` references are kept (a
    literal default in ``${VAR:-default}`` is hidden). An empty value stays empty."""
    out: list[str] = []
    position = 0
    for match in REFERENCE.finditer(value):
        if match.start() > position:
            out.append(MASK)
        default = match.group(2)
        out.append(match.group(0) if not default else f"${{{match.group(1)}:-{MASK}}}")
        position = match.end()
    if position < len(value):
        out.append(MASK)
    return "".join(out)


def _mask_pairs(text: str) -> str:
    """``a=1&b=2`` as ``a=***&b=***``; an item without ``=`` is hidden whole."""
    items = []
    for item in text.split("&"):
        name, sep, value = item.partition("=")
        items.append(f"{name}={mask_value(value)}" if sep else mask_value(item))
    return "&".join(items)


def mask_url(url: str) -> str:
    """The url with its credentials (``user:password@``), query values and fragment values hidden;
    scheme, host, port and path as they are."""
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed "[" in the host: show no more than the scheme
        scheme = url.partition("://")[0]
        return f"{scheme}://{MASK}" if "://" in url else mask_value(url)
    netloc = parts.netloc
    userinfo, at, host = netloc.rpartition("@")
    if at:
        user, colon, password = userinfo.partition(":")
        shown = mask_value(user) + (f":{mask_value(password)}" if colon else "")
        netloc = f"{shown}@{host}"
    query = _mask_pairs(parts.query) if parts.query else ""
    fragment = _mask_pairs(parts.fragment) if parts.fragment else ""
    masked = urlunsplit((parts.scheme, netloc, parts.path, query, fragment))
    # urlunsplit drops a "?" or "#" with nothing after it; that hides nothing, so keep the original's
    return masked if (query or fragment or at) else url


def _mask_urls(text: str) -> str:
    return _URL.sub(lambda m: mask_url(m.group(0)), text)


def _secret_option(name: str) -> bool:
    words = re.split(r"[-_.]+", name.lstrip("-").lower())
    return any(w in SECRET_WORDS for w in words) or any(
        w.endswith(("token", "secret", "password", "apikey")) for w in words
    )


def _arg_parts(args: Sequence[str]) -> Iterator[tuple[str, str | None]]:
    """Each argument as (what may be shown, the secret part after it or None)."""
    hide_next = env_next = False
    for arg in args:
        if hide_next or env_next:
            name, sep, value = arg.partition("=")
            if env_next and sep and _ENV_NAME.match(name):
                yield f"{name}=", value
            elif hide_next:
                yield "", arg
            else:
                yield arg, None
            hide_next = env_next = False
            continue
        name, sep, value = arg.partition("=")
        if arg.startswith("-") and _secret_option(name):
            if sep:
                yield f"{name}=", value
            else:
                hide_next = True
                yield arg, None
            continue
        if arg in _ENV_OPTIONS:
            env_next = True
            yield arg, None
            continue
        if sep and name in _ENV_OPTIONS:  # --env=NAME=VALUE
            env_name, env_sep, env_value = value.partition("=")
            yield (f"{name}={env_name}=", env_value) if env_sep else (arg, None)
            continue
        if sep and _ENV_NAME.match(name) and _secret_option(name):  # GITHUB_TOKEN=... as an argument
            yield f"{name}=", value
            continue
        yield arg, None


def mask_args(args: Sequence[str]) -> list[str]:
    """The arguments with secret option values and every url's credentials and query values hidden."""
    return [
        _mask_urls(shown) + (mask_value(secret) if secret is not None else "")
        for shown, secret in _arg_parts(args)
    ]


def url_secrets(url: str) -> list[str]:
    """The parts of ``url`` that ``mask_url`` hides."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return [url]
    found: list[str] = []
    userinfo, at, _host = parts.netloc.rpartition("@")
    if at:
        found += [p for p in userinfo.split(":", 1) if p]
    for text in (parts.query, parts.fragment):
        for item in text.split("&") if text else ():
            _name, sep, value = item.partition("=")
            found.append(value if sep else item)
    return found


def arg_secrets(args: Sequence[str]) -> list[str]:
    """The parts of ``args`` that ``mask_args`` hides."""
    found = [secret for _shown, secret in _arg_parts(args) if secret]
    for arg in args:
        for match in _URL.finditer(arg):
            found += url_secrets(match.group(0))
    return found


def mask_text(text: str, values: Iterable[str] = ()) -> str:
    """``text`` (an error message, a server's stderr) with each of ``values`` of at least
    ``MIN_SCRUBBED`` characters replaced by ``***`` (longest first), then every url's credentials and
    query values hidden."""
    for value in sorted({v for v in values if len(v) >= MIN_SCRUBBED}, key=len, reverse=True):
        text = text.replace(value, MASK)
    return _mask_urls(text)


def mask_launch_text(line: str) -> str:
    """A launch line as ``ServerConfig.launch_line`` renders it (``cd DIR && env K=V ... CMD ARGS``, or
    ``URL (headers: ...)``), with its values hidden: for launch lines stored before they were masked."""
    if _URL.match(line) or line.startswith("${"):
        return _mask_urls(line)
    prefix = ""
    try:
        words = shlex.split(line)
    except ValueError:
        return MASK
    if len(words) >= 3 and words[0] == "cd" and words[2] == "&&":
        prefix, words = f"cd {shlex.quote(words[1])} && ", words[3:]
    if words[:1] == ["env"]:
        assignments = 1
        while assignments < len(words) and "=" in words[assignments]:
            name, _sep, value = words[assignments].partition("=")
            words[assignments] = f"{name}={mask_value(value)}"
            assignments += 1
        words = words[:assignments] + mask_args(words[assignments:])
    else:
        words = mask_args(words)
    return prefix + shlex.join(words)
