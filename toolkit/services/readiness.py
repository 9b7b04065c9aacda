"""Whether a serving process can do its work (the server answers it at ``GET /readyz``).

Ready means: the database answers and holds every migration (``Store.problem()``, the one
thing a store backend provides for this), DuckDB's single writer commits a no-op job within
``timeout_s`` and its queue is under its bound (PostgreSQL has no writer queue: each write
commits on a pooled connection of its own), and the webhook outbox backlog is under its
bound. Otherwise one line says which of these failed; it names no workspace.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from anyio.to_thread import run_sync

from toolkit.services.gauges import pending_deliveries

if TYPE_CHECKING:
    from toolkit.services.context import Services


@dataclass(frozen=True)
class Readiness:
    """The bounds of ``/readyz`` (``collab serve --ready-*``)."""

    writer_queue: int = 1000  # write jobs waiting for the writer
    outbox_backlog: int = 10_000  # webhook deliveries pending
    timeout_s: float = 2.0  # for the database query and the writer's no-op job each


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200] if text else ''}".rstrip(": ")


class Probe:
    """The readiness checks of one app; ``services`` is set once the store is open."""

    def __init__(self, bounds: Readiness) -> None:
        self.bounds = bounds
        self.services: Services | None = None
        self._writer_probe: tuple[Future, float] | None = None

    def _database(self) -> tuple[str | None, int]:
        """(what is wrong with the database or None, pending deliveries); runs on a worker thread."""
        assert self.services is not None  # problem() checks it before asking
        store = self.services.store
        problem = store.problem()
        if problem is not None:
            return problem, 0
        return None, pending_deliveries(self.services)

    async def _writer(self) -> str | None:
        assert self.services is not None  # problem() checks it before asking
        if self.services.store.shared:
            return None  # no writer queue: each job commits on its own connection, and the database answered
        writer = self.services.store.writer
        depth = writer.depth()
        if depth > self.bounds.writer_queue:
            return f"writer: {depth} jobs queued, over the bound of {self.bounds.writer_queue}"
        # One probe job at a time: while one is still waiting, the writer has not moved since.
        if self._writer_probe is None or self._writer_probe[0].done():
            try:
                self._writer_probe = (writer.submit(lambda tx: None), time.monotonic())
            except RuntimeError as exc:  # the store is closed
                return f"writer: {exc}"
        future, since = self._writer_probe
        # asyncio.wait, not wait_for: a timeout must not cancel the job the writer will still answer.
        await asyncio.wait([asyncio.wrap_future(future)], timeout=self.bounds.timeout_s)
        if not future.done():
            return f"writer: no commit for {time.monotonic() - since:.1f} s ({depth} jobs queued)"
        failure = future.exception()
        if failure is not None:
            return f"writer: {_one_line(failure)}"
        return None

    async def problem(self) -> str | None:
        """Why the server is not ready (one line), or None."""
        if self.services is None:
            return "starting"
        database = asyncio.ensure_future(run_sync(self._database))
        done, _ = await asyncio.wait([database], timeout=self.bounds.timeout_s)
        if not done:
            return f"database: no answer within {self.bounds.timeout_s:g} s"
        try:
            problem, pending = database.result()
        except Exception as exc:  # noqa: BLE001 - whatever the database raised is the reason
            return f"database: {_one_line(exc)}"
        if problem is not None:
            return f"database: {problem}"
        writer = await self._writer()
        if writer is not None:
            return writer
        if pending > self.bounds.outbox_backlog:
            return f"outbox: {pending} deliveries pending, over the bound of {self.bounds.outbox_backlog}"
        return None
