"""A simulation split into batches of runs, computed in this process or in worker processes.

Run *k* (0 ≤ k < runs × replications) belongs to replication ``k // runs``, is dispatched at
``startAt + (k % runs) × arrivalIntervalMs`` (every replication starts at ``startAt``), draws
from its own generator ``random.Random("<seed>:<k>")`` and is execution ``sim-<seed>-<k>``.
So a run is a pure function of (definition, policy, script, seed, k), whichever process
computes it. The batches are fixed by ``runs``, ``replications`` and ``batch_runs`` only, and
are written in order, so 1 or N workers give the same database, row for row.

Independent runs are batched ``batch_runs`` at a time. With reviewer capacity the runs of a
replication share their reviewers and are simulated together (:func:`toolkit.simulate.queues.
run_coupled`): the unit of work is then a replication, still written ``batch_runs`` runs at a
time.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import random
import sys
import tempfile
from collections.abc import Callable, Iterator

import pyarrow as pa

from toolkit.engine import Plan
from toolkit.simulate.behaviour import ResolvedPolicy
from toolkit.simulate.driver import run_execution
from toolkit.simulate.policy import Policy
from toolkit.simulate.queues import run_coupled
from toolkit.simulate.records import TableBuilder
from toolkit.simulate.results import BATCH_SCHEMAS


def run_rng(seed: int, run: int) -> random.Random:
    """Each run draws from its own generator, so run k is the same whatever runs precede it."""
    return random.Random(f"{seed}:{run}")


class Job:
    """Everything a worker needs to compute any batch: picklable (the definition, policy and
    script models); the plan and resolved policy are rebuilt once per process."""

    def __init__(
        self, plan: Plan, policy: Policy, script, seed: int, runs: int, replications: int, batch_runs: int
    ) -> None:
        self.definition, self.version = plan.definition, plan.version
        self.policy, self.script = policy, script
        self.seed, self.runs, self.replications, self.batch_runs = seed, runs, replications, batch_runs
        self._plan: Plan | None = plan
        self._resolved: ResolvedPolicy | None = None

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_plan"] = state["_resolved"] = None  # samplers are closures: rebuilt in the worker
        return state

    @property
    def plan(self) -> Plan:
        if self._plan is None:
            self._plan = Plan.from_definition(self.definition, self.version)
        return self._plan

    @property
    def resolved(self) -> ResolvedPolicy:
        if self._resolved is None:
            self._resolved = ResolvedPolicy(self.policy, self.plan)
        return self._resolved

    @property
    def coupled(self) -> bool:
        """Reviewer capacity couples the runs of a replication."""
        return bool(self.resolved.capacity)

    def units(self) -> list[tuple[int, int]]:
        """The units of work, ``(first run, end run)``, in the order they are written."""
        total = self.runs * self.replications
        if self.coupled:
            return [(r * self.runs, (r + 1) * self.runs) for r in range(self.replications)]
        return [(a, min(a + self.batch_runs, total)) for a in range(0, total, self.batch_runs)]

    def start_of(self, k: int) -> int:
        return self.resolved.start_ms + (k % self.runs) * self.resolved.arrival_interval_ms

    def execution_id(self, k: int) -> str:
        return f"sim-{self.seed}-{k}"

    def rng(self, k: int) -> random.Random:
        return run_rng(self.seed, k)

    def batches(self, unit: tuple[int, int]) -> Iterator[dict[str, pa.Table]]:
        """The Arrow tables of one unit, ``batch_runs`` runs at a time."""
        first, end = unit
        plan, resolved, script = self.plan, self.resolved, self.script
        trigger_context = script.input if script is not None else None
        if self.coupled:
            logs = run_coupled(
                plan,
                runs=range(first, end),
                start_of=self.start_of,
                execution_id_of=self.execution_id,
                rng_of=self.rng,
                behaviour=resolved,
                script=script,
                trigger_context=trigger_context,
                horizon_ms=resolved.horizon_ms,
            )
        else:
            logs = (
                (
                    k,
                    run_execution(
                        plan,
                        execution_id=self.execution_id(k),
                        start_ms=self.start_of(k),
                        rng=self.rng(k),
                        behaviour=resolved,
                        script=script,
                        trigger_context=trigger_context,
                        horizon_ms=resolved.horizon_ms,
                    ),
                )
                for k in range(first, end)
            )
        builder = TableBuilder()
        for k, log in logs:
            builder.add(k, k // self.runs, log)
            if builder.count >= self.batch_runs:
                yield builder.tables()
        if builder.count:
            yield builder.tables()


# fork starts workers in milliseconds with the modules already imported; elsewhere (macOS,
# Windows) spawn re-imports them and gets the job by pickle, once per worker.
START_METHOD = "fork" if sys.platform.startswith("linux") else "spawn"

_JOB: Job  # this worker process's job and spool folder, set by _init_worker as the pool starts it
_SPOOL: str


def _init_worker(job: Job, spool: str) -> None:
    global _JOB, _SPOOL
    _JOB, _SPOOL = job, spool


def _compute(unit: tuple[int, int]) -> list[str]:
    """Compute one unit in a worker and write each batch's tables as Arrow IPC files to the
    spool folder; returns the batches' file stems. A file costs the worker a copy of the
    buffers and the parent one read, where a pickle through the pool's pipe cost both sides
    several (and the worker a pickling pass)."""
    stems = []
    for i, tables in enumerate(_JOB.batches(unit)):
        stem = os.path.join(_SPOOL, f"{unit[0]}-{i}")
        for name, table in tables.items():
            with pa.OSFile(f"{stem}.{name}.arrow", "wb") as sink, pa.ipc.new_file(sink, table.schema) as out:
                out.write_table(table)
        stems.append(stem)
    return stems


def _read(stem: str) -> dict[str, pa.Table]:
    """A batch a worker wrote, and the files deleted. Where a deleted file stays readable
    while mapped (POSIX), the tables are the mapped files themselves: reading them into fresh
    memory cost the parent, which writes every batch, a third of its CPU (mostly page faults)."""
    tables = {}
    for name in BATCH_SCHEMAS:
        path = f"{stem}.{name}.arrow"
        with pa.memory_map(path) if os.name == "posix" else pa.OSFile(path) as source:
            tables[name] = pa.ipc.open_file(source).read_all()
        os.unlink(path)
    return tables


@contextlib.contextmanager
def computing(job: Job, workers: int = 1) -> Iterator[Callable[..., Iterator[dict[str, pa.Table]]]]:
    """The job's batches, computed here (``workers=1``) or by ``workers`` processes, which
    start on their first units as the block is entered (while the caller opens its database,
    say). Gives ``batches(idle=...)``: every batch, in unit order, each unit computed in
    whichever process is free.

    With workers, ``idle()`` is called when one of the last ``workers`` units is not ready yet:
    the writer inserts what it holds then, while the workers finish, rather than after the
    last unit, when they have stopped (up to 10,000 runs, half the whole at 20,000). Earlier,
    the waits are left alone: smaller inserts cost the writer more CPU, which it takes from
    the workers."""
    units = job.units()
    workers = min(workers, len(units))
    if workers <= 1:

        def here(idle: Callable[[], object] = lambda: None) -> Iterator[dict[str, pa.Table]]:
            for unit in units:
                yield from job.batches(unit)

        yield here
        return
    with (
        tempfile.TemporaryDirectory(prefix="collab-simulate-") as spool,
        multiprocessing.get_context(START_METHOD).Pool(workers, _init_worker, (job, spool)) as pool,
    ):
        results = pool.imap(_compute, units)

        def in_order(idle: Callable[[], object] = lambda: None) -> Iterator[dict[str, pa.Table]]:
            for i in range(len(units)):
                try:
                    stems = results.next(timeout=0 if i >= len(units) - workers else None)  # 0: raise if not ready
                except multiprocessing.TimeoutError:
                    idle()
                    stems = results.next()
                for stem in stems:
                    yield _read(stem)
            # Every unit is in: the workers may exit while the caller writes the last batches
            # (leaving it to the pool's exit took the writer 9 ms after its commit, for 0.4).
            pool.close()

        yield in_order
