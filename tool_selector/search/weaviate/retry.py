"""How a call to Weaviate is tried, in plain Python: the backend names its SDK's error classes by role
(:class:`SdkErrors`), this module decides what each means. Unreachable, timeouts, 502-504 and gRPC
UNAVAILABLE are transient and retried (``max_attempts`` tries, short backoff), then raised as
BackendUnavailableError naming the address; a refused API key is a ConfigurationError; any other error
of the SDK (a rejected request) is a StoreError, not retried."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc  # type: ignore[import-untyped]
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from tool_selector.core.errors import (
    BackendUnavailableError,
    ConfigurationError,
    StoreError,
    ToolSelectorError,
)

T = TypeVar("T")

TRANSIENT_CODES = ("UNAVAILABLE", "DEADLINE_EXCEEDED", "RESOURCE_EXHAUSTED")


class OneTry:
    """Stands in for weaviate-client's internal gRPC retry, which sleeps 1+2+4+8+16+32 s on UNAVAILABLE
    before giving up: a resolve would hang for a minute while Weaviate is down. Each call is tried once
    there; :func:`run_with_retries` retries transient failures itself (``weaviate.max_attempts``, short
    backoff)."""

    def __init__(self, n: float = 0) -> None:
        self.n = n

    def with_exponential_backoff(
        self, count: int, error: str, f: Callable[..., T], *args: Any, **kwargs: Any
    ) -> T:
        return f(*args, **kwargs)

    async def awith_exponential_backoff(
        self, count: int, error: str, f: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any
    ) -> T:
        return await f(*args, **kwargs)


def rpc_code(exc: BaseException) -> str | None:
    """The gRPC status behind an SDK error (the SDK keeps only the details text in its message)."""
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return None
        if isinstance(seen, grpc.RpcError) and hasattr(seen, "code"):
            return str(seen.code().name)
        seen = seen.__cause__ or seen.__context__
    return None


@dataclass(frozen=True)
class SdkErrors:
    """The SDK's error classes by role."""

    closed: tuple[type[BaseException], ...]  # a closed client: never worth another try
    unreachable: tuple[type[BaseException], ...]  # always worth another try
    with_status: tuple[type[BaseException], ...]  # an HTTP answer, carrying ``status_code``
    with_message: tuple[type[BaseException], ...]  # failures told only in their text
    refused: tuple[type[BaseException], ...]  # the API key was refused
    rejected: tuple[type[BaseException], ...]  # any other failure of the SDK: a rejected request

    def transient(self, exc: BaseException) -> bool:
        """Unreachable, timed out, overloaded: worth another try. A rejected request is not."""
        if isinstance(exc, self.closed):
            return False
        if isinstance(exc, self.unreachable):
            return True
        if isinstance(exc, self.with_status):
            return getattr(exc, "status_code", None) in (502, 503, 504)
        code = rpc_code(exc)
        if code is not None:
            return code in TRANSIENT_CODES
        if isinstance(exc, self.with_message):
            return any(m in str(exc) for m in (*TRANSIENT_CODES, "Deadline Exceeded", "failed to connect"))
        return isinstance(exc, ConnectionError | TimeoutError)

    def refused_key(self, exc: BaseException) -> bool:
        if isinstance(exc, self.refused):
            return True
        if isinstance(exc, self.with_status):
            return getattr(exc, "status_code", None) in (401, 403)
        if rpc_code(exc) in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
            return True
        text = str(exc)
        return "UNAUTHENTICATED" in text or "PERMISSION_DENIED" in text


def run_with_retries(
    what: str,
    action: Callable[[], T],
    *,
    address: str,
    max_attempts: int,
    errors: SdkErrors,
    on_transient: Callable[[], None],
) -> T:
    """Run ``action`` (``what`` names it in messages), retried while its failure is transient;
    ``on_transient`` runs after each transient failure (to drop a broken connection). A refused key,
    a last transient failure and a rejected request are raised translated, anything else as it is."""
    transient = errors.transient

    def attempt() -> T:
        try:
            return action()
        except BaseException as exc:
            if transient(exc):
                on_transient()
            raise

    retrying = Retrying(
        stop=stop_after_attempt(max_attempts),
        wait=wait_exponential(multiplier=0.2, max=2.0),
        retry=retry_if_exception(transient),
        reraise=True,
    )
    try:
        return retrying(attempt)
    except ToolSelectorError:
        raise
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        if errors.refused_key(exc):
            raise ConfigurationError(
                f"Weaviate at {address} refused the API key while {what}: {exc}.",
                hint="Set TOOL_SELECTOR_WEAVIATE__API_KEY to a key with read and write rights.",
                address=address,
            ) from exc
        if transient(exc):
            raise BackendUnavailableError(
                f"Weaviate at {address} cannot be reached ({what}, {max_attempts} tries): {first_line(exc)}",
                hint="Start Weaviate (see docker-compose.weaviate.yml), check TOOL_SELECTOR_WEAVIATE__URL "
                "and TOOL_SELECTOR_WEAVIATE__GRPC_URL, or set TOOL_SELECTOR_BACKEND=embedded.",
                address=address,
            ) from exc
        if isinstance(exc, errors.rejected):
            raise StoreError(
                f"Weaviate at {address} rejected {what}: {first_line(exc)}",
                hint="This is not retried; the message above says what Weaviate disliked.",
                address=address,
            ) from exc
        raise


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]
