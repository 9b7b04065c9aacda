"""Event-log SQL at scale: the analytics views against pm4py and hand-written pandas.

The log: the parallel-review workload (``toolkit/examples/parallel-review.json``; legal
approves with p=0.8, brand with p=0.85, a rejected round loops back, at most 3 rounds),
simulated for ``--base-runs`` executions, then REPLICATED with shifted execution ids, run
numbers and times until it holds ``--events`` events. The simulator runs ~1-3k executions/s
(~30-80k events/s), so simulating 10 million events outright would take minutes; the copies
have exactly the simulator's schema and per-execution content, which is what the queries
see. (``--base-runs`` as large as the whole log simulates everything.)

Timed, in one run, each statistic three ways, all on the same log, all checked to agree:

1. ours: SQL over the views of ``toolkit/analytics/views.sql`` on the DuckDB file, result
   fetched into Python — step-duration percentiles and medians per node (``step_durations``),
   directly-follows counts (``directly_follows``), case durations and outcome counts
   (``execution_outcomes``; the same through the richer ``execution_summary`` is reported too);
2. pm4py's own functions on the exported log: ``toolkit.analytics.step_log``, the XES
   export's rows as a DataFrame (the column types ``pm4py.read_xes`` gives; reading the XES
   file itself takes minutes), and its interval-log form. Median service time per activity
   (``pm4py.get_service_time``; pm4py has no other percentiles, so the comparison is median
   against our median query), directly-follows counts (``discover_dfg`` also counts start and
   end activities, so the ratio uses the function it calls for the graph alone, pm4py's
   ``get_dfg_graph``; ``discover_dfg`` is printed too), ``pm4py.get_all_case_durations`` and
   pm4py's attribute statistics counting each case once (``get_trace_attribute_values``
   counts events). By default on the whole log; ``--pm4py-events N`` runs it on the first
   executions holding about N events instead, and times ours again on exactly that subset;
3. hand-written pandas on the steps and executions tables loaded as DataFrames.

Exports and loads are not timed (their times are printed); each timing is the best of
``--repeat`` runs. Targets: every query under 0.5 s at 10M events, at least 5x faster than
pm4py, not slower than pandas. The machine is shared: the load average is printed before and
after; compare runs at similar load.

Run: ``.venv/bin/python benchmarks/event_sql.py [--events 10000000] [--pm4py-events -1]``
(``make bench`` installs pm4py through the ``bench`` extra).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from toolkit import examples  # noqa: E402
from toolkit.analytics import attach, step_log, to_arrow  # noqa: E402
from toolkit.simulate import simulate  # noqa: E402

POLICY = {"reviewers": {"alice@legal": {"approve": 0.8}, "bob@brand": {"approve": 0.85}}}
ARRIVAL_MS = 60_000  # the simulator's default spacing of dispatches
QUANTILES = (0.5, 0.9, 0.99)
TARGET_S = 0.5

OURS = {
    "step-duration percentiles": (
        "SELECT node_id, quantile_cont(duration_ms, [0.5, 0.9, 0.99]) FROM step_durations "
        "WHERE duration_ms IS NOT NULL GROUP BY node_id"
    ),
    "step-duration medians": (
        "SELECT node_id, median(duration_ms) FROM step_durations WHERE duration_ms IS NOT NULL GROUP BY node_id"
    ),
    "directly-follows counts": "SELECT from_node_id, to_node_id, transitions FROM directly_follows",
    "case durations": "SELECT execution_id, cycle_time_ms FROM execution_outcomes WHERE cycle_time_ms IS NOT NULL",
    "outcome counts": "SELECT status, count(*) FROM execution_outcomes GROUP BY status",
}
# The same two statistics through the richer execution_summary (it also counts each execution's
# steps, loops and breaches, so it reads steps and events too): reported, not held to the targets.
SUMMARY = {
    "case durations": "SELECT execution_id, cycle_time_ms FROM execution_summary WHERE cycle_time_ms IS NOT NULL",
    "outcome counts": "SELECT status, count(*) FROM execution_summary GROUP BY status",
}


# ---------------------------------------------------------------------------- the log


def build_log(path: Path, events: int, base_runs: int, seed: int) -> dict:
    """Simulate ``base_runs`` executions, then replicate them into ``path`` up to ``events``."""
    started = time.perf_counter()
    result = simulate(examples.load("parallel-review"), runs=base_runs, seed=seed, policy=POLICY, progress=False)
    simulated_s = time.perf_counter() - started
    src = result.con
    base_events = src.execute("SELECT count(*) FROM events").fetchall()[0][0]
    copies = max(1, math.ceil(events / base_events))
    out = duckdb.connect(str(path))
    out.execute("SET enable_progress_bar = false")
    for table in ("executions", "steps", "events"):
        order = "run, step_index" if table == "steps" else "run"  # as the simulator writes them
        out.register(f"src_{table}", to_arrow(src.sql(f"SELECT * FROM {table} ORDER BY {order}")))
    src.close()
    shift = base_runs * ARRIVAL_MS
    started = time.perf_counter()

    def new_id(c: int) -> str:
        return f"(execution_id || '-c{c}')" if c else "execution_id"

    out.execute("CREATE TABLE executions AS SELECT * FROM src_executions LIMIT 0")
    out.execute("CREATE TABLE steps AS SELECT * FROM src_steps LIMIT 0")
    out.execute("CREATE TABLE events AS SELECT * FROM src_events LIMIT 0")
    for c in range(copies):
        eid, dt, dr = new_id(c), c * shift, c * base_runs
        out.execute(
            f"INSERT INTO executions SELECT run + {dr}, {eid}, definition_id, definition_version, status, "
            f"failure_reason, {eid}, started_at + {dt}, completed_at + {dt}, cancelled_at + {dt}, "
            f"exec_key + {dr}, definition_key FROM src_executions"
        )
        out.execute(
            f"INSERT INTO steps SELECT run + {dr}, {eid}, step_id, node_id, node_type, status, group_id, "
            f"iteration, started_at + {dt}, completed_at + {dt}, decision, source_node_id, output, "
            f"exec_key + {dr}, step_index, definition_key FROM src_steps"
        )
        out.execute(
            f"INSERT INTO events SELECT run + {dr}, {eid}, seq, 'evt_' || {eid} || '_' || seq, type, step_id, "
            f"timestamp + {dt}, {eid}, external, data FROM src_events"
        )
    out.execute("CHECKPOINT")
    replicated_s = time.perf_counter() - started
    counts = out.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM steps), (SELECT count(*) FROM executions)"
    ).fetchall()[0]
    out.close()
    return {
        "base_runs": base_runs,
        "base_events": base_events,
        "copies": copies,
        "simulated_s": simulated_s,
        "replicated_s": replicated_s,
        "events": counts[0],
        "steps": counts[1],
        "executions": counts[2],
    }


def subset(con: duckdb.DuckDBPyConnection, events: int) -> duckdb.DuckDBPyConnection:
    """An in-memory database with the first executions (by run) holding about ``events`` events."""
    runs = (
        con.execute(
            "SELECT max(run) + 1 FROM (SELECT run, sum(count(*)) OVER (ORDER BY run) AS total "
            "FROM events GROUP BY run) WHERE total <= ?",
            [events],
        ).fetchall()[0][0]
        or 1
    )
    sub = duckdb.connect()
    sub.execute("SET enable_progress_bar = false")
    for table in ("executions", "steps", "events"):
        _part = to_arrow(con.sql(f"SELECT * FROM {table} WHERE run < {runs}"))  # noqa: F841 - read by name
        sub.execute(f"CREATE TABLE {table} AS SELECT * FROM _part")
    return attach(sub)


# ---------------------------------------------------------------------------- the three contenders


def best(fn, repeat: int):
    times, value = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - started)
    return min(times), value


def ours(con: duckdb.DuckDBPyConnection, repeat: int) -> tuple[dict, dict]:
    def percentiles():
        return {node: list(q) for node, q in con.execute(OURS["step-duration percentiles"]).fetchall()}

    def medians():
        return dict(con.execute(OURS["step-duration medians"]).fetchall())

    def dfg():
        return {(a, b): n for a, b, n in con.execute(OURS["directly-follows counts"]).fetchall()}

    def cases():
        table = to_arrow(con.sql(OURS["case durations"]))
        return dict(zip(table.column("execution_id").to_pylist(), table.column("cycle_time_ms").to_pylist()))

    def outcomes():
        return dict(con.execute(OURS["outcome counts"]).fetchall())

    return _run(
        {
            "step-duration percentiles": percentiles,
            "step-duration medians": medians,
            "directly-follows counts": dfg,
            "case durations": cases,
            "outcome counts": outcomes,
        },
        repeat,
    )


def _run(functions: dict, repeat: int) -> tuple[dict, dict]:
    timings, answers = {}, {}
    for name, fn in functions.items():
        timings[name], answers[name] = best(fn, repeat)
    return timings, answers


def pandas_frames(con: duckdb.DuckDBPyConnection):
    steps = con.sql("SELECT execution_id, step_id, node_id, started_at, completed_at FROM steps").df()
    executions = con.sql("SELECT execution_id, status, started_at, completed_at, cancelled_at FROM executions").df()
    return steps, executions


def pandas_side(steps, executions, repeat: int) -> tuple[dict, dict]:
    import pandas as pd

    def percentiles():
        done = steps[steps["completed_at"].notna()]
        q = (done["completed_at"] - done["started_at"]).groupby(done["node_id"]).quantile(list(QUANTILES))
        return {node: [float(q[(node, p)]) for p in QUANTILES] for node in q.index.get_level_values(0).unique()}

    def medians():
        done = steps[steps["completed_at"].notna()]
        return {
            node: float(m)
            for node, m in (done["completed_at"] - done["started_at"]).groupby(done["node_id"]).median().items()
        }

    def dfg():
        ordered = steps.sort_values(["execution_id", "started_at", "completed_at", "node_id"], na_position="last")
        following = ordered["execution_id"].eq(ordered["execution_id"].shift(-1))
        pairs = pd.DataFrame({"a": ordered["node_id"][following], "b": ordered["node_id"].shift(-1)[following]})
        return {(a, b): int(n) for (a, b), n in pairs.groupby(["a", "b"]).size().items()}

    def cases():
        ended = executions["completed_at"].fillna(executions["cancelled_at"])
        keep = ended.notna()
        return dict(
            zip(executions["execution_id"][keep], (ended[keep] - executions["started_at"][keep]).astype("int64"))
        )

    def outcomes():
        return executions["status"].value_counts().to_dict()

    return _run(
        {
            "step-duration percentiles": percentiles,
            "step-duration medians": medians,
            "directly-follows counts": dfg,
            "case durations": cases,
            "outcome counts": outcomes,
        },
        repeat,
    )


def pm4py_side(lifecycle, intervals, repeat: int) -> tuple[dict, dict]:
    """pm4py on the exported log; the extra entry ``discover_dfg`` is the public function that
    also counts start and end activities (reported, not in the ratio)."""
    import pm4py
    from pm4py.algo.discovery.dfg.adapters.pandas.df_statistics import get_dfg_graph
    from pm4py.statistics.attributes.pandas import get as attributes

    def medians():  # pm4py aggregates service times by mean/median/min/max/sum
        return pm4py.get_service_time(intervals, aggregation_measure="median", start_timestamp_key="start_timestamp")

    def dfg():  # what discover_dfg computes for the graph (interval log: by start, then end)
        return dict(
            get_dfg_graph(
                intervals,
                activity_key="concept:name",
                case_id_glue="case:concept:name",
                timestamp_key="time:timestamp",
                start_timestamp_key="start_timestamp",
            )
        )

    def discover_dfg():
        return dict(pm4py.discover_dfg(intervals)[0])

    def cases():
        return pm4py.get_all_case_durations(lifecycle)

    def outcomes():  # counting cases, not events
        return attributes.get_attribute_values(lifecycle, "case:status", parameters={"keep_once_per_case": True})

    return _run(
        {
            "step-duration medians": medians,
            "directly-follows counts": dfg,
            "discover_dfg": discover_dfg,
            "case durations": cases,
            "outcome counts": outcomes,
        },
        repeat,
    )


# ---------------------------------------------------------------------------- checks


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)


def check(ours_answers: dict, pandas_answers: dict, pm4py_answers: dict | None, sub_answers: dict | None) -> list[str]:
    problems = []
    o, p = ours_answers, pandas_answers
    for name in ("step-duration percentiles", "step-duration medians"):
        mine, theirs = o[name], p[name]
        as_lists = {n: v if isinstance(v, list) else [v] for n, v in mine.items()}
        if set(mine) != set(theirs) or not all(
            all(close(x, y) for x, y in zip(as_lists[n], theirs[n] if isinstance(theirs[n], list) else [theirs[n]]))
            for n in mine
        ):
            problems.append(f"{name}: ours != pandas")
    for name in ("directly-follows counts", "case durations", "outcome counts"):
        if o[name] != p[name]:
            problems.append(f"{name}: ours != pandas")
    if pm4py_answers is not None:
        s, m = sub_answers, pm4py_answers
        medians = {n: v / 1000 for n, v in s["step-duration medians"].items()}  # pm4py: seconds
        if set(medians) != set(m["step-duration medians"]) or not all(
            close(medians[n], m["step-duration medians"][n]) for n in medians
        ):
            problems.append("median step durations: ours != pm4py")
        if not s["directly-follows counts"] == m["directly-follows counts"] == m["discover_dfg"]:
            problems.append("directly-follows: ours != pm4py")
        ours_cases = sorted(v / 1000 for v in s["case durations"].values())
        if len(ours_cases) != len(m["case durations"]) or not all(
            close(a, b) for a, b in zip(ours_cases, m["case durations"])
        ):
            problems.append("case durations: ours != pm4py")
        if s["outcome counts"] != m["outcome counts"]:
            problems.append("outcome counts: ours != pm4py")
    return problems


# ---------------------------------------------------------------------------- main


def load_average() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=10_000_000, help="events in the log (default 10 million)")
    parser.add_argument("--base-runs", type=int, default=20_000, help="executions actually simulated (default 20,000)")
    parser.add_argument(
        "--pm4py-events",
        type=int,
        default=-1,
        help="run pm4py on the executions of the first N events (default -1: the whole log; 0 = skip pm4py)",
    )
    parser.add_argument("--repeat", type=int, default=3, help="timings are the best of this many runs (default 3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--db", help="keep the generated log in this DuckDB file (default: a temporary file)")
    parser.add_argument("--reuse", action="store_true", help="use the log already in --db instead of building it")
    args = parser.parse_args(argv)

    tmp = None
    if args.db:
        path = Path(args.db)
        if path.exists() and not args.reuse:
            path.unlink()
    else:
        tmp = tempfile.TemporaryDirectory()
        path = Path(tmp.name) / "events.duckdb"
    print(
        f"== event-log SQL benchmark ({os.cpu_count()} CPU(s), duckdb {duckdb.__version__}, "
        f"load average {load_average()})"
    )
    if args.reuse and path.exists():
        print(f"log: reused {path}")
    else:
        base_runs = max(1, min(args.base_runs, args.events // 20))
        info = build_log(path, args.events, base_runs, args.seed)
        note = (
            ""
            if info["copies"] == 1
            else f"; replicated x{info['copies']} with shifted execution ids and times in {info['replicated_s']:.1f} s"
        )
        print(
            f"log: {info['events']:,} events, {info['steps']:,} steps, {info['executions']:,} executions "
            f"(simulated {info['base_runs']:,} runs = {info['base_events']:,} events in {info['simulated_s']:.1f} s"
            f"{note})"
        )

    con = duckdb.connect(str(path), read_only=True)
    con.execute("SET enable_progress_bar = false")
    attach(con)
    events, steps_n, executions_n = con.execute(
        "SELECT (SELECT count(*) FROM events), (SELECT count(*) FROM steps), (SELECT count(*) FROM executions)"
    ).fetchall()[0]
    threads = con.execute("SELECT current_setting('threads')").fetchall()[0][0]
    print(f"timed on {events:,} events, {steps_n:,} steps, {executions_n:,} executions; DuckDB threads = {threads}")
    ours_t, ours_a = ours(con, args.repeat)
    summary_t = {name: best(lambda q=q: con.execute(q).fetchall(), args.repeat)[0] for name, q in SUMMARY.items()}

    started = time.perf_counter()
    steps, executions = pandas_frames(con)
    load_s = time.perf_counter() - started
    pandas_t, pandas_a = pandas_side(steps, executions, args.repeat)
    del steps, executions

    pm4py_t = pm4py_a = sub_t = sub_a = None
    whole = True
    pm_note = "pm4py: skipped (--pm4py-events 0)"
    if args.pm4py_events:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                import pm4py  # noqa: F401
        except ImportError:
            pm_note = "pm4py: not installed (pip install pm4py, or make bench) - skipped"
        else:
            whole = args.pm4py_events < 0 or args.pm4py_events >= events
            sub = con if whole else subset(con, args.pm4py_events)
            sub_events = sub.execute("SELECT count(*) FROM events").fetchall()[0][0]
            sub_t, sub_a = (ours_t, ours_a) if whole else ours(sub, args.repeat)
            started = time.perf_counter()
            lifecycle, intervals = step_log(sub), step_log(sub, intervals=True)
            export_s = time.perf_counter() - started
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                pm4py_t, pm4py_a = pm4py_side(lifecycle, intervals, args.repeat)
            n_cases = sub.execute("SELECT count(*) FROM executions").fetchall()[0][0]
            pm_note = (
                f"pm4py {pm4py.__version__}: on {'the whole log' if whole else 'a subset'} of {sub_events:,} "
                f"events ({n_cases:,} executions; {len(lifecycle):,} start/complete rows and {len(intervals):,} "
                f"interval rows exported in {export_s:.1f} s, not timed)"
            )
            if not whole:
                sub.close()
            del lifecycle, intervals

    print(
        f"pandas {__import__('pandas').__version__}: steps and executions loaded into DataFrames in {load_s:.1f} s "
        "(not timed)"
    )
    print(pm_note)
    header = f"\n{'statistic':<28}{'ours':>9}{'pandas':>10}{'pandas/ours':>13}"
    if pm4py_t:
        header += ("" if whole else f"{'ours (subset)':>15}") + f"{'pm4py':>10}{'pm4py/ours':>12}"
    print(header)
    failures = []
    for name in OURS:
        line = f"{name:<28}{ours_t[name]:>8.3f}s{pandas_t[name]:>9.3f}s{pandas_t[name] / ours_t[name]:>12.1f}x"
        if ours_t[name] >= TARGET_S:
            failures.append(f"{name}: {ours_t[name]:.3f} s is not under {TARGET_S} s")
        if pandas_t[name] < ours_t[name]:
            failures.append(f"{name}: slower than pandas ({ours_t[name]:.3f} s vs {pandas_t[name]:.3f} s)")
        if pm4py_t:
            line += "" if whole else f"{sub_t[name]:>14.3f}s"
            if name in pm4py_t:
                ratio = pm4py_t[name] / sub_t[name]
                line += f"{pm4py_t[name]:>9.3f}s{ratio:>11.1f}x"
                if ratio < 5:
                    failures.append(f"{name}: not 5x faster than pm4py ({ratio:.1f}x)")
            else:
                line += f"{'-':>10}{'-':>12}"
        print(line)
    print("through execution_summary: " + ", ".join(f"{n} {t:.3f}s" for n, t in summary_t.items()))
    if pm4py_t:
        print(
            f"pm4py.discover_dfg (the graph plus start and end activities): {pm4py_t['discover_dfg']:.3f}s, "
            f"{pm4py_t['discover_dfg'] / sub_t['directly-follows counts']:.1f}x ours"
        )
    problems = check(ours_a, pandas_a, pm4py_a, sub_a)
    print(
        "\nanswers: "
        + (
            "ours, pandas" + (" and pm4py" if pm4py_a else "") + " agree"
            if not problems
            else "DISAGREE: " + "; ".join(problems)
        )
    )
    print(
        "targets: "
        + (
            "met (each query < 0.5 s, not slower than pandas" + (", >= 5x faster than pm4py)" if pm4py_t else ")")
            if not failures
            else "MISSED: " + "; ".join(failures)
        )
    )
    print(f"load average at the end: {load_average()}")
    con.close()
    if tmp is not None:
        tmp.cleanup()
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
