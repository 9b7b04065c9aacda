"""The fault harness: a real `collab serve` on a fresh DuckDB file, a mixed load from several
workers across every endpoint family, SIGKILL at random moments, a restart on the same file,
and checks after each restart.

On PostgreSQL (``Config(backend="postgres", processes=2)``) several server processes share one
database and the load goes through all of them, each request to the next process in turn. A
kill takes one of them at a random moment while the load runs; a request whose connection is
refused goes to another process (as a load balancer would send it), one that was in flight on
the killed process leaves its worker unsure, and that worker waits for the next checks. The
others carry on through the survivors for a while (they must keep serving), then the load
pauses, the checks run (the offline ones on one snapshot of the database), the killed process
starts again and the load resumes.

Timeline of one run (``Harness(Config(...)).run()`` returns the :class:`~faults.ledger.Report`)::

    create a workspace, start the server, start the workers
    repeat while the time budget allows:
        load for a random while (seeded); just before the end, dispatch an execution whose
        SLA falls due while the server will be down
        SIGKILL the server — requests in flight stay unanswered: their writes are "unknown"
        wait for every worker to stop; run the offline checks on the database file
        restart the server on the same file; run the online checks; resume the load
    pause the load, run the online checks once more, stop the server, run the offline ones

The workers pick operations from faults.registry (weighted, from their own seeded random
generators) and record what every acknowledged write promised in the shared ledger; the
checks compare the server with it. Kill times are seeded too, though where in a request a
kill lands depends on the machine.
"""

from __future__ import annotations

import importlib
import random
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb
import psycopg
from api.receiver import Receiver
from api.support import Server, create_workspace
from postgres import PostgresCluster

from faults import hostile
from faults.context import Ctx, ServerGone
from faults.ledger import Ledger, Report
from faults.registry import CHECKS, FAMILIES, OPERATIONS
from faults.workflow_load import create_definition_of, dispatch_record
from toolkit.store.postgres.sql import pyformat

for _family in FAMILIES:
    importlib.import_module(_family)


@dataclass
class Config:
    root: Path  # the database and the server logs go here
    seconds: float = 60.0  # the load, kills, restarts and checks (not the first start)
    workers: int = 4
    seed: int = 0
    load_s: tuple[float, float] = (4.0, 9.0)  # how long the load runs between two kills
    max_kills: int | None = None
    crossing_sla_ms: int = 2500  # dispatched this long before a kill minus 1 s: due while down
    progress: Callable[[str], None] | None = None
    server_args: tuple[str, ...] = ()  # more `collab serve` options (webhook settings, say)
    # Called with the Run while the server is down, after the offline checks: a test damages
    # the database file here to see the checks notice.
    while_down: Callable[[Run], None] | None = None
    # "kill": SIGKILL (a crash); "term": SIGTERM, a graceful stop that must exit 0 within
    # term_timeout_s (`collab serve --shutdown-timeout`).
    stop: str = "kill"
    term_timeout_s: float = 20.0
    # One more worker, in its own workspace, sending the worst inputs it is allowed in every
    # other window of a few seconds (faults.hostile); the server then runs with the limits it meets.
    hostile: bool = False
    poison_urls: bool = True  # the hostile worker dispatches with unparseable webhook URLs
    maximal_predicates: bool = True  # … and the largest regex predicates the linter admits
    # "duckdb": one process on a file; "postgres": ``processes`` processes on one database of
    # ``cluster`` (started, and stopped at the end, by the harness when None).
    backend: str = "duckdb"
    processes: int = 1
    cluster: PostgresCluster | None = None
    survivors_s: tuple[float, float] = (1.0, 3.0)  # how long the others serve alone after a kill


