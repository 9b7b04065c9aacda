"""Where the timers find their deadlines: ``executions.next_deadline``, the earliest SLA
deadline or agent timeout of each running execution (indexed on PostgreSQL for running rows).

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     running_deadlines(store.read), due_by(store.read, 0)
([], [])
"""

from __future__ import annotations

from toolkit.store.seam import Read


def running_deadlines(read: Read) -> list[tuple[int, str, str]]:
    """``(next deadline, workspace id, execution id)`` of every running execution with one."""
    rows = read(
        "SELECT next_deadline, workspace_id, execution_id FROM executions "
        "WHERE status = 'running' AND next_deadline IS NOT NULL",
        [],
    ).fetchall()
    return [(int(d), str(w), str(x)) for d, w, x in rows]


def due_by(read: Read, until: int, limit: int = 1000) -> list[tuple[int, str, str]]:
    """As :func:`running_deadlines`, only those falling due by ``until``, earliest first."""
    rows = read(
        "SELECT next_deadline, workspace_id, execution_id FROM executions "
        "WHERE status = 'running' AND next_deadline <= ? ORDER BY next_deadline LIMIT ?",
        [until, limit],
    ).fetchall()
    return [(int(d), str(w), str(x)) for d, w, x in rows]
