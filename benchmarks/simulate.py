"""Simulator throughput against SpiffWorkflow on the parallel-review workload.

The workload (``toolkit/examples/parallel-review.json`` and ``parallel_review.bpmn`` here):
draft agent -> legal + brand reviews in parallel (joined) -> publish; a rejected round loops
back to draft, at most 3 rounds. Legal approves with p=0.8, brand with p=0.85.

Measured in one run, on one core:
  1. ours, full pipeline: ``simulate()`` with every event, step and execution written to DuckDB;
  2. ours, engine + driver only (no recording) — the like-for-like comparison, since the
     SpiffWorkflow driver records nothing;
  3. SpiffWorkflow 3.x on the same process (``spiff_baseline.py``).
Both sides' outcome distributions are checked against each other and against the exact
values. Then peak memory of a 100,000-run simulation, in a child process.

Run: ``.venv/bin/python benchmarks/simulate.py [--runs 10000] [--memory-runs 100000]``
(``make bench`` installs SpiffWorkflow through the ``bench`` extra).
"""

from __future__ import annotations

import argparse
from importlib import metadata
import gc
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from spiff_baseline import expected_distribution, run_spiff  # noqa: E402

from toolkit import examples  # noqa: E402
from toolkit.simulate import EPOCH_MS, run_rng, simulate, to_plan  # noqa: E402
from toolkit.simulate.behaviour import ResolvedPolicy  # noqa: E402
from toolkit.simulate.driver import run_execution  # noqa: E402
from toolkit.simulate.policy import Policy  # noqa: E402

P_LEGAL, P_BRAND = 0.8, 0.85
POLICY = {"reviewers": {"alice@legal": {"approve": P_LEGAL}, "bob@brand": {"approve": P_BRAND}}}


def ours_full(runs: int, seed: int) -> dict:
    start = time.perf_counter()
    result = simulate(examples.load("parallel-review"), runs=runs, seed=seed, policy=POLICY, progress=False)
    seconds = time.perf_counter() - start
    s = result.summary
    return {"seconds": seconds, "executions_per_s": runs / seconds, "steps_per_s": sum(s.node_counts.values()) / seconds,
            "outcomes": s.outcomes, "iterations": s.iteration_histogram}


def ours_engine(runs: int, seed: int) -> dict:
    plan = to_plan(examples.load("parallel-review"))
    behaviour = ResolvedPolicy(Policy.load(POLICY), plan)
    outcomes: dict[str, int] = {}
    iterations: dict[int, int] = {}
    steps = 0
    start = time.perf_counter()
    for run in range(runs):
        log = run_execution(plan, execution_id=f"sim-{seed}-{run}", start_ms=EPOCH_MS, rng=run_rng(seed, run),
                            behaviour=behaviour, horizon_ms=behaviour.horizon_ms)
        state = log.state
        outcomes[state.status] = outcomes.get(state.status, 0) + 1
        it = max((lp.iteration for lp in state.loops.values()), default=1)
        iterations[it] = iterations.get(it, 0) + 1
        steps += len(state.steps)
    seconds = time.perf_counter() - start
    return {"seconds": seconds, "executions_per_s": runs / seconds, "steps_per_s": steps / seconds,
            "outcomes": outcomes, "iterations": iterations}


def shares(result: dict, runs: int) -> dict:
    return {"completed": result["outcomes"].get("completed", 0) / runs,
            **{f"rounds={k}": result["iterations"].get(k, 0) / runs for k in (1, 2, 3)}}


def memory_child(runs: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        simulate(examples.load("parallel-review"), runs=runs, seed=1, policy=POLICY, db=Path(tmp) / "runs.duckdb",
                 progress=False)
    print(json.dumps({"max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--memory-runs", type=int, default=100_000, help="0 to skip the memory measurement")
    parser.add_argument("--memory-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_child:
        memory_child(args.memory_child)
        return

    runs = args.runs
    simulate(examples.load("parallel-review"), runs=200, seed=0, policy=POLICY, progress=False)  # warm up imports
    gc.collect()
    full = ours_full(runs, args.seed)
    engine = ours_engine(runs, args.seed)
    spiff = run_spiff(runs, args.seed, P_LEGAL, P_BRAND)

    exact = expected_distribution(P_LEGAL, P_BRAND)
    print(f"parallel-review, {runs:,} runs (one core)")
    print(f"{'':<34}{'exec/s':>10}{'steps/s':>12}{'vs Spiff':>10}")
    for name, r in (("ours: simulate() -> DuckDB", full), ("ours: engine + driver only", engine)):
        print(f"{name:<34}{r['executions_per_s']:>10,.0f}{r['steps_per_s']:>12,.0f}"
              f"{r['executions_per_s'] / spiff['executions_per_s']:>9.1f}x")
    print(f"{'SpiffWorkflow ' + metadata.version('SpiffWorkflow'):<34}{spiff['executions_per_s']:>10,.0f}{'':>12}{1:>9.1f}x")

    print("\noutcome shares      ours(full)  ours(engine)  spiff    exact")
    ours_s, engine_s, spiff_s = shares(full, runs), shares(engine, runs), shares(spiff, runs)
    exact_s = {"completed": exact["completed"], **{f"rounds={k}": exact["iterations"][k] for k in (1, 2, 3)}}
    for key in ours_s:
        print(f"  {key:<17}{ours_s[key]:>10.3f}{engine_s[key]:>13.3f}{spiff_s[key]:>8.3f}{exact_s[key]:>9.3f}")
        for name, value in (("ours", ours_s[key]), ("spiff", spiff_s[key])):
            if abs(value - exact_s[key]) > 0.03:
                raise SystemExit(f"{name} {key} share {value:.3f} is off the exact {exact_s[key]:.3f}")
    if spiff.get("misrouted"):
        raise SystemExit(f"SpiffWorkflow misrouted {spiff['misrouted']} runs")

    if args.memory_runs:
        out = subprocess.run([sys.executable, __file__, "--memory-child", str(args.memory_runs)],
                             capture_output=True, text=True, check=True)
        rss = json.loads(out.stdout.strip().splitlines()[-1])["max_rss_mib"]
        print(f"\npeak memory, {args.memory_runs:,} runs to a DuckDB file: {rss:,.0f} MiB (target < 1024)")


if __name__ == "__main__":
    main()
