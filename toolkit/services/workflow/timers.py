"""The running executions' deadlines (SLA deadlines and agent timeouts) as the serving
process's timer sees them: an in-memory heap of each running execution's next deadline —
rebuilt at start-up from ``executions.next_deadline`` and fed by every commit — never a scan
of the steps (semantics §7, §11).

On a shared store (PostgreSQL, several processes) other processes commit too: every
:data:`POLL_MS` the timer also reads the deadlines falling due in the next poll from the
database (the heap stays the fast path for this process's own commits), and a deadline two
processes both fire is applied once, because the tick re-checks it under the execution's row
lock. The heap is touched from the event loop only; :meth:`Deadlines.fire` and
:meth:`Deadlines.made_elsewhere` read and write the database and run on worker threads.
"""

from __future__ import annotations

import heapq

from toolkit.services.context import Services
from toolkit.services.workflow.executions import tick
from toolkit.services.workflow.recovery import deadlines_due_by, running_deadlines

POLL_MS = 1000  # a shared store's timer reads the deadlines another process made this often


class Deadlines:
    """``(deadline, workspace id, execution id)``, soonest first, each queued once.

    >>> from toolkit.store import Store
    >>> store = Store(":memory:")
    >>> deadlines = Deadlines(Services(store))
    >>> deadlines.add(2000, "ws", "x-1"), deadlines.add(1000, "ws", "x-2"), deadlines.add(1000, "ws", "x-2")
    (True, True, False)
    >>> deadlines.pop_due(1500), deadlines.pop_due(1500), deadlines.wait_s(1500)
    (('ws', 'x-2'), None, 0.5)
    >>> store.close()
    """

    def __init__(self, services: Services) -> None:
        self.services = services
        self.heap: list[tuple[int, str, str]] = []
        self.queued: set[tuple[int, str]] = set()  # (deadline, execution id) in the heap
        self.polled: int | None = None  # when the database was last read for others' deadlines

    def load(self) -> None:
        """Queue every running execution's next deadline (at start-up)."""
        for deadline, workspace_id, execution_id in running_deadlines(self.services):
            self.add(deadline, workspace_id, execution_id)

    def add(self, deadline: int, workspace_id: str, execution_id: str) -> bool:
        """Queue a deadline; False when it is queued already."""
        if (deadline, execution_id) in self.queued:
            return False
        self.queued.add((deadline, execution_id))
        heapq.heappush(self.heap, (deadline, workspace_id, execution_id))
        return True

    def poll_due(self, now: int) -> bool:
        """Whether to read the deadlines other processes made (a shared store, once a poll)."""
        return self.services.store.shared and (self.polled is None or now - self.polled >= POLL_MS)

    def made_elsewhere(self, now: int) -> list[tuple[int, str, str]]:
        """The deadlines due by the next poll, whichever process made them (for :meth:`add`)."""
        self.polled = now
        return deadlines_due_by(self.services, now + POLL_MS)

    def pop_due(self, now: int) -> tuple[str, str] | None:
        """``(workspace id, execution id)`` of a deadline due at ``now``, taken off the heap."""
        if not self.heap or self.heap[0][0] > now:
            return None
        deadline, workspace_id, execution_id = heapq.heappop(self.heap)
        self.queued.discard((deadline, execution_id))
        return workspace_id, execution_id

    def fire(self, workspace_id: str, execution_id: str) -> int | None:
        """Apply the engine's ``Tick`` to the execution; its next deadline (for :meth:`add`)."""
        result = tick(self.services, workspace_id, execution_id)
        return result.get("nextDeadline") if result else None

    def wait_s(self, now: int) -> float | None:
        """How long the timer may sleep (None: until woken) before its next deadline or poll."""
        timeout = None if not self.heap else max(0.0, (self.heap[0][0] - now) / 1000)
        if self.services.store.shared:
            timeout = min(timeout if timeout is not None else POLL_MS / 1000, POLL_MS / 1000)
        return timeout
