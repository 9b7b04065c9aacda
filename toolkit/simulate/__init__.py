"""Simulate a definition thousands of times, deterministically, on a virtual clock.

>>> from toolkit import examples
>>> from toolkit.simulate import simulate
>>> result = simulate(examples.load("parallel-review"), runs=200, seed=7,
...                   policy={"reviewers": {"*": {"approve": 0.8}}})
>>> result.summary.runs, sorted(result.summary.outcomes)
(200, ['completed', 'failed'])

With ``replications=R`` the result carries 95% intervals across R independent sets of runs
(:mod:`.intervals`); ``workers=N`` computes the runs in N processes with the same result
(:mod:`.jobs`). A scripted run (exact inputs at exact virtual times) is how an author
unit-tests a definition; see :mod:`toolkit.simulate.script` for the format, :mod:`.policy` for
policies (with :mod:`.calendars`, :mod:`.queues` for reviewer capacity and
:mod:`.distributions` for latencies).
"""

from __future__ import annotations

import gc
import json
from pathlib import Path

from toolkit.engine import Plan, external_view
from toolkit.model import Definition
from toolkit.simulate.behaviour import ResolvedPolicy
from toolkit.simulate.driver import RunLog, run_execution
from toolkit.simulate.intervals import Interval, Intervals
from toolkit.simulate.jobs import Job, computing, run_rng
from toolkit.simulate.policy import Policy
from toolkit.simulate.records import outcome
from toolkit.simulate.results import BatchWriter, Summary, connect, summarise, writing
from toolkit.simulate.script import Script

__all__ = [
    "Calibration",
    "calibrate",
    "WhatIf",
    "whatif",
    "Policy",
    "Script",
    "Summary",
    "SimulationResult",
    "ScriptedRun",
    "Interval",
    "Intervals",
    "simulate",
    "run_script",
    "to_plan",
    "run_rng",
    "EPOCH_MS",
]

# The default ``startAt``, 2026-01-01T00:00:00Z, so timestamps read as real dates.
EPOCH_MS = Policy().start_ms


def to_plan(definition) -> Plan:
    """A Plan from a raw create body, a :class:`Definition` or a Plan."""
    if isinstance(definition, Plan):
        return definition
    if not isinstance(definition, Definition):
        definition = Definition.model_validate(definition)
    return Plan.from_definition(definition)


class SimulationResult:
    """Results of :func:`simulate`: DuckDB tables ``executions``, ``steps``, ``events``,
    ``outcomes`` on ``con``, the :class:`Summary` over every run, and with ``replications``
    of 2 or more the :class:`Intervals` (``metric -> Interval(mean, low, high)``)."""

    def __init__(
        self, con, summary: Summary, runs: int, seed: int, replications: int = 1, intervals: Intervals | None = None
    ):
        self.con = con
        self.summary = summary
        self.runs = runs
        self.seed = seed
        self.replications = replications
        self.intervals = intervals

    def sql(self, query: str, params=None):
        """Run SQL over the result tables; returns a DuckDB relation (``.df()``, ``.fetchall()``)."""
        return self.con.sql(query, params=params)

    def outcomes(self):
        return self.con.sql("SELECT * FROM outcomes ORDER BY run")

    def events(self, run: int, external_only: bool = False) -> list[dict]:
        """One run's event log as dicts (``data`` decoded), in ``seq`` order."""
        rows = self.con.execute(
            "SELECT seq, event_id, type, step_id, timestamp, correlation_id, data FROM events "
            "WHERE run = ? AND (external OR NOT ?) ORDER BY seq",
            [run, external_only],
        ).fetchall()
        return [
            {
                "eventId": eid,
                "seq": seq,
                "type": t,
                "stepId": sid,
                "timestamp": ts,
                "correlationId": cid,
                "data": json.loads(data),
            }
            for seq, eid, t, sid, ts, cid, data in rows
        ]

    def to_json(self) -> dict:
        """The summary, and the intervals when there are replications (``collab simulate --json``)."""
        data = self.summary.to_json()
        if self.intervals is not None:
            data["intervals"] = self.intervals.to_json()
        return data

    def __repr__(self) -> str:
        text = f"SimulationResult(runs={self.runs}, seed={self.seed}, replications={self.replications})\n{self.summary}"
        return text + (f"\n{self.intervals}" if self.intervals is not None else "")


