"""Benchmark: does a request cost more as the database grows?

Single requests, one after another, through the service functions the HTTP routes call
(`LocalClient`, no network: what is measured is the store), on an empty database and on one
holding ``--executions`` (default 1,000,000) waiting executions of ``parallel-review`` with
their events and command log. The filler copies one real dispatched execution's rows with
new ids in bulk SQL (as fast as the store allows, not through the engine).

Measured, p50 over ``--repeat`` fresh executions each: dispatch, get, a reviewer decision,
getEvents, and the first page of list (50). Printed: p50 wall and CPU time on empty and full
databases and the ratio full ÷ empty per request (target within 1.5x), with the fill's size
on disk and the load average (CPU time is the steadier figure on a shared machine). The
baseline (the empty database) is measured in the same run.

    .venv/bin/python benchmarks/server_growth.py [--executions 1000000] [--repeat 200]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from toolkit import examples  # noqa: E402
from toolkit.client import LocalClient  # noqa: E402

DEFINITION = "parallel-review"
TARGET = 1.5


def fill(client: LocalClient, n: int) -> None:
    """``n`` copies of one waiting execution (rows of executions, events, commands), new ids."""
    template = client.dispatch(DEFINITION)["executionId"]
    ws = client.workspace.workspace_id

    def copy(tx):
        params = [template, ws]
        ids = "'ex_' || substr(md5(i::VARCHAR), 1, 20)"
        tx.execute(
            f"""INSERT INTO executions BY NAME
            SELECT x.* REPLACE ({ids} AS execution_id, NULL AS idempotency_key, x.list_key + i + 1 AS list_key)
            FROM executions x, range(?) r(i) WHERE x.execution_id = ? AND x.workspace_id = ?""",
            [n] + params,
        )
        tx.execute(
            f"""INSERT INTO events BY NAME
            SELECT e.* REPLACE ({ids} AS execution_id, e.event_id || '_' || i AS event_id)
            FROM events e, range(?) r(i) WHERE e.execution_id = ? AND e.workspace_id = ?""",
            [n] + params,
        )
        tx.execute(
            f"""INSERT INTO commands BY NAME
            SELECT c.* REPLACE ({ids} AS execution_id)
            FROM commands c, range(?) r(i) WHERE c.execution_id = ? AND c.workspace_id = ?""",
            [n] + params,
        )

    client.services.store.write(copy)
    client.services.store.write(lambda tx: tx.execute("CHECKPOINT"))


KINDS = ("dispatch", "get", "decision", "getEvents", "list")


def measure(client: LocalClient, repeat: int, samples: dict | None = None) -> dict[str, tuple[list, list]]:
    """Wall and CPU milliseconds per request kind, over ``repeat`` fresh executions, added to
    ``samples``. The CPU time (this process, all its threads: DuckDB's included) is the steadier
    figure when other work shares the machine."""
    samples = samples if samples is not None else {k: ([], []) for k in KINDS}

    def timed(kind, fn):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        samples[kind][1].append((time.process_time() - start_cpu) * 1000)
        samples[kind][0].append((time.perf_counter() - start) * 1000)
        return result

    for _ in range(repeat):
        eid = timed("dispatch", lambda: client.dispatch(DEFINITION))["executionId"]
        steps = timed("get", partial(client.get_execution, eid))["steps"]
        legal = next(s for s in steps if s["nodeId"] == "legal-review")
        timed(
            "decision",
            partial(
                client.record_reviewer_decision, eid, legal["stepId"], reviewerId="alice@legal", decision="approve"
            ),
        )
        events = timed("getEvents", partial(client.get_events, eid))["events"]
        assert events, "getEvents returned nothing"
        timed("list", lambda: client.list_executions(pageSize=50))
    return samples


def run(executions: int, repeat: int) -> int:
    with tempfile.TemporaryDirectory() as tmp, contextlib.ExitStack() as stack:
        clients = {}
        for label, n in (("empty", 0), ("full", executions)):
            db = Path(tmp) / f"{label}.duckdb"
            with LocalClient.open(str(db)) as client:
                client.create_definition(examples.load(DEFINITION))
                creds = client.credentials
                if n:
                    start = time.perf_counter()
                    fill(client, n)
                    print(
                        f"filled {n:,} executions in {time.perf_counter() - start:.1f} s "
                        f"({db.stat().st_size / 2**20:,.0f} MiB)",
                        flush=True,
                    )
            # Reopened, as a server would start on it: caches empty, keys resumed after the fill's.
            clients[label] = stack.enter_context(
                LocalClient.open(str(db), api_key=creds.api_key, auth_token=creds.auth_token)
            )
            measure(clients[label], max(5, repeat // 10))  # warm statement plans
        # Alternating rounds, so that a change in the machine's load falls on both sides.
        samples = {label: {k: ([], []) for k in KINDS} for label in clients}
        for _ in range(10):
            for label, client in clients.items():
                measure(client, max(1, repeat // 10), samples[label])
        results = {
            label: {k: (statistics.median(w), statistics.median(c)) for k, (w, c) in kinds.items()}
            for label, kinds in samples.items()
        }
    print(
        f"\n{'request':<10} {'empty p50':>10} {'full p50':>10} {'ratio':>6}   "
        f"{'empty CPU':>10} {'full CPU':>10} {'ratio':>6}"
    )
    worst = worst_cpu = 0.0
    for kind in KINDS:
        (e, e_cpu), (f, f_cpu) = results["empty"][kind], results["full"][kind]
        worst, worst_cpu = max(worst, f / e), max(worst_cpu, f_cpu / e_cpu)
        print(
            f"{kind:<10} {e:>8.2f}ms {f:>8.2f}ms {f / e:>5.2f}x   "
            f"{e_cpu:>8.2f}ms {f_cpu:>8.2f}ms {f_cpu / e_cpu:>5.2f}x"
        )
    print(
        f"\nworst ratio {worst:.2f}x wall, {worst_cpu:.2f}x CPU (target within {TARGET}x of empty); "
        f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    )
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--executions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=200)
    args = parser.parse_args()
    return run(args.executions, args.repeat)


if __name__ == "__main__":
    sys.exit(main())
