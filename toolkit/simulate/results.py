"""Simulation results in DuckDB: executions, steps, events and outcomes, written in batches
through Arrow (never row by row), and the summary statistics computed from them in SQL."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

from toolkit.engine import EXTERNAL_TYPES

_INT, _BIG, _STR, _BOOL = pa.int32(), pa.int64(), pa.string(), pa.bool_()

# What a batch of runs holds per table (:class:`toolkit.simulate.records.TableBuilder`) and
# how it lands in DuckDB. ``x`` is a run's position in its batch (the index of the per-run
# dictionary columns); the external flag is computed by SQL. Strings of few distinct values
# (types, node ids, statuses, a step's id in its events) are dictionary columns too: building
# them is no dearer, they are a quarter less to move from a worker to the writer, and DuckDB
# inserts them faster.
_EXTERNAL = ", ".join(f"'{t}'" for t in sorted(EXTERNAL_TYPES))
_DICT = pa.dictionary(_INT, _STR)
BATCH_SCHEMAS: dict[str, pa.Schema] = {
    "executions": pa.schema(
        [
            ("x", _INT),
            ("run", _INT),
            ("execution_id", _STR),
            ("definition_id", _DICT),
            ("definition_version", _INT),
            ("status", _DICT),
            ("failure_reason", _STR),
            ("correlation_id", _STR),
            ("started_at", _BIG),
            ("completed_at", _BIG),
            ("cancelled_at", _BIG),
        ]
    ),
    "steps": pa.schema(
        [
            ("x", _INT),
            ("run", _INT),
            ("execution_id", _DICT),
            ("step_id", _STR),
            ("node_id", _DICT),
            ("node_type", _DICT),
            ("status", _DICT),
            ("group_id", _DICT),
            ("iteration", _INT),
            ("started_at", _BIG),
            ("completed_at", _BIG),
            ("decision", _DICT),
            ("source_node_id", _DICT),
            ("output", _STR),
            ("step_index", _INT),
        ]
    ),
    "events": pa.schema(
        [
            ("x", _INT),
            ("run", _INT),
            ("execution_id", _DICT),
            ("seq", _INT),
            ("event_id", _STR),
            ("type", _DICT),
            ("step_id", _DICT),
            ("timestamp", _BIG),
            ("correlation_id", _DICT),
            ("data", _STR),
        ]
    ),
    "outcomes": pa.schema(
        [
            ("x", _INT),
            ("run", _INT),
            ("execution_id", _DICT),
            ("status", _DICT),
            ("failure_reason", _STR),
            ("path", _DICT),
            ("iterations", _INT),
            ("cycle_time_ms", _BIG),
            ("breaches", _INT),
            ("steps", _INT),
            ("replication", _INT),
        ]
    ),
}
# $1 + run is the execution's key, $2 the definition's key.
_INSERTS = {
    "executions": "INSERT INTO executions SELECT * EXCLUDE (x), $1 + run, $2 FROM _batch",
    "steps": "INSERT INTO steps SELECT * EXCLUDE (x, step_index), $1 + run, step_index, $2 FROM _batch",
    "events": "INSERT INTO events SELECT run, execution_id, seq, event_id, type, step_id, "
    f"timestamp, correlation_id, type IN ({_EXTERNAL}), data FROM _batch",
    "outcomes": "INSERT INTO outcomes SELECT * EXCLUDE (x) FROM _batch",
}


def _schema() -> str:
    return resources.files("toolkit.simulate").joinpath("schema.sql").read_text()


@functools.cache
def _columns_of_schema() -> dict[str, list[str]]:
    with duckdb.connect() as con:
        con.execute(_schema())
        return _columns(con)


def _columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    return dict(
        con.execute(
            "SELECT table_name, list(column_name ORDER BY ordinal_position) "
            "FROM information_schema.columns WHERE table_catalog = current_database() AND table_schema = 'main' "
            "GROUP BY ALL"
        ).fetchall()
    )


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
            return (
                f"is not a simulation results database of this version: its table {table} has {detail}. "
                "Simulate into a new file."
            )
    if (
        seed is not None
        and "executions" in found
        and con.execute(
            "SELECT 1 FROM executions WHERE starts_with(execution_id, ?) LIMIT 1", [f"sim-{seed}-"]
        ).fetchall()
    ):
        return (
            f"already holds the runs of seed {seed} (execution ids sim-{seed}-…): simulate with another "
            "seed, or into a new file."
        )
    return None


@contextlib.contextmanager
def writing(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """A simulation's inserts: one transaction, so a simulation that fails or is interrupted
    leaves none of its runs behind (inside a transaction the caller holds, they become part of
    it), with DuckDB's settings for them, restored afterwards (the connection may be the
    caller's).

    One transaction is also cheaper: each INSERT committed on its own cost milliseconds
    more (the batch merged into the table), and into a file, 100,000 runs took 10.1 s against
    14.2 s, in a 120 MiB file against 165 MiB. One thread: the inserts are CPU-bound appends,
    and a second thread costs about as much CPU again in coordination (and competes with the
    workers). In memory, no automatic checkpoint: there it only recompresses the tables
    written so far, every 16 MiB of inserts, which took a third of the inserts' CPU and saved
    no memory (measured: 40,000 runs, 879 against 546 ms, the same peak memory)."""
    threads, threshold, path = _one_row(
        con,
        "SELECT current_setting('threads'), current_setting('checkpoint_threshold'), "
        "(SELECT path FROM duckdb_databases() WHERE database_name = current_database())",
    )
    con.execute("SET threads = 1")
    if path is None:
        con.execute("SET checkpoint_threshold = '1TB'")
    try:
        if _in_transaction(con):  # the caller's: theirs to commit
            yield
            return
        con.execute("BEGIN")
        try:
            yield
        except BaseException:
            with contextlib.suppress(duckdb.Error):  # a lost connection: the error is the original
                con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.execute(f"SET threads = {int(threads)}")
        con.execute(f"SET checkpoint_threshold = '{threshold}'")


def _in_transaction(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection holds an open transaction: outside one, every statement runs
    in a transaction of its own, with its own id. (A BEGIN that fails would abort it.)"""
    return _one_row(con, "SELECT txid_current()") == _one_row(con, "SELECT txid_current()")


