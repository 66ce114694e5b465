"""``@writes("what")``: a use case that changes the catalog or the index runs under the writer lock.

Every write use case (services/write, the index refresh) carries it, whichever adapter calls it: the
REST API and its jobs, the CLI, the sync, the gateway. The lock is re-entrant, so a use case calling
another takes it once, and the outermost one names the holder (tool_selector/catalog/writelock.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Concatenate, ParamSpec, TypeVar

from services.root.container import Container

P = ParamSpec("P")
T = TypeVar("T")


def writes(
    what: str,
) -> Callable[[Callable[Concatenate[Container, P], T]], Callable[Concatenate[Container, P], T]]:
    """Run the decorated use case (its first argument: the container) holding the writer lock."""

    def decorate(use_case: Callable[Concatenate[Container, P], T]) -> Callable[Concatenate[Container, P], T]:
        @functools.wraps(use_case)
        def locked(container: Container, /, *args: P.args, **kwargs: P.kwargs) -> T:
            with container.writing(what):
                return use_case(container, *args, **kwargs)

        return locked

    return decorate