def simulate(
    definition,
    runs: int = 1000,
    seed: int = 0,
    policy=None,
    script=None,
    db: str | Path | None = None,
    progress=None,
    batch_runs: int = 1000,
    replications: int = 1,
    workers: int = 1,
) -> SimulationResult:
    """Run ``runs`` executions of ``definition`` (``runs × replications`` with replications)
    and store everything in DuckDB.

    ``policy`` (a :class:`Policy` or its JSON dict) decides reviewers and agents; ``script``
    adds exact actions to every run; ``db`` is a DuckDB file (default: in memory) — new, or
    holding earlier results of this simulator with other seeds (``ValueError`` for tables of
    another shape, or runs of the same seed already there). Identical
    arguments give byte-identical event logs, whatever ``workers`` is. The runs are written in
    one transaction: a simulation that fails or is interrupted leaves none of them behind.

    ``replications=R`` simulates R independent sets of ``runs`` runs (each starting at the
    policy's ``startAt``; ``outcomes.replication`` says which) and gives ``result.intervals``:
    95% t intervals across them (:mod:`toolkit.simulate.intervals`). ``workers=N`` computes
    batches of runs in N processes (with reviewer capacity, whole replications). A progress
    bar shows when ``progress`` is true (by default for 5,000 runs or more); ``progress`` may
    also be a callable ``progress(done, total)``, called after every batch.
    """
    from tqdm.auto import tqdm

    if runs < 1 or replications < 1 or workers < 1 or batch_runs < 1:
        raise ValueError("runs, replications, workers and batch_runs must be at least 1")
    job = Job(
        to_plan(definition),
        Policy.load(policy),
        Script.load(script) if script is not None else None,
        seed,
        runs,
        replications,
        batch_runs,
    )
    job.resolved  # noqa: B018 - resolve in the parent: a bad policy fails here, before any worker starts
    total = runs * replications
    report = progress if callable(progress) else None
    done = 0
    # The loop allocates millions of short-lived objects and no reference cycles; the cyclic
    # collector would otherwise rescan the growing buffers over and over (workers inherit this).
    collecting = gc.isenabled()
    gc.disable()
    try:
        with computing(job, workers) as batches:
            con = connect(db, seed)  # while the workers, if any, compute their first units
            writer = BatchWriter(con)
            bar = tqdm(
                total=total,
                unit="run",
                disable=callable(progress) or not (progress if progress is not None else total >= 5000),
            )
            try:
                with writing(con):
                    for tables in batches(idle=writer.flush):
                        n = writer.write(tables)
                        done += n
                        bar.update(n)
                        if report is not None:
                            report(done, total)
                    writer.flush()
            finally:
                bar.close()
    finally:
        if collecting:
            gc.enable()
    intervals = Intervals.from_outcomes(con, seed) if replications >= 2 else None
    return SimulationResult(con, summarise(con), runs, seed, replications, intervals)


class ScriptedRun:
    """One scripted execution: final ``state``, every ``event``, the ``outcome`` and the
    script actions the engine refused (``errors``: ``(action index, message)``)."""

    def __init__(self, log: RunLog, script: Script):
        self.state = log.state
        self.events = log.events
        self.errors = log.script_errors
        status, reason, path, iterations, cycle, breaches, steps = outcome(log)
        self.outcome = {
            "status": status,
            "failureReason": reason,
            "path": path.split(">") if path else [],
            "iterations": iterations,
            "cycleTimeMs": cycle,
            "breaches": breaches,
            "steps": steps,
        }
        self.script = script

    @property
    def external_events(self):
        return external_view(self.events)

    def steps(self, node_id: str):
        return self.state.steps_of(node_id)

    def mismatches(self) -> list[str]:
        """How the run differs from the script's ``expect`` block (empty when it matches)."""
        expect = self.script.expect
        if expect is None:
            return []
        out = []
        for field, key in (("status", "status"), ("failure_reason", "failureReason"), ("path", "path")):
            wanted = getattr(expect, field)
            if field in expect.model_fields_set and wanted != self.outcome[key]:
                out.append(f"{key}: expected {wanted!r}, got {self.outcome[key]!r}")
        return out


def run_script(definition, script, policy=None, seed: int = 0) -> ScriptedRun:
    """Run one execution with exact actions at exact virtual times.

    Without a policy, agents answer at once through the default runner and nothing else
    happens unless the script says so; with one, the policy drives what the script leaves open.
    """
    plan = to_plan(definition)
    script = Script.load(script)
    resolved = ResolvedPolicy(Policy.load(policy), plan) if policy is not None else None
    horizon = resolved.horizon_ms if resolved else Policy().horizon_ms
    start = resolved.start_ms if resolved else EPOCH_MS
    log = run_execution(
        plan,
        execution_id=f"script-{seed}",
        start_ms=start,
        rng=run_rng(seed, 0),
        behaviour=resolved,
        script=script,
        trigger_context=script.input,
        horizon_ms=horizon,
    )
    return ScriptedRun(log, script)


# Imported last: both use simulate() above.
from toolkit.simulate.calibrate import Calibration, calibrate  # noqa: E402
from toolkit.simulate.whatif import WhatIf, whatif  # noqa: E402
