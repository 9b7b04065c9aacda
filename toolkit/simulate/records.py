"""Turning runs' logs into table columns (Arrow) and outcomes."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from operator import attrgetter

import orjson
import pyarrow as pa
import pyarrow.compute as pc

from toolkit.jsonio import dumps
from toolkit.simulate.results import _INT, _STR, BATCH_SCHEMAS

_orjson_dumps = orjson.dumps


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


# A run's values are taken while its objects are fresh (rows of attributes; JSON encoded), and
# the run is then free to go: a batch holds its rows, not its events and steps.
# :meth:`TableBuilder.tables` turns each column into Arrow in one pass over the batch. The rows
# read the attributes in comprehensions, where the interpreter's slot access is several times
# cheaper than an attribute getter's lookup; they hold these columns, in this order.
_STEP_COLUMNS = ("step_id", "node_id", "node_type", "status", "group_id", "iteration", "started_at", "completed_at")
_EVENT_COLUMNS = ("seq", "type", "step_id", "timestamp")
_GET_OUTPUT = attrgetter("output")
_EXECUTION_ROW = attrgetter(*BATCH_SCHEMAS["executions"].names[2:])  # after x and run
_EXECUTION_COLUMNS = BATCH_SCHEMAS["executions"].names
_OUTCOME_COLUMNS = tuple(n for n in BATCH_SCHEMAS["outcomes"].names if n != "execution_id")


class TableBuilder:
    """A batch of runs, turned into Arrow tables (of :data:`BATCH_SCHEMAS`) by :meth:`tables`.

    A run adds one tuple each for its execution and outcome and one per ordered step and
    event, its steps' decisions and sources, and its JSON; :meth:`tables` then makes every
    column in one pass over the batch. JSON columns become an Arrow string column from one
    joined byte string and the values' lengths, without a Python string per value. The
    per-run values of events, steps and outcomes (run, execution id, correlation id) are
    taken from the executions by each row's run position ``x`` (dictionary columns)."""

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.event_rows: list[tuple] = []
        self.event_counts: list[int] = []
        self.step_rows: list[tuple] = []
        self.step_counts: list[int] = []
        self.decisions: list[str | None] = []
        self.sources: list[str | None] = []
        self.json: dict[str, tuple[list[bytes], list[int]]] = {"steps": ([], []), "events": ([], [])}
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
        self.step_rows += [
            (s.step_id, s.node_id, s.node_type, s.status, s.group_id, s.iteration, s.started_at, s.completed_at)
            for s in ordered
        ]
        self.step_counts.append(len(ordered))
        self.sources += [source_of(s.step_id, steps) for s in ordered]
        outputs = [o if o is not None else {} for o in map(_GET_OUTPUT, ordered)]
        self.decisions += map(_decision, outputs)
        self._json("steps", outputs)
        events = log.events
        self.event_rows += [(e.seq, e.type, e.step_id, e.timestamp) for e in events]
        self.event_counts.append(len(events))
        self._json("events", [e.data for e in events])
        result = outcome(log)
        self.outcome_rows.append((x, run) + result + (replication,))
        return result

    def _json(self, table: str, values: list) -> None:
        """Compact JSON, as :func:`toolkit.jsonio.dumps` writes it (orjson; the standard library
        for integers orjson refuses), joined into one byte string per run: encoded while the
        run's values are fresh, and without holding a bytes object per value for the batch."""
        try:
            texts = list(map(_orjson_dumps, values))
        except (orjson.JSONEncodeError, TypeError):
            texts = [dumps(v).encode("utf-8") for v in values]
        blobs, lengths = self.json[table]
        blobs.append(b"".join(texts))
        lengths += map(len, texts)

    def tables(self) -> dict[str, pa.Table]:
        """The buffered runs as Arrow tables; empties the buffers."""
        executions = _columns(_EXECUTION_COLUMNS, self.execution_rows)
        x = pa.array(executions["x"], type=_INT)
        per_run = {
            "run": pa.array(executions["run"], type=_INT),
            "execution_id": pa.array(executions["execution_id"], type=_STR),
            "correlation_id": pa.array(executions["correlation_id"], type=_STR),
        }
        step_columns: dict[str, Sequence | pa.Array] = _columns(_STEP_COLUMNS, self.step_rows)
        step_columns["decision"] = self.decisions
        step_columns["source_node_id"] = self.sources
        step_columns["output"] = _json_column(*self.json["steps"])
        step_columns["step_index"] = _positions_within(self.step_counts)
        event_columns: dict[str, Sequence | pa.Array] = _columns(_EVENT_COLUMNS, self.event_rows)
        event_columns["data"] = _json_column(*self.json["events"])
        event_runs = _run_positions(self.event_counts)
        seq = event_columns["seq"] = pa.array(event_columns["seq"], type=_INT)
        # Made here, in a worker when there are workers, rather than by the one process that
        # inserts every batch (where DuckDB's string concatenation cost it a sixth of its CPU).
        event_columns["event_id"] = pc.binary_join_element_wise(
            "evt", per_run["execution_id"].take(event_runs), pc.cast(seq, _STR), "_"
        )
        out = {
            "executions": _table("executions", executions, x, per_run),
            "steps": _table("steps", step_columns, _run_positions(self.step_counts), per_run),
            "events": _table("events", event_columns, event_runs, per_run),
            "outcomes": _table("outcomes", _columns(_OUTCOME_COLUMNS, self.outcome_rows), x, per_run),
        }
        self._clear()
        return out


def _columns(names: Sequence[str], rows: list[tuple]) -> dict[str, Sequence]:
    """Rows of values (in ``names`` order) as ``{name: column}``."""
    columns = list(zip(*rows)) if rows else [()] * len(names)
    return dict(zip(names, columns))


def _table(name: str, columns: Mapping, x: pa.Array, per_run: dict[str, pa.Array]) -> pa.Table:
    """Table ``name`` from its own ``columns``; ``x`` and the per-run columns the rows lack."""
    schema = BATCH_SCHEMAS[name]
    arrays = []
    for f in schema:
        value = columns.get(f.name)
        if isinstance(value, pa.Array):
            arrays.append(value)
        elif value is not None:
            arrays.append(pa.array(value, type=f.type))
        elif f.name == "x":
            arrays.append(x)
        elif f.name == "run":
            arrays.append(per_run["run"].take(x))
        else:  # execution_id, correlation_id
            arrays.append(pa.DictionaryArray.from_arrays(x, per_run[f.name]))
    return pa.Table.from_arrays(arrays, schema=schema)


def _run_positions(counts: list[int]) -> pa.Array:
    """Each row's run position, from the runs' row counts: ``[2, 1] -> [0, 0, 1]``."""
    lists = pa.ListArray.from_arrays(
        pa.array(itertools.accumulate(counts, initial=0), type=_INT), pa.nulls(sum(counts))
    )
    return pc.list_parent_indices(lists).cast(_INT)


def _positions_within(counts: list[int]) -> pa.Array:
    """Each row's position within its run: ``[2, 1] -> [0, 1, 0]``."""
    return pa.array(itertools.chain.from_iterable(map(range, counts)), type=_INT)


def _json_column(blobs: list[bytes], lengths: list[int]) -> pa.Array:
    """An Arrow string column from the values' bytes, joined, and their lengths."""
    offsets = pa.array(itertools.accumulate(lengths, initial=0), type=_INT)
    return pa.StringArray.from_buffers(len(lengths), offsets.buffers()[1], pa.py_buffer(b"".join(blobs)))


def _decision(output: dict | None) -> str | None:
    decision = output.get("decision") if output is not None else None
    return decision if isinstance(decision, str) else None