class Run:
    """What the workers and the checks share."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.db: Path | str = Path(config.root) / "faults.duckdb"  # or a PostgreSQL URL (Harness.run)
        self.report = Report()
        self.ledger = Ledger(self.report)
        self.owners: list = list(range(config.workers)) + ["h"]
        self.creds: dict = {}
        self.server: Server | None = None
        self.con: duckdb.DuckDBPyConnection | psycopg.Connection | None = None  # during the offline checks only
        # An HTTPS receiver for the executions dispatched with a webhook (faults.webhooks).
        self.receiver: Receiver | None = None
        self.webhook_records: list = []
        self.hostile_creds: dict | None = None

    @property
    def hostile_active(self) -> bool:
        """The hostile worker's turn: every other window of hostile.WINDOW_S seconds, so that
        the normal workers' latency is sampled with and without it all through the run."""
        return self.config.hostile and int(time.monotonic() / hostile.WINDOW_S) % 2 == 1

    @property
    def dialect(self) -> str:
        return self.config.backend

    def sql(self, query: str, params: list | None = None) -> list[tuple]:
        """Rows of a query (DuckDB's placeholders) on the database (offline checks only)."""
        if isinstance(self.con, psycopg.Connection):
            return self.con.execute(pyformat(query) if params else query, params or None).fetchall()
        return self.con.execute(query, params or []).fetchall()


