"""What finding background agent runs to (re)start reads: the engine state of running
executions, and the lease key that names one run.

>>> run_key("ex_1", "st_2"), split_run_key("ex_1/st_2")
('ex_1/st_2', ('ex_1', 'st_2'))
"""

from __future__ import annotations

from toolkit.store.seam import Read


def run_key(execution_id: str, step_id: str) -> str:
    """The ``agent-run`` lease key of one step's run."""
    return f"{execution_id}/{step_id}"


def split_run_key(key: str) -> tuple[str, str]:
    execution_id, _, step_id = key.partition("/")
    return execution_id, step_id


# The running executions a background agent run may be waiting in. PostgreSQL keeps only those
# with a running agent step (a containment test on the state, in the database: many processes
# start against one large database); DuckDB's one process reads every running execution.
_RUNNING = {
    "duckdb": "SELECT workspace_id, state FROM executions WHERE status = 'running'",
    "postgres": (
        "SELECT workspace_id, state FROM executions WHERE status = 'running' "
        """AND (state::jsonb -> 'steps') @> '[{"status": "running", "node_type": "agent"}]'"""
    ),
}


def running_states(read: Read, dialect: str) -> list[tuple[str, str]]:
    """``(workspace id, state JSON)`` of every running execution (on PostgreSQL, those with a
    running agent step)."""
    rows = read(_RUNNING[dialect], []).fetchall()
    return [(str(w), str(s)) for w, s in rows]


def running_state(read: Read, execution_id: str) -> tuple[str, str] | None:
    """``(workspace id, state JSON)`` of the execution if it is running, else None."""
    row = read(
        "SELECT workspace_id, state FROM executions WHERE execution_id = ? AND status = 'running'", [execution_id]
    ).fetchone()
    return None if row is None else (str(row[0]), str(row[1]))
