"""Simulation results in DuckDB: executions, steps, events and outcomes, written in batches
through Arrow (never row by row), and the summary statistics computed from them in SQL."""

from __future__ import annotations

import functools
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

from toolkit.engine import EXTERNAL_TYPES

_INT, _BIG, _STR, _BOOL = pa.int32(), pa.int64(), pa.string(), pa.bool_()

# What the hot loop buffers per table (plain tuples), and how each batch lands in DuckDB.
# Events carry only what differs per event; execution ids, event ids, correlation ids and
# the external flag are filled in by SQL from the executions of the same batch.
_EXTERNAL = ", ".join(f"'{t}'" for t in sorted(EXTERNAL_TYPES))
BUFFERS: dict[str, tuple[pa.Schema, str]] = {
    "executions": (pa.schema([("run", _INT), ("execution_id", _STR), ("definition_id", _STR),
                              ("definition_version", _INT), ("status", _STR), ("failure_reason", _STR),
                              ("correlation_id", _STR), ("started_at", _BIG), ("completed_at", _BIG),
                              ("cancelled_at", _BIG), ("exec_key", _INT), ("definition_key", _INT)]),
                   "INSERT INTO executions SELECT * FROM _batch"),
    "steps": (pa.schema([("run", _INT), ("step_id", _STR), ("node_id", _STR), ("node_type", _STR),
                         ("status", _STR), ("group_id", _STR), ("iteration", _INT), ("started_at", _BIG),
                         ("completed_at", _BIG), ("decision", _STR), ("source_node_id", _STR), ("output", _STR),
                         ("step_index", _INT)]),
              "INSERT INTO steps SELECT b.run, x.execution_id, b.* EXCLUDE (run, step_index), x.exec_key, "
              "b.step_index, x.definition_key FROM _batch b JOIN _executions x ON x.run = b.run "
              "ORDER BY x.exec_key, b.step_index"),
    "events": (pa.schema([("run", _INT), ("seq", _INT), ("type", _STR), ("step_id", _STR), ("timestamp", _BIG),
                          ("data", _STR)]),
               "INSERT INTO events SELECT b.run, x.execution_id, b.seq, 'evt_' || x.execution_id || '_' || b.seq, "
               f"b.type, b.step_id, b.timestamp, x.correlation_id, b.type IN ({_EXTERNAL}), b.data FROM _batch b "
               "JOIN _executions x ON x.run = b.run ORDER BY b.run, b.seq"),
    "outcomes": (pa.schema([("run", _INT), ("execution_id", _STR), ("status", _STR), ("failure_reason", _STR),
                            ("path", _STR), ("iterations", _INT), ("cycle_time_ms", _BIG), ("breaches", _INT),
                            ("steps", _INT)]),
                 "INSERT INTO outcomes SELECT * FROM _batch"),
}


def _schema() -> str:
    return resources.files("toolkit.simulate").joinpath("schema.sql").read_text()


@functools.cache
def _columns_of_schema() -> dict[str, list[str]]:
    with duckdb.connect() as con:
        con.execute(_schema())
        return _columns(con)


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    return dict(con.execute("SELECT table_name, list(column_name ORDER BY ordinal_position) "
                            "FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' "
                            "GROUP BY ALL").fetchall())


def connect(db: str | Path | duckdb.DuckDBPyConnection | None, seed: int | None = None) -> duckdb.DuckDBPyConnection:
    """Open (or reuse) a DuckDB database and create the result tables; with ``seed``, for a
    simulation with that seed.

    Raises ``ValueError`` when the database already holds tables of these names with other
    columns (a server's database, or results of an older version of the simulator), or runs of
    the same seed: execution ids are sim-<seed>-<run>, and the views join on them, so a second
    simulation with that seed would mix its executions with the first one's."""
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db) if db else ":memory:")
    problem = _refusal(con, seed)  # checked before anything is created: a refused database stays as it was
    if problem is not None:
        if not isinstance(db, duckdb.DuckDBPyConnection):
            con.close()
        raise ValueError(f"{db} {problem}")
    con.execute(_schema())
    return con


def _refusal(con: duckdb.DuckDBPyConnection, seed: int | None) -> str | None:
    found = _columns(con)
    for table, columns in _columns_of_schema().items():
        if table in found and found[table] != columns:
            missing = [c for c in columns if c not in found[table]]
            detail = f"no column {', '.join(missing)}" if missing else "other columns"
            return (f"is not a simulation results database of this version: its table {table} has {detail}. "
                    "Simulate into a new file.")
    if seed is not None and "executions" in found and con.execute(
            "SELECT 1 FROM executions WHERE starts_with(execution_id, ?) LIMIT 1", [f"sim-{seed}-"]).fetchall():
        return (f"already holds the runs of seed {seed} (execution ids sim-{seed}-…): simulate with another "
                "seed, or into a new file.")
    return None