class BatchWriter:
    """Moves batches of runs (Arrow tables from :class:`~toolkit.simulate.records.TableBuilder`)
    into DuckDB, ``insert_runs`` runs per INSERT and table (each statement costs milliseconds
    however small, so batches are concatenated first, unless :meth:`flush` is called).
    Executions get ``exec_key`` = the number of executions already in the database plus
    ``run`` (runs are written in order, from 0, so the keys count on densely), and their
    ``definition_key``: the one their definition id already has there, else the next."""

    def __init__(self, con: duckdb.DuckDBPyConnection, insert_runs: int = 10_000):
        self.con = con
        self.insert_runs = insert_runs
        self.base_key = con.execute("SELECT count(*) FROM executions").fetchall()[0][0]
        self.definition_keys: dict[str, int] = dict(
            con.execute(
                "SELECT definition_id, min(definition_key) FROM executions WHERE definition_key IS NOT NULL "
                "GROUP BY definition_id"
            ).fetchall()
        )
        self.pending: list[dict[str, pa.Table]] = []
        self.pending_runs = 0

    def _definition_key(self, definition_id: str) -> int:
        if definition_id not in self.definition_keys:
            self.definition_keys[definition_id] = max(self.definition_keys.values(), default=-1) + 1
        return self.definition_keys[definition_id]

    def write(self, tables: dict[str, pa.Table]) -> int:
        """Queue one batch (runs of one definition) for insertion; returns how many runs it held."""
        runs = tables["executions"].num_rows
        if runs:
            self.pending.append(tables)
            self.pending_runs += runs
            if self.pending_runs >= self.insert_runs:
                self.flush()
        return runs

    def flush(self) -> None:
        """Insert what is queued. The statements scan the batch by name (``_batch``), so
        several simulations may share one database."""
        if not self.pending:
            return
        first = self.pending[0]["executions"]
        params = [self.base_key, self._definition_key(first.column("definition_id")[0].as_py())]
        for table, sql in _INSERTS.items():
            _batch = pa.concat_tables([t[table] for t in self.pending])  # noqa: F841 - read by the SQL
            self.con.execute(sql, params if "$1" in sql else None)
        self.pending.clear()
        self.pending_runs = 0


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
            # (p50 is known, so every figure is: all are taken over the same finished runs)
            lines.append("cycle time  " + "  ".join(f"{k} {_duration(v)}" for k, v in ct.items() if v is not None))
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


def _one_row(con: duckdb.DuckDBPyConnection, sql: str) -> tuple:
    row = con.execute(sql).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return row


def summarise(con: duckdb.DuckDBPyConnection, top_paths: int = 20) -> Summary:
    """Summary statistics of the results in ``con`` (SQL, so it scales with the runs)."""
    runs = _one_row(con, "SELECT count(*) FROM outcomes")[0]
    outcomes = dict(
        con.execute("SELECT status, count(*) FROM outcomes GROUP BY status ORDER BY count(*) DESC, status").fetchall()
    )
    reasons = dict(
        con.execute(
            "SELECT failure_reason, count(*) FROM outcomes WHERE failure_reason IS NOT NULL "
            "GROUP BY 1 ORDER BY 2 DESC, 1"
        ).fetchall()
    )
    paths = con.execute(
        "SELECT path, count(*) AS n FROM outcomes GROUP BY path ORDER BY n DESC, path LIMIT ?", [top_paths]
    ).fetchall()
    quantiles = _one_row(
        con,
        "SELECT quantile_cont(cycle_time_ms, [0.5, 0.9, 0.95, 0.99]), avg(cycle_time_ms) FROM outcomes "
        "WHERE status <> 'running'",
    )
    cycle = dict(zip(("p50", "p90", "p95", "p99"), quantiles[0] or [None] * 4))
    cycle["mean"] = quantiles[1]
    breach_rate = _one_row(con, "SELECT coalesce(avg((breaches > 0)::INTEGER), 0) FROM outcomes")[0]
    iterations = dict(con.execute("SELECT iterations, count(*) FROM outcomes GROUP BY 1 ORDER BY 1").fetchall())
    nodes = dict(con.execute("SELECT node_id, count(*) FROM steps GROUP BY 1 ORDER BY 1").fetchall())
    edges = {
        (a, b): n
        for a, b, n in con.execute(
            "SELECT source_node_id, node_id, count(*) FROM steps WHERE source_node_id IS NOT NULL "
            "GROUP BY 1, 2 ORDER BY 1, 2"
        ).fetchall()
    }
    return Summary(runs, outcomes, reasons, paths, cycle, float(breach_rate), iterations, nodes, edges)
