"""Calibration speed: ``toolkit.simulate.calibrate`` over the event log of ``event_sql.py``.

The log is the one ``benchmarks/event_sql.py`` builds (the parallel-review workload, simulated
for ``--base-runs`` executions and replicated up to ``--events`` events: 10 million by
default). Timed in the same run, on the same file:

* calibration: ``calibrate(con, "parallel-review")``, everything it fits and reports;
* the baseline: one full scan of the events table grouped by type
  (``SELECT type, count(*), max(timestamp) FROM events GROUP BY type``), the least any
  analysis of the whole log pays.

Printed: both times (best of ``--repeat``), their ratio, and the target (calibration under 10 s
at 10M events). The machine is shared: the load average is printed before and after.

Run: ``.venv/bin/python benchmarks/calibrate.py [--events 10000000] [--db log.duckdb --reuse]``
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from event_sql import build_log  # noqa: E402

from toolkit.analytics import attach  # noqa: E402
from toolkit.simulate import calibrate  # noqa: E402

TARGET_S = 10.0
BASELINE = "SELECT type, count(*), max(timestamp) FROM events GROUP BY type"


def best(fn, repeat: int) -> tuple[float, object]:
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - started)
    return min(times), value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000, help="events in the log (default 10 million)")
    parser.add_argument("--base-runs", type=int, default=20_000, help="executions actually simulated (default 20,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", help="keep the generated log in this DuckDB file (default: a temporary file)")
    parser.add_argument("--reuse", action="store_true", help="use the log already in --db instead of building it")
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs)")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.db) if args.db else Path(tmp) / "log.duckdb"
        if not (args.reuse and path.exists()):
            path.unlink(missing_ok=True)
            info = build_log(path, args.events, args.base_runs, args.seed)
            print(
                f"log: {info['events']:,} events, {info['steps']:,} steps, {info['executions']:,} executions "
                f"(simulated {info['simulated_s']:.1f} s, replicated {info['replicated_s']:.1f} s)"
            )
        con = attach(duckdb.connect(str(path), read_only=True))
        con.execute("SET enable_progress_bar = false")
        events = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
        scan_s, _ = best(lambda: con.execute(BASELINE).fetchall(), args.repeat)
        cal_s, calibration = best(lambda: calibrate(con, "parallel-review"), args.repeat)
        con.close()
    alice = calibration.report["reviewers"]["alice@legal"]
    print(f"events: {events:,}")
    print(f"baseline (one grouped scan of events): {scan_s:.3f} s")
    print(
        f"calibrate:                             {cal_s:.3f} s  = {cal_s / scan_s:.1f}x the scan  "
        f"(target < {TARGET_S:.0f} s: {'met' if cal_s < TARGET_S else 'NOT met'})"
    )
    print(
        f"  e.g. alice@legal approve {alice['approve']['value']:.3f} from {alice['approve']['n']:,} decisions "
        f"(true 0.8)"
    )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