class BatchWriter:
    """Row buffers per table (plain tuples: the cheapest thing to build in the hot loop);
    ``flush`` transposes each into columns and moves it into DuckDB as one Arrow table.
    Executions get their ``exec_key`` here, counting on from those already in the database,
    and their ``definition_key``: the one their definition id already has there, else the next."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.rows: dict[str, list[tuple]] = {t: [] for t in BUFFERS}
        self.next_key = con.execute("SELECT count(*) FROM executions").fetchone()[0]
        self.definition_keys: dict[str, int] = dict(con.execute(
            "SELECT definition_id, min(definition_key) FROM executions WHERE definition_key IS NOT NULL "
            "GROUP BY definition_id").fetchall())

    def _definition_key(self, definition_id: str) -> int:
        if definition_id not in self.definition_keys:
            self.definition_keys[definition_id] = max(self.definition_keys.values(), default=-1) + 1
        return self.definition_keys[definition_id]

    def pending(self) -> int:
        return len(self.rows["outcomes"])

    def flush(self) -> None:
        """Steps and events join the executions of *this* batch (scanned by name in the SQL,
        like the batches themselves), so several simulations may share one database."""
        if not self.rows["executions"]:
            return
        _executions = None
        for table, (schema, sql) in BUFFERS.items():
            rows = self.rows[table]
            if not rows:
                continue
            columns = [pa.array(values, type=f.type) for values, f in zip(zip(*rows), schema)]
            if table == "executions":
                columns.append(pa.array(range(self.next_key, self.next_key + len(rows)), type=_INT))
                columns.append(pa.array([self._definition_key(d) for d in columns[2].to_pylist()], type=_INT))
                self.next_key += len(rows)
            _batch = pa.Table.from_arrays(columns, schema=schema)
            if table == "executions":
                _executions = _batch  # noqa: F841 - read by the steps and events SQL
            self.con.execute(sql)
            rows.clear()


@dataclass
class Summary:
    """What thousands of runs did, at a glance."""

    runs: int
    outcomes: dict[str, int]
    failure_reasons: dict[str, int]
    path_frequencies: list[tuple[str, int]]
    cycle_time_ms: dict[str, float | None]
    sla_breach_rate: float
    iteration_histogram: dict[int, int]
    node_counts: dict[str, int]
    edge_counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def to_json(self) -> dict:
        data = asdict(self)
        data["path_frequencies"] = [{"path": p, "count": n} for p, n in self.path_frequencies]
        data["edge_counts"] = [{"from": a, "to": b, "count": n} for (a, b), n in self.edge_counts.items()]
        data["iteration_histogram"] = {str(k): v for k, v in self.iteration_histogram.items()}
        return data

    def __str__(self) -> str:
        lines = [f"{self.runs} runs"]
        lines += [f"  {status:<10}{n:>8}  {n / self.runs:6.1%}" for status, n in self.outcomes.items()]
        for reason, n in self.failure_reasons.items():
            lines.append(f"    {reason:<40}{n:>8}")
        ct = self.cycle_time_ms
        if ct.get("p50") is not None:
            lines.append("cycle time  " + "  ".join(f"{k} {_duration(v)}" for k, v in ct.items()))
        lines.append(f"SLA breach rate  {self.sla_breach_rate:.1%}")
        lines.append("loop iterations  " + "  ".join(f"{k}: {v}" for k, v in self.iteration_histogram.items()))
        lines.append("top paths")
        lines += [f"  {n:>8}  {p}" for p, n in self.path_frequencies[:5]]
        return "\n".join(lines)


def _duration(ms: float) -> str:
    if ms < 1000:
        return f"{ms:.0f}ms"
    if ms < 3_600_000:
        return f"{ms / 60_000:.1f}min"
    return f"{ms / 3_600_000:.1f}h"


def summarise(con: duckdb.DuckDBPyConnection, top_paths: int = 20) -> Summary:
    """Summary statistics of the results in ``con`` (SQL, so it scales with the runs)."""
    runs = con.execute("SELECT count(*) FROM outcomes").fetchone()[0]
    outcomes = dict(con.execute(
        "SELECT status, count(*) FROM outcomes GROUP BY status ORDER BY count(*) DESC, status").fetchall())
    reasons = dict(con.execute(
        "SELECT failure_reason, count(*) FROM outcomes WHERE failure_reason IS NOT NULL "
        "GROUP BY 1 ORDER BY 2 DESC, 1").fetchall())
    paths = con.execute(
        "SELECT path, count(*) AS n FROM outcomes GROUP BY path ORDER BY n DESC, path LIMIT ?", [top_paths]).fetchall()
    quantiles = con.execute(
        "SELECT quantile_cont(cycle_time_ms, [0.5, 0.9, 0.95, 0.99]), avg(cycle_time_ms) FROM outcomes "
        "WHERE status <> 'running'").fetchone()
    cycle = dict(zip(("p50", "p90", "p95", "p99"), quantiles[0] or [None] * 4))
    cycle["mean"] = quantiles[1]
    breach_rate = con.execute("SELECT coalesce(avg((breaches > 0)::INTEGER), 0) FROM outcomes").fetchone()[0]
    iterations = dict(con.execute(
        "SELECT iterations, count(*) FROM outcomes GROUP BY 1 ORDER BY 1").fetchall())
    nodes = dict(con.execute("SELECT node_id, count(*) FROM steps GROUP BY 1 ORDER BY 1").fetchall())
    edges = {(a, b): n for a, b, n in con.execute(
        "SELECT source_node_id, node_id, count(*) FROM steps WHERE source_node_id IS NOT NULL "
        "GROUP BY 1, 2 ORDER BY 1, 2").fetchall()}
    return Summary(runs, outcomes, reasons, paths, cycle, float(breach_rate), iterations, nodes, edges)

