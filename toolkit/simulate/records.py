"""Turning one run's log into table rows and an outcome."""

from __future__ import annotations

from toolkit.jsonio import dumps
from toolkit.simulate.results import BatchWriter


def source_of(step_id: str, steps: dict) -> str | None:
    """The node (or group) whose edge created a step, read from its deterministic id
    (semantics §5.2: ``<parent>__to__<child>`` or ``group_<groupId>__to__<child>``)."""
    if "__to__" not in step_id:
        return None
    parent = step_id.rsplit("__to__", 1)[0]
    step = steps.get(parent)
    if step is not None:
        return step.node_id
    return parent[6:] if parent.startswith("group_") else None


def in_step_order(steps) -> list:
    """An execution's steps in the order the analytics views use (semantics §12): by start,
    then end (still running or waiting: last), node id, step id. Written in this order with
    each step's position as ``steps.step_index``, so ``directly_follows`` sorts sorted rows."""
    return sorted(steps, key=lambda s: (s.started_at, s.completed_at is None, s.completed_at or 0,
                                        s.node_id, s.step_id))


def outcome(log) -> tuple:
    """(status, failure_reason, path, iterations, cycle_time_ms, breaches, steps)."""
    state = log.state
    steps = state.steps.values()
    path = ">".join(s.node_id for s in steps if s.status != "cancelled")
    iterations = max((lp.iteration for lp in state.loops.values()), default=1)
    ended = state.completed_at or state.cancelled_at
    cycle = ended - state.started_at if ended is not None else None
    breaches = sum(1 for s in steps if s.status == "breached")
    return state.status, state.failure_reason, path, iterations, cycle, breaches, len(state.steps)


def write_run(writer: BatchWriter, run: int, log) -> tuple:
    state = log.state
    eid = state.execution_id
    rows = writer.rows
    rows["executions"].append((run, eid, state.definition_id, state.definition_version, state.status,
                                 state.failure_reason, state.correlation_id, state.started_at,
                                 state.completed_at, state.cancelled_at))
    steps = state.steps
    step_rows = rows["steps"]
    for index, step in enumerate(in_step_order(steps.values())):
        output = step.output
        decision = output.get("decision") if output else None
        step_rows.append((run, step.step_id, step.node_id, step.node_type, step.status, step.group_id,
                                step.iteration, step.started_at, step.completed_at,
                                decision if isinstance(decision, str) else None,
                                source_of(step.step_id, steps), dumps(output if output is not None else {}),
                                index))
    rows["events"].extend((run, e.seq, e.type, e.step_id, e.timestamp, dumps(e.data)) for e in log.events)
    result = outcome(log)
    rows["outcomes"].append((run, eid) + result)
    return result
