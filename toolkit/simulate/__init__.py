"""Simulate a definition thousands of times, deterministically, on a virtual clock.

>>> from toolkit import examples
>>> from toolkit.simulate import simulate
>>> result = simulate(examples.load("parallel-review"), runs=200, seed=7,
...                   policy={"reviewers": {"*": {"approve": 0.8}}})
>>> result.summary.runs, sorted(result.summary.outcomes)
(200, ['completed', 'failed'])

A scripted run (exact inputs at exact virtual times) is how an author unit-tests a
definition; see :mod:`toolkit.simulate.script` for the format and :mod:`.policy` for policies.
"""

from __future__ import annotations

import gc
import json
import random
from pathlib import Path

from toolkit.engine import Plan, external_view
from toolkit.model import Definition
from toolkit.simulate.behaviour import ResolvedPolicy
from toolkit.simulate.driver import RunLog, run_execution
from toolkit.simulate.policy import Policy
from toolkit.simulate.records import outcome, write_run
from toolkit.simulate.results import BatchWriter, Summary, connect, summarise
from toolkit.simulate.script import Script

__all__ = ["Policy", "Script", "Summary", "SimulationResult", "ScriptedRun", "simulate", "run_script", "to_plan"]

# Virtual time starts at 2026-01-01T00:00:00Z, so timestamps read as real dates.
EPOCH_MS = 1_767_225_600_000


def to_plan(definition) -> Plan:
    """A Plan from a raw create body, a :class:`Definition` or a Plan."""
    if isinstance(definition, Plan):
        return definition
    if not isinstance(definition, Definition):
        definition = Definition.model_validate(definition)
    return Plan.from_definition(definition)


def run_rng(seed: int, run: int) -> random.Random:
    """Each run draws from its own generator, so run k is the same whatever runs precede it."""
    return random.Random(f"{seed}:{run}")


class SimulationResult:
    """Results of :func:`simulate`: DuckDB tables ``executions``, ``steps``, ``events``,
    ``outcomes`` on ``con``, and the :class:`Summary`."""

    def __init__(self, con, summary: Summary, runs: int, seed: int):
        self.con = con
        self.summary = summary
        self.runs = runs
        self.seed = seed

    def sql(self, query: str, params=None):
        """Run SQL over the result tables; returns a DuckDB relation (``.df()``, ``.fetchall()``)."""
        return self.con.sql(query, params=params)

    def outcomes(self):
        return self.con.sql("SELECT * FROM outcomes ORDER BY run")

    def events(self, run: int, external_only: bool = False) -> list[dict]:
        """One run's event log as dicts (``data`` decoded), in ``seq`` order."""
        rows = self.con.execute(
            "SELECT seq, event_id, type, step_id, timestamp, correlation_id, data FROM events "
            "WHERE run = ? AND (external OR NOT ?) ORDER BY seq", [run, external_only]).fetchall()
        return [{"eventId": eid, "seq": seq, "type": t, "stepId": sid, "timestamp": ts, "correlationId": cid,
                 "data": json.loads(data)} for seq, eid, t, sid, ts, cid, data in rows]

    def __repr__(self) -> str:
        return f"SimulationResult(runs={self.runs}, seed={self.seed})\n{self.summary}"


def simulate(definition, runs: int = 1000, seed: int = 0, policy=None, script=None,
             db: str | Path | None = None, progress=None, batch_runs: int = 2000) -> SimulationResult:
    """Run ``runs`` executions of ``definition`` and store everything in DuckDB.

    ``policy`` (a :class:`Policy` or its JSON dict) decides reviewers and agents; ``script``
    adds exact actions to every run; ``db`` is a DuckDB file (default: in memory) — new, or
    holding earlier results of this simulator with other seeds (``ValueError`` for tables of
    another shape, or runs of the same seed already there). Identical
    arguments give byte-identical event logs. A progress bar shows when ``progress`` is true
    (by default for 5,000 runs or more); ``progress`` may also be a callable
    ``progress(done, total)``, called after every batch (a widget's progress bar, say).
    """
    from tqdm.auto import tqdm

    plan = to_plan(definition)
    resolved = ResolvedPolicy(Policy.load(policy), plan)
    script = Script.load(script) if script is not None else None
    con = connect(db, seed)
    writer = BatchWriter(con)
    if callable(progress):
        report, bar = progress, tqdm(total=runs, disable=True)
    else:
        report = None
        bar = tqdm(total=runs, unit="run", disable=not (progress if progress is not None else runs >= 5000))
    done = 0
    trigger_context = script.input if script is not None else None
    # The loop allocates millions of short-lived tuples and no reference cycles; the cyclic
    # collector would otherwise rescan the growing row buffers over and over.
    collecting = gc.isenabled()
    gc.disable()
    try:
        for run in range(runs):
            log = run_execution(plan, execution_id=f"sim-{seed}-{run}",
                                start_ms=EPOCH_MS + run * resolved.arrival_interval_ms, rng=run_rng(seed, run),
                                behaviour=resolved, script=script, trigger_context=trigger_context,
                                horizon_ms=resolved.horizon_ms)
            write_run(writer, run, log)
            if writer.pending() >= batch_runs:
                done += writer.pending()
                writer.flush()
                bar.update(batch_runs)
                if report is not None:
                    report(done, runs)
        bar.update(writer.pending())
        writer.flush()
        if report is not None:
            report(runs, runs)
    finally:
        if collecting:
            gc.enable()
        bar.close()
    return SimulationResult(con, summarise(con), runs, seed)


class ScriptedRun:
    """One scripted execution: final ``state``, every ``event``, the ``outcome`` and the
    script actions the engine refused (``errors``: ``(action index, message)``)."""

    def __init__(self, log: RunLog, script: Script):
        self.state = log.state
        self.events = log.events
        self.errors = log.script_errors
        status, reason, path, iterations, cycle, breaches, steps = outcome(log)
        self.outcome = {"status": status, "failureReason": reason, "path": path.split(">") if path else [],
                        "iterations": iterations, "cycleTimeMs": cycle, "breaches": breaches, "steps": steps}
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
    log = run_execution(plan, execution_id=f"script-{seed}", start_ms=EPOCH_MS, rng=run_rng(seed, 0),
                        behaviour=resolved, script=script, trigger_context=script.input, horizon_ms=horizon)
    return ScriptedRun(log, script)
