"""Turning runs' logs into table columns (Arrow) and outcomes."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from operator import attrgetter

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
    return sorted(
        steps, key=lambda s: (s.started_at, s.completed_at is None, s.completed_at or 0, s.node_id, s.step_id)
    )


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


# Attribute getters and list.extend(map(...)) iterate in C: no comprehension frame per column.
_STEP_COLUMNS = ("step_id", "node_id", "node_type", "status", "group_id", "iteration", "started_at", "completed_at")
_EVENT_COLUMNS = ("seq", "type", "step_id", "timestamp")
_GET = {name: attrgetter(name) for name in set(_STEP_COLUMNS + _EVENT_COLUMNS + ("data", "output"))}
_JSON_COLUMNS = {"steps": "output", "events": "data"}
_EXECUTION_ROW = attrgetter(*BATCH_SCHEMAS["executions"].names[2:])  # after x and run
_OUTCOME_ROW = (
    "x",
    "run",
    "status",
    "failure_reason",
    "path",
    "iterations",
    "cycle_time_ms",
    "breaches",
    "steps",
    "replication",
)


class TableBuilder:
    """Column buffers for a batch of runs: one Python list per column, extended per run by
    mapping an attribute getter over its events and steps (no tuple per row, no transposing),
    and turned into Arrow tables by :meth:`tables`. JSON columns are kept as one byte string
    per run plus each value's length, which become an Arrow string column without a Python
    string per value. Per-run values of the events and steps (execution id, correlation id)
    are dictionary columns indexed by the run's position ``x`` in the batch."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.columns: dict[str, dict[str, list]] = {
            table: {name: [] for name in schema.names} for table, schema in BATCH_SCHEMAS.items()
        }
        self.json: dict[str, tuple[list[bytes], list[int]]] = {t: ([], []) for t in _JSON_COLUMNS}
        # One tuple per run (made in C by an attribute getter), in the order of the tables'
        # columns; transposed once per batch by :meth:`tables`.
        self.execution_rows: list[tuple] = []
        self.outcome_rows: list[tuple] = []
        self.count = 0

    def add(self, run: int, replication: int, log) -> tuple:
        """Buffer one run's rows; returns its outcome (see :func:`outcome`)."""
        state = log.state
        x = self.count
        self.count += 1
        self.execution_rows.append((x, run) + _EXECUTION_ROW(state))

        steps = state.steps
        ordered = in_step_order(steps.values())
        c = self.columns["steps"]
        c["x"].extend([x] * len(ordered))
        for name in _STEP_COLUMNS:
            c[name].extend(map(_GET[name], ordered))
        outputs = [s.output if s.output is not None else {} for s in ordered]
        c["decision"].extend(map(_decision, outputs))
        c["source_node_id"].extend([source_of(s.step_id, steps) for s in ordered])
        c["step_index"].extend(range(len(ordered)))
        self._json("steps", outputs)

        events = log.events
        c = self.columns["events"]
        c["x"].extend([x] * len(events))
        for name in _EVENT_COLUMNS:
            c[name].extend(map(_GET[name], events))
        self._json("events", list(map(_GET["data"], events)))

        result = outcome(log)
        self.outcome_rows.append((x, run) + result + (replication,))
        return result

    def _json(self, table: str, values: list) -> None:
        """Compact JSON, as :func:`toolkit.jsonio.dumps` writes it (orjson; the standard library
        for integers orjson refuses), joined into one byte string for the run."""
        try:
            texts = list(map(_orjson_dumps, values))
        except (orjson.JSONEncodeError, TypeError):
            texts = [dumps(v).encode("utf-8") for v in values]
        blobs, lengths = self.json[table]
        blobs.append(b"".join(texts))
        lengths.extend(map(len, texts))

    def tables(self) -> dict[str, pa.Table]:
        """The buffered runs as Arrow tables (of :data:`BATCH_SCHEMAS`); empties the buffers."""
        by_table: dict[str, Mapping[str, Sequence]] = dict(self.columns)
        for table, names, rows in (
            ("executions", BATCH_SCHEMAS["executions"].names, self.execution_rows),
            ("outcomes", _OUTCOME_ROW, self.outcome_rows),
        ):
            if rows:
                by_table[table] = {**self.columns[table], **dict(zip(names, zip(*rows)))}
        executions = by_table["executions"]
        out = {}
        for table, schema in BATCH_SCHEMAS.items():
            columns = by_table[table]
            x = pa.array(columns["x"], type=_INT)
            arrays = []
            for f in schema:
                if f.name == _JSON_COLUMNS.get(table):
                    blobs, lengths = self.json[table]
                    offsets = pa.array(itertools.accumulate(lengths, initial=0), type=_INT)
                    arrays.append(
                        pa.StringArray.from_buffers(len(lengths), offsets.buffers()[1], pa.py_buffer(b"".join(blobs)))
                    )
                elif table == "executions":
                    arrays.append(pa.array(columns[f.name], type=f.type))
                elif f.name in _PER_RUN:  # execution_id / correlation_id of events, steps, outcomes
                    arrays.append(pa.DictionaryArray.from_arrays(x, pa.array(executions[f.name], type=_STR)))
                elif f.name == "run" and table != "outcomes":
                    arrays.append(pa.array(executions["run"], type=_INT).take(x))
                elif f.name == "x":
                    arrays.append(x)
                else:
                    arrays.append(pa.array(columns[f.name], type=f.type))
            out[table] = pa.Table.from_arrays(arrays, schema=schema)
        self._clear()
        return out


def _decision(output: dict) -> str | None:
    decision = output.get("decision")
    return decision if isinstance(decision, str) else None