class Harness:
    def __init__(self, config: Config) -> None:
        self.config = config
        self.run_state = Run(config)
        self.report = self.run_state.report
        self.rng = random.Random(config.seed)
        self.up = threading.Event()
        self.stopping = False
        self.parked = 0
        self.cond = threading.Condition()
        self.restarts = 0
        self.me: Ctx | None = None  # the harness's own requests: its SLA dispatches and the checks
        self.kill_times: list[float] = []  # monotonic
        self.generation = 0  # how many times the load resumed after checks
        self.started_cluster: PostgresCluster | None = None
        self.sla_definition: str | None = None

    # ------------------------------------------------------------------ the run

    def run(self) -> Report:
        run, config = self.run_state, self.config
        Path(config.root).mkdir(parents=True, exist_ok=True)
        if config.backend == "postgres":
            cluster = config.cluster
            if cluster is None:
                cluster = self.started_cluster = PostgresCluster.start()
            run.db = cluster.create_database(f"faults_{config.seed}_{random.randrange(10**9)}")
        run.receiver = Receiver(Path(config.root)).start()
        run.creds = create_workspace(run.db)
        if config.hostile:
            run.hostile_creds = create_workspace(run.db)
        run.server = self._start()
        self.me = Ctx(run, "h", random.Random(f"{config.seed}/checks"))
        sla_definition = self.sla_definition = create_definition_of(self.me, "sla", config.crossing_sla_ms)
        workers = [
            threading.Thread(target=self._work, args=(i,), name=f"fault-worker-{i}", daemon=True)
            for i in range(config.workers)
        ]
        if config.hostile:
            workers.append(threading.Thread(target=self._work, args=("x",), name="fault-worker-hostile", daemon=True))
        self.up.set()
        for worker in workers:
            worker.start()
        started = time.monotonic()
        cycle = 12.0  # a first guess at how long a kill, restart and checks take; measured after each kill
        try:
            while config.max_kills is None or self.report.kills < config.max_kills:
                load = self.rng.uniform(*config.load_s)
                if time.monotonic() - started + load + cycle > config.seconds:
                    break
                began = time.monotonic()
                self._load(load, sla_definition)
                self._kill_and_restart()
                cycle = time.monotonic() - began - load
            self._pause()
            self._checks("online")
        finally:
            self.stopping = True
            self.up.set()
            for worker in workers:
                worker.join(timeout=120)
            self.me.close()
            if run.server is not None:
                run.server.stop()
            run.receiver.stop()
        try:
            self._offline()
        finally:
            if self.started_cluster is not None:
                self.started_cluster.stop()
        if config.hostile:
            hostile.judge(self.report)
        self._say(f"done after {time.monotonic() - started:.0f} s\n{self.report.summary()}")
        return self.report

    def _start(self) -> Server:
        self.restarts += 1
        log = Path(self.config.root) / f"server-{self.restarts}.log"
        hooks = (
            "--webhook-allow-loopback",
            "--webhook-ca-bundle",
            str(self.run_state.receiver.ca_path),
            "--webhook-retry-delays",
            "200,400,800,1600,3200",
            "--shutdown-timeout",
            f"{self.config.term_timeout_s:g}",
            "--webhook-allow-port",
            str(self.run_state.receiver.port),
        )
        limits = hostile.SERVER_ARGS if self.config.hostile else ()
        args = hooks + limits + self.config.server_args
        return Server(self.run_state.db, log, extra_args=args, processes=self.config.processes).start()

    def _say(self, message: str) -> None:
        if self.config.progress is not None:
            self.config.progress(message)

    def _load(self, seconds: float, sla_definition: str | None) -> None:
        """Let the workers run; shortly before the end, dispatch an execution whose SLA falls
        due about a second after the kill."""
        sla_at = time.monotonic() + max(0.0, seconds - (self.config.crossing_sla_ms - 1000) / 1000)
        end = time.monotonic() + seconds
        acked = self.report.acknowledged
        while time.monotonic() < end:
            if sla_definition and time.monotonic() >= sla_at:
                try:
                    dispatch_record(self.me, sla_definition, crossing=True)
                except ServerGone as exc:
                    self.report.problem(f"the harness's SLA dispatch failed while the server was up: {exc}")
                sla_at = float("inf")
            exited = [p.returncode for p in self.run_state.server.procs if p.poll() is not None]
            if exited:
                self.report.problem(
                    f"a server process exited by itself (code {exited[0]}); log: {self.run_state.server.log()[-2000:]}"
                )
                return
            time.sleep(0.05)
        if self.report.acknowledged == acked:
            self.report.problem(f"no write was acknowledged in {seconds:.1f} s of load")

    def _kill_and_restart(self) -> None:
        if self.config.processes > 1:
            self._kill_one_and_restart()
            return
        run = self.run_state
        self.up.clear()
        if self.config.stop == "term":  # requests in flight are answered, then the server drains and exits 0
            code = run.server.terminate(timeout=self.config.term_timeout_s + 10)
            if code != 0:
                self.report.problem(
                    f"SIGTERM: the server exited with {code}, not 0 within "
                    f"{self.config.term_timeout_s:g} s; log: {run.server.log()[-2000:]}"
                )
        else:
            run.server.kill9()  # whatever is in flight now never gets its answer
        killed = time.monotonic()
        self._wait_parked()
        self._offline()
        if self.config.while_down is not None:
            self.config.while_down(run)
        audited = time.monotonic()
        run.server = self._start()
        restarted = time.monotonic()
        self._checks("online")
        self.report.kills += 1
        self._say(
            f"kill {self.report.kills}: {self.report.sent} requests, {self.report.acknowledged} acknowledged, "
            f"{self.report.unknown} in flight at kills; offline checks {audited - killed:.1f} s, "
            f"restart {restarted - audited:.1f} s, online checks {time.monotonic() - restarted:.1f} s; "
            f"lost {len(self.report.lost)}, "
            f"duplicated {len(self.report.duplicated)}, problems {len(self.report.problems)}"
        )
        self._resume()

    def _kill_one_and_restart(self) -> None:
        """Kill one process under load; the others serve alone for a while; then pause, check,
        start the killed one again and resume."""
        run = self.run_state
        victim = self.rng.randrange(self.config.processes)
        self.kill_times.append(time.monotonic())
        run.server.kill9_one(victim)
        killed = time.monotonic()
        time.sleep(self.rng.uniform(*self.config.survivors_s))
        # (the workers whose request was in flight on the killed process are waiting: the
        # harness itself makes sure the others still take writes)
        try:
            taken = dispatch_record(self.me, self.sla_definition).dispatch_known if self.sla_definition else True
        except ServerGone as exc:
            taken = False
            self.report.problem(f"after process {victim} was killed, a dispatch failed: {exc}")
        if not taken:
            self.report.problem(
                f"no dispatch was acknowledged {time.monotonic() - killed:.0f} s after process {victim} was killed "
                f"({self.parked} of {self._workers} workers waiting for the checks): the others stopped serving"
            )
        self._pause()
        self._offline()
        if self.config.while_down is not None:
            self.config.while_down(run)
        audited = time.monotonic()
        run.server.restart_one(victim)
        restarted = time.monotonic()
        self._checks("online")
        self.report.kills += 1
        self._say(
            f"kill {self.report.kills} (process {victim} of {self.config.processes}): {self.report.sent} requests, "
            f"{self.report.acknowledged} acknowledged, {self.report.unknown} in flight at kills; others alone and "
            f"offline checks {audited - killed:.1f} s, restart {restarted - audited:.1f} s, online checks "
            f"{time.monotonic() - restarted:.1f} s; lost {len(self.report.lost)}, "
            f"duplicated {len(self.report.duplicated)}, problems {len(self.report.problems)}"
        )
        self._resume()

    def _offline(self) -> None:
        run = self.run_state
        if run.dialect == "postgres":
            self._offline_postgres()
            return
        try:
            run.con = duckdb.connect(str(run.db), read_only=True)
        except duckdb.Error as exc:
            self.report.problem(f"the database file does not open after the kill: {exc}")
            return
        try:
            self._checks("offline")
        finally:
            run.con.close()
            run.con = None

    def _offline_postgres(self) -> None:
        """The offline checks on one snapshot of the database (other processes may still be
        firing timers and delivering)."""
        run = self.run_state
        try:
            run.con = psycopg.connect(str(run.db), connect_timeout=10)
        except psycopg.Error as exc:
            self.report.problem(f"the database does not answer after the kill: {exc}")
            return
        try:
            run.con.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
            run.con.read_only = True
            self._checks("offline")
        finally:
            run.con.close()
            run.con = None

    def _checks(self, phase: str) -> None:
        for check in CHECKS:
            if check.phase != phase:
                continue
            try:
                check.fn(self.me)
            except ServerGone as exc:
                self.report.problem(f"check {check.name}: the server stopped answering: {exc}")
            except Exception:  # noqa: BLE001 - a check that breaks is a finding, and the others still run
                self.report.problem(f"check {check.name} failed: {traceback.format_exc()}")

    # ------------------------------------------------------------------ the workers

    def _work(self, owner: int | str) -> None:
        """A load worker's loop; owner "x" is the hostile worker (faults.hostile)."""
        run = self.run_state
        is_hostile = owner == "x"
        ctx = Ctx(run, owner, random.Random(f"{self.config.seed}/{owner}"), run.hostile_creds if is_hostile else None)
        operations = hostile.OPERATIONS if is_hostile else OPERATIONS
        weights = [op.weight for op in operations]
        try:
            while not self.stopping:
                if not self.up.is_set():
                    self._park()
                    continue
                if is_hostile and not run.hostile_active:
                    time.sleep(0.05)
                    continue
                op = ctx.rng.choices(operations, weights)[0]
                began = time.monotonic()
                try:
                    op.fn(ctx)
                except ServerGone as exc:
                    if self.config.processes > 1 and any(t >= began - 1.0 for t in self.kill_times):
                        # one process was killed with this request in flight: what it did is
                        # known after the next checks; until then this worker waits
                        self._park(until=self.generation + 1)
                    elif self.up.is_set():
                        self.report.problem(f"worker {owner}, {op.name}: {exc} while the server was up")
                        time.sleep(0.5)
                except Exception:  # noqa: BLE001 - an answer of the wrong shape: report it, carry on
                    self.report.problem(f"worker {owner}, {op.name}: {traceback.format_exc()}")
        finally:
            ctx.close()

    def _park(self, until: int = 0) -> None:
        """Wait while the load is paused (and until it resumed ``until`` times in all)."""
        with self.cond:
            self.parked += 1
            self.cond.notify_all()
        while not self.stopping and not (self.up.wait(0.1) and self.generation >= until):
            time.sleep(0.05)
        with self.cond:
            self.parked -= 1
            self.cond.notify_all()

    def _wait_parked(self) -> None:
        with self.cond:
            if not self.cond.wait_for(lambda: self.parked == self._workers, timeout=120):
                self.report.problem("workers did not stop within 120 s of the kill")

    @property
    def _workers(self) -> int:
        return self.config.workers + (1 if self.config.hostile else 0)

    def _pause(self) -> None:
        self.up.clear()
        self._wait_parked()

    def _resume(self) -> None:
        self.generation += 1
        self.up.set()
        with self.cond:
            self.cond.wait_for(lambda: self.parked == 0, timeout=30)
