"""Simulation results in DuckDB: executions, steps, events and outcomes, written in batches
through Arrow (never row by row), and the summary statistics computed from them in SQL."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path

import duckdb
import pyarrow as pa

_TABLES = ("executions", "steps", "events", "outcomes")


def connect(db: str | Path | duckdb.DuckDBPyConnection | None) -> duckdb.DuckDBPyConnection:
    """Open (or reuse) a DuckDB database and create the result tables."""
    con = db if isinstance(db, duckdb.DuckDBPyConnection) else duckdb.connect(str(db) if db else ":memory:")
    con.execute(resources.files("toolkit.simulate").joinpath("schema.sql").read_text())
    return con


class BatchWriter:
    """Row buffers per table (plain tuples: the cheapest thing to build in the hot loop);
    ``flush`` transposes each into columns and moves it into DuckDB as one Arrow table."""

    def __init__(self, con: duckdb.DuckDBPyConnection):
        self.con = con
        self.schemas = {t: pa.schema([(c, _arrow_type(d)) for c, d in con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ? "
            "ORDER BY ordinal_position", [t]).fetchall()]) for t in _TABLES}
        self.rows: dict[str, list[tuple]] = {t: [] for t in _TABLES}

    def pending(self) -> int:
        return len(self.rows["outcomes"])

    def flush(self) -> None:
        for table, rows in self.rows.items():
            if not rows:
                continue
            schema = self.schemas[table]
            columns = [pa.array(values, type=field.type) for values, field in zip(zip(*rows), schema)]
            _batch = pa.Table.from_arrays(columns, schema=schema)  # noqa: F841 - scanned by name below
            self.con.execute(f"INSERT INTO {table} SELECT * FROM _batch")
            rows.clear()


def _arrow_type(duck_type: str) -> pa.DataType:
    return {"INTEGER": pa.int32(), "BIGINT": pa.int64(), "BOOLEAN": pa.bool_()}.get(duck_type, pa.string())


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


def dumps(value) -> str:
    """Compact, key-order-preserving JSON: the byte form of every stored payload."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
