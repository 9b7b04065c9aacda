"""An aged Parquet mirror against the compacted one: the same queries, timed on both in one run.

The server syncs its mirror every 5 s while there is traffic, one file per table per sync, so a
day leaves ~17,000 files per table. This builds such a mirror directly (``--syncs`` syncs of a
steady workload, written with pyarrow in the mirror's layout and state file — no server), runs
the queries over it, compacts it (``Mirror.compact``: one file per table and day), runs the
same queries again, checks the answers agree, and prints each query's time on both and the
ratio. Best of ``--repeat`` runs each.

Run: ``.venv/bin/python benchmarks/mirror_age.py [--syncs 4000]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit.analytics import open_mirror  # noqa: E402
from toolkit.analytics.compact import apply, compact  # noqa: E402
from toolkit.analytics.manifest import empty_state, part_name, save_state  # noqa: E402
from toolkit.analytics.mirror import APPEND_ONLY, TABLES  # noqa: E402

QUERIES = {
    "events per type": "SELECT type, count(*) FROM events GROUP BY 1 ORDER BY 1",
    "executions per status": "SELECT status, count(*) FROM executions GROUP BY 1 ORDER BY 1",
    "step time per node": "SELECT node_id, count(*), sum(completed_at - started_at) FROM steps GROUP BY 1 ORDER BY 1",
    "commands per kind": "SELECT kind, count(*), count(DISTINCT execution_id) FROM commands GROUP BY 1 ORDER BY 1",
}
TYPES = ("step.started", "step.completed", "step.awaiting-approval", "execution.dispatched")
NODES = ("draft", "legal-review", "brand-review", "publish")
T0 = 1_760_000_000_000


def build_aged_mirror(
    folder: Path, syncs: int, *, events_per_sync: int = 4, change_every: int = 10
) -> dict[str, pa.Table]:
    """A mirror folder as ``syncs`` syncs of a steady load would leave it: each sync a part of
    ``events`` (``events_per_sync`` rows); every ``change_every``-th sync an execution changed
    (a part each of ``commands``, ``executions`` and ``steps``, a new version of execution
    ``x<sync // change_every % 50>``); the definition in the first sync's part. Returns every
    row written, per table."""
    folder = Path(folder)
    everything: dict[str, list] = {table: [] for table in TABLES}
    sizes: dict[str, list[tuple[int, int]]] = {table: [] for table in TABLES}
    for table in TABLES:
        (folder / table).mkdir(parents=True, exist_ok=True)
    versions: dict[str, int] = {}
    for batch in range(1, syncs + 1):
        t = T0 + batch * 5000
        rows: dict[str, list] = {table: [] for table in TABLES}
        for i in range((batch - 1) * events_per_sync, batch * events_per_sync):
            rows["events"].append(
                {
                    "run": None,
                    "workspace_id": "ws",
                    "execution_id": f"x{i // 40 % 50}",
                    "seq": i,
                    "event_id": f"ev{i}",
                    "type": TYPES[i % len(TYPES)],
                    "step_id": f"s{i % 7}",
                    "timestamp": t,
                    "correlation_id": "c",
                    "external": True,
                    "data": "{}",
                }
            )
        if batch == 1:
            rows["definition_versions"].append(
                {"workspace_id": "ws", "definition_id": "d", "version": 1, "body": "{}", "created_at": T0}
            )
        if batch % change_every == 0:
            _change(rows, versions, batch, t, f"x{batch // change_every % 50}")
        for table, table_rows in rows.items():
            everything[table] += table_rows
            sizes[table].append((batch, len(table_rows)))
    tables = {table: pa.Table.from_pylist(rows, schema=SCHEMAS[table]) for table, rows in everything.items()}
    for table, data in tables.items():  # one file per sync: slices of the table, in order
        offset = 0
        for batch, n in sizes[table]:
            if n:  # compression and statistics off: the build is about file count, not size
                pq.write_table(
                    data.slice(offset, n), folder / table / part_name(batch), compression="NONE", write_statistics=False
                )
            offset += n
    state = empty_state(APPEND_ONLY)
    state["batch"] = syncs
    save_state(folder, state)
    return tables


def _change(rows: dict, versions: dict, batch: int, t: int, execution: str) -> None:
    """A new version of ``execution``: its command, its snapshot and its steps."""
    version = versions[execution] = versions.get(execution, 0) + 1
    status = "completed" if version % 3 == 0 else "running"
    rows["commands"].append(
        {
            "workspace_id": "ws",
            "execution_id": execution,
            "version": version,
            "applied_at": t,
            "kind": f"k{version % 3}",
            "payload": "{}",
        }
    )
    rows["executions"].append(
        {
            "run": None,
            "workspace_id": "ws",
            "execution_id": execution,
            "definition_id": "d",
            "definition_version": 1,
            "status": status,
            "failure_reason": None,
            "correlation_id": "c",
            "idempotency_key": None,
            "organization_id": None,
            "document_id": None,
            "webhook_url": None,
            "started_at": T0,
            "completed_at": t if status == "completed" else None,
            "cancelled_at": None,
            "next_deadline": None,
            "version": version,
            "list_key": batch,
        }
    )
    rows["steps"] += [
        {
            "run": None,
            "workspace_id": "ws",
            "execution_id": execution,
            "step_id": f"s{i}",
            "node_id": NODES[i % len(NODES)],
            "node_type": "human",
            "status": "completed",
            "group_id": None,
            "iteration": 1,
            "started_at": T0 + i,
            "completed_at": t,
            "decision": "approve",
            "source_node_id": None,
            "output": "{}",
            "version": version,
        }
        for i in range(version)
    ]


def _schema(**columns) -> pa.Schema:
    return pa.schema(list(columns.items()))


S, INT, B = pa.string(), pa.int64(), pa.bool_()
SCHEMAS = {
    "events": _schema(
        run=pa.int32(),
        workspace_id=S,
        execution_id=S,
        seq=pa.int32(),
        event_id=S,
        type=S,
        step_id=S,
        timestamp=INT,
        correlation_id=S,
        external=B,
        data=S,
    ),
    "commands": _schema(workspace_id=S, execution_id=S, version=pa.int32(), applied_at=INT, kind=S, payload=S),
    "executions": _schema(
        run=pa.int32(),
        workspace_id=S,
        execution_id=S,
        definition_id=S,
        definition_version=pa.int32(),
        status=S,
        failure_reason=S,
        correlation_id=S,
        idempotency_key=S,
        organization_id=S,
        document_id=S,
        webhook_url=S,
        started_at=INT,
        completed_at=INT,
        cancelled_at=INT,
        next_deadline=INT,
        version=pa.int32(),
        list_key=INT,
    ),
    "steps": _schema(
        run=pa.int32(),
        workspace_id=S,
        execution_id=S,
        step_id=S,
        node_id=S,
        node_type=S,
        status=S,
        group_id=S,
        iteration=pa.int32(),
        started_at=INT,
        completed_at=INT,
        decision=S,
        source_node_id=S,
        output=S,
        version=pa.int32(),
    ),
    "definition_versions": _schema(workspace_id=S, definition_id=S, version=pa.int32(), body=S, created_at=INT),
}


def answers(folder: Path) -> tuple[dict, dict]:
    """Each query's rows and its best time over the mirror in ``folder``."""
    con = open_mirror(folder)
    rows, times = {}, {}
    for name, sql in QUERIES.items():
        best = float("inf")
        for _ in range(ARGS.repeat):
            started = time.perf_counter()
            rows[name] = con.execute(sql).fetchall()
            best = min(best, time.perf_counter() - started)
        times[name] = best
    con.close()
    return rows, times


def files(folder: Path) -> int:
    return sum(1 for table in TABLES for _ in os.scandir(folder / table))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "events"
        started = time.perf_counter()
        build_aged_mirror(folder, ARGS.syncs)
        print(f"built {ARGS.syncs} syncs: {files(folder)} files in {time.perf_counter() - started:.1f} s")
        aged_rows, aged = answers(folder)
        from toolkit.analytics.manifest import load_state

        state = load_state(folder, APPEND_ONLY)
        started = time.perf_counter()
        change = compact(folder, state, TABLES, now_ms=T0)
        apply(folder, state, change)
        print(
            f"compacted {change['merged']} parts into {change['written']} files in "
            f"{time.perf_counter() - started:.1f} s (the parts stay until their grace period ends)"
        )
        compact_rows, compacted = answers(folder)
        assert compact_rows == aged_rows, "the compacted mirror answers differently"
        print(f"{'query':<24}{'aged':>10}{'compacted':>12}{'aged / compacted':>18}")
        for name in QUERIES:
            print(f"{name:<24}{aged[name]:>9.3f}s{compacted[name]:>11.3f}s{aged[name] / compacted[name]:>17.1f}x")
        print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--syncs", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=3)
    ARGS = parser.parse_args()
    main()
