"""Turning runs' logs into table columns (Arrow) and outcomes."""

from __future__ import annotations

import orjson
import pyarrow as pa

from toolkit.jsonio import dumps
from toolkit.simulate.results import _INT, _STR, BATCH_SCHEMAS

_orjson_dumps = orjson.dumps
_PER_RUN = ("execution_id", "correlation_id")


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


class TableBuilder:
    """Column buffers for a batch of runs: one Python list per column, filled with a list
    comprehension per run (no tuple per row, no transposing), and turned into Arrow tables by
    :meth:`tables`. Per-run values of the events and steps (execution id, correlation id)
    are dictionary columns indexed by the run's position ``x`` in the batch; the writer adds
    the database keys (:class:`toolkit.simulate.results.BatchWriter`)."""

    def __init__(self) -> None:
        self.columns: dict[str, dict[str, list]] = {
            table: {name: [] for name in schema.names} for table, schema in BATCH_SCHEMAS.items()}
        self.count = 0

    def add(self, run: int, replication: int, log) -> tuple:
        """Buffer one run's rows; returns its outcome (see :func:`outcome`)."""
        state = log.state
        x = self.count
        self.count += 1
        c = self.columns["executions"]
        for name, value in (("x", x), ("run", run), ("execution_id", state.execution_id), ("definition_id", state.definition_id),
                            ("definition_version", state.definition_version), ("status", state.status),
                            ("failure_reason", state.failure_reason), ("correlation_id", state.correlation_id),
                            ("started_at", state.started_at), ("completed_at", state.completed_at),
                            ("cancelled_at", state.cancelled_at)):
            c[name].append(value)

        steps = state.steps
        ordered = in_step_order(steps.values())
        c = self.columns["steps"]
        c["x"].extend([x] * len(ordered))
        c["step_id"].extend([s.step_id for s in ordered])
        c["node_id"].extend([s.node_id for s in ordered])
        c["node_type"].extend([s.node_type for s in ordered])
        c["status"].extend([s.status for s in ordered])
        c["group_id"].extend([s.group_id for s in ordered])
        c["iteration"].extend([s.iteration for s in ordered])
        c["started_at"].extend([s.started_at for s in ordered])
        c["completed_at"].extend([s.completed_at for s in ordered])
        c["decision"].extend([_decision(s.output) for s in ordered])
        c["source_node_id"].extend([source_of(s.step_id, steps) for s in ordered])
        c["output"].extend(_json_texts([s.output if s.output is not None else {} for s in ordered]))
        c["step_index"].extend(range(len(ordered)))

        events = log.events
        c = self.columns["events"]
        c["x"].extend([x] * len(events))
        c["seq"].extend([e.seq for e in events])
        c["type"].extend([e.type for e in events])
        c["step_id"].extend([e.step_id for e in events])
        c["timestamp"].extend([e.timestamp for e in events])
        c["data"].extend(_json_texts([e.data for e in events]))

        result = outcome(log)
        c = self.columns["outcomes"]
        c["x"].append(x)
        for name, value in zip(("status", "failure_reason", "path", "iterations", "cycle_time_ms", "breaches",
                                "steps"), result):
            c[name].append(value)
        c["replication"].append(replication)
        return result

    def tables(self) -> dict[str, pa.Table]:
        """The buffered runs as Arrow tables (of :data:`BATCH_SCHEMAS`); empties the buffers."""
        executions = self.columns["executions"]
        out = {}
        for table, schema in BATCH_SCHEMAS.items():
            columns = self.columns[table]
            arrays = []
            for f in schema:
                if f.name in _PER_RUN and table != "executions":  # execution_id / correlation_id of events and steps
                    arrays.append(pa.DictionaryArray.from_arrays(
                        pa.array(columns["x"], type=_INT), pa.array(executions[f.name], type=_STR)))
                elif f.name == "run" and table != "executions":
                    arrays.append(pa.array(executions["run"], type=_INT).take(pa.array(columns["x"], type=_INT)))
                else:
                    arrays.append(pa.array(columns[f.name], type=f.type))
            out[table] = pa.Table.from_arrays(arrays, schema=schema)
        self.__init__()
        return out


def _decision(output) -> str | None:
    decision = output.get("decision") if output else None
    return decision if isinstance(decision, str) else None


def _json_texts(values: list) -> list[str]:
    """Compact JSON texts, as :func:`toolkit.jsonio.dumps` writes them, inlined for the hot
    loop. Decoding each at once matters: orjson's bytes are allocated by the system allocator,
    and keeping thousands of them alive costs more than the short strings made from them."""
    try:
        return [_orjson_dumps(v).decode() for v in values]
    except (orjson.JSONEncodeError, TypeError):
        return [dumps(v) for v in values]
