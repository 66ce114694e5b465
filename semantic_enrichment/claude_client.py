"""The Claude client: one structured-output call with retries. The only module that imports ``anthropic``.

``ClaudeClient.parse(system, user, Model, max_tokens=...)`` sends one Messages API request through the
SDK's ``messages.parse`` (the model's JSON schema goes out as ``output_config.format``) and returns the
answer validated into ``Model``, or raises ``LLMError``. It never returns an unvalidated answer.

Retry policy (tenacity; the SDK's own retries are off, ``max_retries=0``):

- retried: 429, 408, every 5xx (529 overloaded included), timeouts and connection errors; up to
  ``max_attempts`` attempts in all. The wait is the server's ``retry-after``/``retry-after-ms`` when it
  sends one (capped at ``max_retry_after_s``), else exponential backoff with jitter.
- not retried: any other 4xx (400, 401, 403, 404, 413, ...): the request or the key is wrong and asking
  again will not help; ``LLMError`` at once, with a hint saying what to fix.
- not retried: an answer that does not validate (not JSON, wrong types, too long, cut off at
  ``max_tokens``, a refusal). With structured outputs a broken answer is almost always systematic
  (the same prompt is cut off again at the same ``max_tokens``), the callers have an offline
  fallback and never cache a failure, so the next sync asks again; a retry would only double the cost.

``calls`` counts HTTP attempts (retries included), across threads.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TypeVar

import anthropic
from pydantic import BaseModel, ValidationError
from tenacity import (
    RetryCallState,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
    wait_random,
)

from tool_selector.config.claude import ClaudeSettings
from tool_selector.core.errors import ConfigurationError, LLMError

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

RETRYABLE_STATUS = frozenset({408, 429})
BAD_STOP_REASONS = frozenset({"max_tokens", "refusal", "model_context_window_exceeded"})
_STATUS_HINTS = {
    400: "The request was rejected as malformed; this is a bug in tool-selector's prompt or schema.",
    401: "The API key was not accepted: check ANTHROPIC_API_KEY (or TOOL_SELECTOR_CLAUDE__API_KEY).",
    403: "The API key lacks permission for this model or endpoint; check the key's workspace.",
    404: "Check TOOL_SELECTOR_CLAUDE__MODEL and TOOL_SELECTOR_CLAUDE__BASE_URL: the model or endpoint "
    "was not found.",
    413: "The request is too large; lower the enrichment batch size.",
}
_FALLBACK_HINT = (
    "Retry the sync later, or set TOOL_SELECTOR_SYNC__ENRICHER=offline to enrich without the API."
)


def is_retryable(exc: BaseException) -> bool:
    """429, 408, 5xx, timeouts and connection errors are worth another attempt; nothing else is."""
    if isinstance(exc, anthropic.APIStatusError):
        return exc.status_code in RETRYABLE_STATUS or exc.status_code >= 500
    return isinstance(exc, anthropic.APIConnectionError)  # APITimeoutError is a subclass


def retry_after_s(exc: BaseException | None) -> float | None:
    """The server's ``retry-after-ms`` / ``retry-after`` (seconds) on an error response, if any."""
    if not isinstance(exc, anthropic.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) * scale
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
        if seconds >= 0:
            return seconds
    return None


def _status_of(exc: BaseException) -> int | None:
    return exc.status_code if isinstance(exc, anthropic.APIStatusError) else None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, anthropic.APIStatusError):
        detail = exc.api_message or exc.type or ""
        return f"HTTP {exc.status_code}" + (f" ({detail})" if detail else "")
    if isinstance(exc, anthropic.APITimeoutError):
        return "timeout"
    if isinstance(exc, anthropic.APIConnectionError):
        return "connection error"
    return type(exc).__name__


DEFAULT_ANTHROPIC_URL = "https://api.anthropic.com"  # passed explicitly: the SDK never reads the environment


