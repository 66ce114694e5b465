"""The hidden-context check: schema fields that ask the model for what it should keep to itself.

A parameter (at any depth of the input schema) whose name or title asks for the model's context (the
system prompt, the conversation or chat history, previous messages, the list of tools, a "sidenote")
flags when nothing explains it (no description) or when its description asks for the model's own
context ("your system prompt", "the entire conversation"): real tools that take a conversation say
what it is for, an attack leaves a required ``tools_list`` unexplained. A parameter that asks for a
secret (password, API key, token, private key) flags when its description asks for the user's own
secret ("the user's password", "contents of ~/.ssh/id_rsa") rather than one the tool needs; a tool
whose name or description is about signing in (``authenticateUser``, "log in") needs the password.

Whatever a parameter is called, its description flags when it asks, in other words, for the model's
own context ("everything the assistant was told before the user's first message", "what the user and
assistant have said to each other", "names and descriptions of every function the assistant can call")
or for a secret kept on the user's machine ("the text of the private key file in the user's home ssh
folder"). These words come from the dev half of ``eval/datasets/poison-paraphrases``.

Annotations: MCP defines ``title`` and four hints; text under any other key (``systemPrompt``,
``instructions``) is a second description nobody reviews, and flags.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from tool_selector.trust.exfiltration import SECRET_FILE
from tool_selector.trust.findings import Finding, prepare, quote

_I = re.IGNORECASE
_CONTEXT = re.compile(
    r"\b(?:conversation|chat|message|dialog(?:ue)?)s? (?:history|log|transcript|context)\b"
    r"|\b(?:previous|prior|past|earlier) (?:messages|conversation|turns|instructions|prompts)\b"
    r"|\bsystem (?:prompt|instructions?|message)\b|\b(?:tools?|functions?) (?:list|definitions?|schemas?)\b"
    r"|\b(?:available|other|installed|all) tools\b|\bside ?notes?\b|\bsidecar\b"
    r"|\bhidden (?:context|notes?|data|instructions?)\b|\binternal notes?\b"
    r"|\b(?:model|assistant|agent|llm)'?s? (?:instructions|context|memory|prompt)\b",
    _I,
)
_ASKS_OWN_CONTEXT = re.compile(
    r"\b(?:your|the (?:assistant|model|agent|ai|llm)'?s?) (?:\w+ )?(?:system prompt|instructions|context|"
    r"conversation|messages|memory|tools)\b|\b(?:entire|full|complete|whole|verbatim|every)\b[^.]{0,30}"
    r"\b(?:conversation|history|messages|prompt|instructions|tools)\b|\ball (?:previous|prior) messages\b",
    _I,
)
_SECRET_NAME = re.compile(
    r"\b(?:passwords?|passwd|api keys?|secrets?|private keys?|ssh keys?|credentials?|access tokens?|"
    r"auth tokens?|tokens?|session (?:tokens?|cookies?)|cookies?)\b",
    _I,
)
_ASKS_USERS_SECRET = re.compile(
    r"\b(?:the )?user'?s (?:\w+ )?(?:passwords?|api keys?|secrets?|private keys?|ssh keys?|credentials?|"
    r"tokens?|cookies?)\b|\b(?:contents?|content) of\b[^.]{0,30}(?:" + SECRET_FILE + r")",
    _I,
)
_ASKS_CONTEXT_IN_WORDS = re.compile(
    r"\b(?:the assistant|you|the model|the agent)\s+(?:was|were|have been|has been|'ve been)\s+(?:told|given|"
    r"instructed)\b|\bbefore the user'?s first message\b"
    r"|\bwhat (?:the user and (?:the )?(?:assistant|model|agent)|you and the user) (?:have |has )?(?:said|w"
    r"ritten|"
    r"exchanged|discussed)\b",
    _I,
)
_ASKS_KEPT_SECRET = re.compile(
    r"\bin the user'?s home\b|\b(?:text|contents?|body) of (?:the |a )?(?:\w+ ){0,2}key file\b",
    _I,
)
_SIGN_IN = re.compile(r"auth|log[ _-]?in|sign[ _-]?in|signin|password|credential", _I)
_MCP_ANNOTATIONS = frozenset({"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"})
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(name: str) -> str:
    """``conversationHistory``, ``tools_list`` -> "conversation history", "tools list"."""
    if not name.islower():
        name = _CAMEL.sub(" ", name)
    return name.lower().replace("_", " ").replace("-", " ").replace(".", " ").strip()


def _properties(schema: Mapping[str, Any], path: str, depth: int = 0) -> Iterator[tuple[str, Any, bool]]:
    """(path, property schema, required) for every property, nested objects and arrays included."""
    if depth > 12:
        return
    properties = schema.get("properties")
    required = schema.get("required")
    required_names = set(required) if isinstance(required, list) else set()
    if isinstance(properties, Mapping):
        for name, sub in properties.items():
            where = f"{path}.{name}" if path else str(name)
            yield where, sub, name in required_names
            if isinstance(sub, Mapping):
                yield from _properties(sub, where, depth + 1)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _properties(items, path, depth + 1)


def _text(sub: Any, key: str) -> str:
    value = sub.get(key) if isinstance(sub, Mapping) else None
    return prepare(value) if isinstance(value, str) else ""


def _asks(path: str, sub: Any, required: bool, signs_in: bool) -> str | None:
    """Why parameter ``path`` asks for hidden context or the user's secrets, or None."""
    name = _words(path.rsplit(".", 1)[-1])
    raw = sub.get("description") if isinstance(sub, Mapping) else None
    raw = raw if isinstance(raw, str) else ""
    if raw and _ASKS_CONTEXT_IN_WORDS.search(raw):
        return f"parameter {path!r} asks for the model's hidden context: {quote(prepare(raw), 50)}"
    if raw and not signs_in and _ASKS_KEPT_SECRET.search(raw):
        return (
            f"parameter {path!r} asks for a secret kept by the user or the agent: {quote(prepare(raw), 50)}"
        )
    if _CONTEXT.search(name) or _CONTEXT.search(_text(sub, "title")):
        described = prepare(raw)
        if (required and not described) or _ASKS_OWN_CONTEXT.search(described):
            why = "with no description" if not described else f"described as {quote(described, 50)}"
            need = "required " if required else ""
            return f"{need}parameter {path!r} asks for the model's hidden context, {why}"
    lowered = raw.lower()
    if ("user" in lowered or "content" in lowered) and (
        _SECRET_NAME.search(name) or _SECRET_NAME.search(raw)
    ):
        described = prepare(raw)
        if _ASKS_USERS_SECRET.search(described) and not signs_in:
            return f"parameter {path!r} asks for the user's secrets: {quote(described, 50)}"
    return None


def check_schema_fields(input_schema: Mapping[str, Any] | None, purpose: str = "") -> list[Finding]:
    """``purpose``: the tool's name and description (a sign-in tool needs the user's password)."""
    signs_in = _SIGN_IN.search(purpose) is not None
    for path, sub, required in _properties(input_schema or {}, ""):
        why = _asks(path, sub, required, signs_in)
        if why:
            return [Finding("hidden-context", "flag", f"{why} in input_schema")]
    return []


def check_annotations(annotations: Mapping[str, Any] | None) -> list[Finding]:
    for key, value in (annotations or {}).items():
        if key not in _MCP_ANNOTATIONS and isinstance(value, str | Mapping | list) and len(str(value)) >= 20:
            said = quote(str(value), 50)
            return [
                Finding(
                    "annotations",
                    "flag",
                    f"annotations carry text under {key!r}, which MCP does not define: {said}",
                )
            ]
    return []
