"""How much one workspace may store: definitions and executions. A write that would go over
is refused with ``RESOURCE_EXHAUSTED`` (429) before anything is written.

Both checks run inside the write job. On DuckDB that is the writer thread, so two concurrent
creates cannot both take the last place. Executions are counted once per workspace from the
database, then kept in ``services.stored`` (a dispatch adds one, a rolled-back one takes it
back); at the limit the count is read again, in case executions were removed behind the
counter's back. On a shared store (several processes) the count is also read again once it
is :data:`SHARED_COUNT_MAX_AGE_S` old, and on every dispatch within
:data:`SHARED_EXACT_MARGIN` of the limit, under the workspace's row lock: far from the limit
a dispatch stays one cheap check, near it the count is exact across processes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.errors import ApiError, ErrorCode
from toolkit.store import definitions, executions

if TYPE_CHECKING:  # pragma: no cover
    from toolkit.services.context import Services


@dataclass(frozen=True)
class Quotas:
    """Per-workspace storage limits; 0 turns one off."""

    max_definitions: int = 10_000  # every definition ever created, deleted ones included (ids stay reserved)
    max_executions: int = 1_000_000  # executions stored, whatever their status


def _exhausted(what: str, limit: int) -> ApiError:
    return ApiError(
        ErrorCode.RESOURCE_EXHAUSTED,
        f"workspace quota: at most {limit} {what} may be stored (the server's --max-{what} setting)",
    )


def check_definition_quota(services: Services, tx, workspace_id: str) -> None:
    """Raise RESOURCE_EXHAUSTED when the workspace already stores ``max_definitions``. On a
    shared store the count holds the workspace's row, so creates in several processes count
    one after the other (creating definitions is rare; exactness is cheap there)."""
    limit = services.quotas.max_definitions
    if limit <= 0:
        return
    if definitions.count(tx.execute, workspace_id, lock=services.store.shared) >= limit:
        raise _exhausted("definitions", limit)


class ExecutionCounts:
    """Executions stored per workspace, as this process knows them: counted from the
    database, then one more per dispatch (one less when the dispatch rolls back). With
    ``max_age`` seconds (a shared store), a count older than that is read again, so what
    other processes dispatched is seen within that time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, list] = {}  # workspace -> [count, monotonic time it was read]

    def get(self, workspace_id: str, max_age: float | None = None) -> int | None:
        with self._lock:
            entry = self._counts.get(workspace_id)
        if entry is None or (max_age is not None and time.monotonic() - entry[1] > max_age):
            return None
        return entry[0]

    def set(self, workspace_id: str, count: int) -> None:
        with self._lock:
            self._counts[workspace_id] = [count, time.monotonic()]

    def add(self, workspace_id: str, delta: int) -> None:
        with self._lock:
            entry = self._counts.get(workspace_id)
            if entry is not None:
                entry[0] += delta


# On a shared store a count may be this old, as long as it is this far below the limit: other
# processes' dispatches of the last seconds cannot reach the limit unseen unless they are more
# than the margin (see docs/decisions.md, "Several processes: workflow commands"). Nearer the
# limit every dispatch counts, exactly.
SHARED_COUNT_MAX_AGE_S = 2.0
SHARED_EXACT_MARGIN = 1000


def take_execution_quota(services: Services, tx, workspace_id: str) -> None:
    """Count one more execution for the workspace, or raise RESOURCE_EXHAUSTED at the limit."""
    limit = services.quotas.max_executions
    if limit <= 0:
        return
    counts, shared = services.stored, services.store.shared
    if shared:
        stored = counts.get(workspace_id, SHARED_COUNT_MAX_AGE_S)
        exact = stored is None or stored >= limit - SHARED_EXACT_MARGIN
    else:
        stored = counts.get(workspace_id)
        exact = stored is None or stored >= limit
    if exact:
        tx.flush()  # executions dispatched earlier in this group commit are still buffered
        # Shared: the workspace row is held, so concurrent exact counts (in any process) wait
        # for this dispatch to commit and then see its execution.
        stored = executions.count_stored(tx.execute, workspace_id, lock=shared)
        counts.set(workspace_id, stored)
    assert stored is not None
    if stored >= limit:
        raise _exhausted("executions", limit)
    counts.add(workspace_id, 1)
    tx.on_rollback(lambda: counts.add(workspace_id, -1))
