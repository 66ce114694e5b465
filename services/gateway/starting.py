"""The gateway's service opened in the background, so that ``tool-selector serve`` answers the client's
``initialize`` at once (routes/gateway.py): this module imports nothing heavy; the services, the catalog,
the index and the model are imported and opened in a worker thread (issue 42: every start paid ~2 s)."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio

from tool_selector.core.errors import ToolSelectorError

if TYPE_CHECKING:
    from services.gateway.service import GatewayService
    from services.root.container import Container
    from tool_selector.config.settings import Settings

logger = logging.getLogger(__name__)


class ServiceStart:
    """The gateway's service, opened after the server is up: the client's ``initialize`` is answered at
    once (the MCP SDK's imports are the start's floor), while a worker thread imports the services and
    opens the catalog, the index and the model. A call waits until the service is ready; an index that
    cannot be served (missing, stale, damaged) is logged at once, answers every call with what to do, and
    is raised again when the session ends (``tool-selector serve`` exits with its code)."""

    def __init__(self, settings: Settings, make_container: Callable[[], Container] | None) -> None:
        self.settings, self.make_container = settings, make_container
        self.ready, self.stop = anyio.Event(), anyio.Event()
        self.service: GatewayService | None = None
        self.error: ToolSelectorError | None = None

    def _open(self) -> tuple[Container, Any]:  # a worker thread: the heavy imports, the index, its check
        from services.resolve.read_path import ReadPath
        from services.root.container import Container

        container = self.make_container() if self.make_container is not None else Container(self.settings)
        try:
            read_path = ReadPath(container)
            read_path.snapshot()  # refuses a missing, stale or damaged index, saying what to do
        except BaseException:
            container.close()
            raise
        return container, read_path

    async def run(self, on_tools_changed: Callable[..., Any]) -> None:
        try:
            container, read_path = await anyio.to_thread.run_sync(self._open)
        except ToolSelectorError as exc:
            logger.error("the gateway cannot serve: %s %s", exc, exc.hint or "")
            self.error = exc
            self.ready.set()
            return
        from services.gateway.service import GatewayService

        with container:
            service = GatewayService(
                container, environ=os.environ, on_tools_changed=on_tools_changed, read_path=read_path
            )
            async with service, anyio.create_task_group() as group:
                group.start_soon(service.warm_up)
                self.service = service
                self.ready.set()
                await self.stop.wait()
                group.cancel_scope.cancel()

    async def get(self) -> GatewayService:
        await self.ready.wait()
        if self.service is None:
            raise self.error or RuntimeError("the gateway's service did not start")
        return self.service