class ClaudeClient:
    """A thread-safe Claude structured-output client with retries and a call counter."""

    @classmethod
    def from_settings(cls, settings: ClaudeSettings) -> ClaudeClient:
        """The client the ``claude`` settings group describes (its API key must be set)."""
        if settings.api_key is None:
            raise ConfigurationError(
                "The Claude enricher needs an API key.",
                hint="Set ANTHROPIC_API_KEY (or TOOL_SELECTOR_CLAUDE__API_KEY), "
                "or TOOL_SELECTOR_SYNC__ENRICHER=offline.",
            )
        return cls(
            api_key=settings.api_key.get_secret_value(),
            base_url=settings.base_url or DEFAULT_ANTHROPIC_URL,
            model=settings.model,
            timeout_s=settings.timeout_s,
            max_attempts=settings.max_attempts,
        )

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        model: str = "claude-haiku-4-5",
        timeout_s: float = 60.0,
        max_attempts: int = 4,
        backoff_initial_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.model = model
        self.max_attempts = max_attempts
        self._backoff = wait_exponential(multiplier=backoff_initial_s, max=backoff_max_s) + wait_random(
            0, backoff_initial_s
        )
        self._max_retry_after_s = max_retry_after_s
        self._sleep = sleep
        self._lock = threading.Lock()
        self._calls = 0
        self._sdk = anthropic.Anthropic(api_key=api_key, base_url=base_url, timeout=timeout_s, max_retries=0)

    def __repr__(self) -> str:  # never shows the key
        return f"ClaudeClient(model={self.model!r}, base_url={str(self._sdk.base_url)!r})"

    @property
    def calls(self) -> int:
        """HTTP requests attempted so far, retries included."""
        with self._lock:
            return self._calls

    def close(self) -> None:
        self._sdk.close()

    def __enter__(self) -> ClaudeClient:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _wait(self, state: RetryCallState) -> float:
        outcome = state.outcome
        server_says = retry_after_s(outcome.exception() if outcome is not None else None)
        if server_says is not None:
            return min(server_says, self._max_retry_after_s)
        return float(self._backoff(state))

    def _log_retry(self, state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome is not None else None
        wait = state.next_action.sleep if state.next_action is not None else 0.0
        logger.warning(
            "Claude attempt %d/%d failed (%s); retrying in %.2fs",
            state.attempt_number,
            self.max_attempts,
            _describe(exc) if exc is not None else "?",
            wait,
        )

    def _send(
        self, system: str, user: str, output: type[M], max_tokens: int
    ) -> anthropic.types.ParsedMessage[M]:
        with self._lock:
            self._calls += 1
        return self._sdk.messages.parse(
            model=self.model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
            output_format=output,
        )

    def parse(self, system: str, user: str, output: type[M], *, max_tokens: int) -> M:
        """One structured call: the answer validated into ``output``, or ``LLMError``."""
        retrying = Retrying(
            stop=stop_after_attempt(self.max_attempts),
            wait=self._wait,
            retry=retry_if_exception(is_retryable),
            before_sleep=self._log_retry,
            sleep=self._sleep,
            reraise=True,
        )
        try:
            message: anthropic.types.ParsedMessage[M] = retrying(self._send, system, user, output, max_tokens)
        except ValidationError as exc:
            raise self._invalid_answer(output, exc, max_tokens) from None
        except anthropic.APIError as exc:
            raise self._api_failure(exc, int(retrying.statistics.get("attempt_number", 1))) from None
        return self._checked(message, output, max_tokens)

    def _checked(self, message: anthropic.types.ParsedMessage[M], output: type[M], max_tokens: int) -> M:
        stop = message.stop_reason
        if stop in BAD_STOP_REASONS:
            raise LLMError(
                f"Claude's answer for {output.__name__} stopped early (stop_reason={stop}).",
                hint=f"max_tokens was {max_tokens}." if stop == "max_tokens" else _FALLBACK_HINT,
                reason="invalid_answer",
                stop_reason=stop,
                model=self.model,
            )
        parsed = message.parsed_output
        if not isinstance(parsed, output):
            raise LLMError(
                f"Claude's answer for {output.__name__} had no JSON text block (stop_reason={stop}).",
                hint=_FALLBACK_HINT,
                reason="invalid_answer",
                stop_reason=stop,
                model=self.model,
            )
        return parsed

    def _invalid_answer(self, output: type[M], exc: ValidationError, max_tokens: int) -> LLMError:
        first = exc.errors(include_input=False, include_url=False)[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "answer"
        cut_off = first.get("type") == "json_invalid" and "EOF" in str(first.get("msg", ""))
        hint = (
            f"The JSON ends early; max_tokens ({max_tokens}) may be too small." if cut_off else _FALLBACK_HINT
        )
        return LLMError(
            f"Claude's answer does not validate as {output.__name__}: {exc.error_count()} errors "
            f"(first at {where}: {first.get('msg', '')}).",
            hint=hint,
            reason="invalid_answer",
            model=self.model,
        )

    def _api_failure(self, exc: anthropic.APIError, attempts: int) -> LLMError:
        status = _status_of(exc)
        if is_retryable(exc):
            return LLMError(
                f"The Claude API failed after {attempts} attempts: {_describe(exc)}.",
                hint=_FALLBACK_HINT,
                reason="exhausted",
                status=status,
                attempts=attempts,
                model=self.model,
            )
        return LLMError(
            f"The Claude API refused the request: {_describe(exc)}.",
            hint=_STATUS_HINTS.get(status or 0, _FALLBACK_HINT),
            reason="rejected",
            status=status,
            attempts=attempts,
            model=self.model,
        )
