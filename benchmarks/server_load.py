"""Benchmark: closed-loop HTTP load on the workflow server, on DuckDB and on PostgreSQL with one
and with two server processes, against a bare Starlette baseline, all in one run.

Workload: N concurrent clients (default 16) on loopback, each looping full approval flows on
the ``parallel-review`` example — dispatch, get execution, ``alice@legal`` approves,
``bob@brand`` approves, getEvents (5 requests; the flow is checked to end with
``execution.completed``) — for ``--seconds`` (default 10) after ``--warmup`` (default 1 s).
The servers are ``collab serve`` itself, started as subprocesses (one uvicorn worker each,
default settings), each configuration on a fresh database with a workspace made by
``collab workspace create``:

- ``duckdb``: one process on a temporary DuckDB file;
- ``postgres``: one process on a PostgreSQL database;
- ``postgres2``: two processes on one PostgreSQL database; each client sends each request to
  the next process in turn (as a load balancer taking requests in turn would), so a flow's
  five requests are served by both;
- ``bare``: the same closed loop — same clients, same request bodies, five POSTs per "flow" —
  against a bare Starlette app with one POST JSON endpoint that parses the body and answers
  ``{"result": {...}}``, served by ``uvicorn.run`` with the same settings.

PostgreSQL is a durable cluster (fsync on, as DuckDB flushes its WAL on commit) the benchmark
starts in a temporary directory (benchmarks/pg_bench.py), or the server ``--pg-url`` names.
Every server runs from the start and first gets 3 s of unmeasured load; then the
configurations are measured one after another in ``--rounds`` rounds (default 2), so that the
machine's other load falls on all alike.

Printed per configuration: requests/s, flows/s and p50/p99 latency overall and per endpoint;
the CPU used in the measured windows by the server processes, by PostgreSQL's processes (all
of the cluster's, from /proc, ended connections included), by the load generator and by every
other process on the machine (a run is flagged when others kept more than a quarter core busy:
throughput and latency then drop, CPU per request much less); and how often the server's
threads were switched off a core (context switches a request) and how long its threads, ready
to run, waited for one (in cores, over the window): the cost of handing work between threads,
which CPU time does not show. Then the comparisons issue 14
asks for: PostgreSQL with one process ÷ DuckDB (goal >= 1), each backend ÷ bare Starlette
(goal >= 0.5; each ratio also round by round, where both rates come from the same minute),
p99 at 16 clients (goal < 50 ms), server and database CPU per request, and what those project:
requests/s per added server core, and the rate at which a PostgreSQL of a given number of
cores becomes the bound. Exit status 1 only if a request failed or a flow did not complete.

``--only observability`` measures instead what metrics and request logs cost: the same load
on two `collab serve` processes on DuckDB, one as above (no metrics; ``--log-level warning``,
so no request log lines) and one with ``--metrics --log-level info --log-format json`` (a JSON
line per request, to a file, and /metrics scraped every 2 s), measured in alternating rounds.
Printed: the throughput ratio on/off (goal >= 0.95: under 5 % of throughput) and server CPU
per request; then the steadier in-process measure of benchmarks/observability_cost.py (server
CPU per request, off and on, in alternating batches: ``--batches``, ``--flows``).

The load generator runs in this process and shares the machine's cores with the servers and
PostgreSQL (on a 2-core box it takes most of one); each server is a single process whose
Python work is bound by one GIL. ``--pin`` runs each server process on one core, as README
"Scale out" recommends (``taskset -c``: a configuration's first process on the last core, its
second on the one before; PostgreSQL and the load generator stay free to use any core).
Clients are threads with one ``httpx.Client`` per server process each (``--mode threads``,
the default: it loads the server harder than ``--mode asyncio`` with ``httpx.AsyncClient``,
whose per-request overhead in the client is higher). In one process the clients share one GIL,
and that, not the server, bounds bare Starlette's rate (its server uses under a quarter of a
core); ``--generators N`` splits them over N forked processes (their CPU counted together as
the load generator's), which lets bare Starlette run about twice as fast and leaves the
workflow servers' rates as they were.

    .venv/bin/python benchmarks/server_load.py [--clients 16] [--seconds 10] [--rounds 2] [--pg-url URL]
    .venv/bin/python benchmarks/server_load.py --pin --rounds 3 --seconds 8   # each server on one core
    .venv/bin/python benchmarks/server_load.py --generators 2   # the clients in two processes
    .venv/bin/python benchmarks/server_load.py --only duckdb,bare --seconds 3 --rounds 1
    .venv/bin/python benchmarks/server_load.py --only postgres --profile /tmp/server.svg   # py-spy flame graph
    .venv/bin/python benchmarks/server_load.py --only observability --seconds 5 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import multiprocessing
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx  # noqa: E402
from pg_bench import Postgres  # noqa: E402

from toolkit import examples  # noqa: E402

W = "/v2/workflow"
DEFINITION = "parallel-review"
REVIEWERS = {"legal-review": "alice@legal", "brand-review": "bob@brand"}
ENDPOINTS = ("dispatch", "get", "decide.legal", "decide.brand", "getEvents")
BARE_PATH = "/bare"
GOALS = {"bare": 0.5, "postgres": 1.0, "p99_ms": 50.0, "observability": 0.95}
CONFIGS = {
    "duckdb": "DuckDB, 1 process",
    "postgres": "PostgreSQL, 1 process",
    "postgres2": "PostgreSQL, 2 processes",
    "bare": "bare Starlette",
}
OBSERVED = ("--metrics", "--log-level", "info", "--log-format", "json")  # what --only observability switches on
SCRAPE_EVERY_S = 2.0
SETTLE_S = 3.0  # unmeasured load on each server once, after it starts
NOISY = 0.25  # cores used by other processes, or taken by a hypervisor, above which the run is flagged
CLI = "import sys; from toolkit.cli import main; sys.exit(main())"


# ---------------------------------------------------------------------------- the baseline app


def bare_app():
    """One POST JSON endpoint: parse the body, answer {"result": {...}} (the envelope's
    work without auth, validation, services or storage)."""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import Route

    async def bare(request: Request):
        body = json.loads(await request.body())
        data = body["data"]
        payload = {"result": {"ok": True, "keys": sorted(data), "echo": data}}
        return Response(json.dumps(payload, separators=(",", ":")).encode(), media_type="application/json")

    return Starlette(routes=[Route(BARE_PATH, bare, methods=["POST"])])


def serve_bare(host: str, port: int, log_level: str) -> None:
    import uvicorn

    uvicorn.run(bare_app(), host=host, port=port, log_level=log_level)  # the same call as `collab serve`


# ---------------------------------------------------------------------------- servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (Linux /proc), 0.0 where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


SWITCH_FIELDS = ("voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:")


def thread_switches(pid: int) -> tuple[int, float]:
    """``(switches, waited)`` summed over a process's threads (Linux /proc): how many times
    they were switched off a core (voluntary and not), and the seconds they spent ready to run
    but waiting for a core (schedstat's second field); ``(0, 0.0)`` where unavailable. Threads
    that ended are not counted; a server's threads live as long as it does."""
    switches, waited = 0, 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0, 0.0
    for task in tasks:
        try:
            status = Path(f"/proc/{pid}/task/{task}/status").read_text()
            waited += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue
        switches += sum(int(line.split()[1]) for line in status.splitlines() if line.startswith(SWITCH_FIELDS))
    return switches, waited / 1e9


def machine_seconds() -> tuple[float, float]:
    """``(busy, stolen)`` CPU seconds over every core (/proc/stat), (0.0, 0.0) where unavailable:
    busy is what the machine's processes and kernel ran (user, nice, system, irq, softirq);
    stolen is the time a virtual machine's hypervisor gave its cores to others while they had
    work to run (steal), time in which nothing here ran."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        tick = os.sysconf("SC_CLK_TCK")
        busy = fields[0] + fields[1] + fields[2] + fields[5] + fields[6]
        return busy / tick, (fields[7] if len(fields) > 7 else 0) / tick
    except (OSError, IndexError, ValueError):
        return 0.0, 0.0


@dataclass
class Server:
    name: str
    argv: list[str]
    url: str
    headers: dict = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    log: object = None

    def start(self, probe_path: str, probe_body: dict) -> Server:
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=self.url, headers=self.headers, timeout=2) as http:
            while True:
                if self.proc.poll() is not None:
                    raise SystemExit(f"{self.name} server exited with {self.proc.returncode}:\n{self.output()}")
                try:
                    if http.post(probe_path, json={"data": probe_body}).status_code == 200:
                        return self
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise SystemExit(f"{self.name} server did not answer within 60 s:\n{self.output()}")
                time.sleep(0.05)

    @property
    def pid(self) -> int:
        """The server's own pid (the child when it runs under py-spy)."""
        try:
            children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        except OSError:
            children = []
        return int(children[0]) if self.argv[0].endswith("py-spy") and children else self.proc.pid

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(2)  # SIGINT: uvicorn shuts down gracefully (and py-spy writes its profile)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def pinned(argv: list[str], index: int, pin: bool) -> list[str]:
    """``argv`` under ``taskset -c CPU`` when ``pin``: a configuration's first server process on
    the last core this benchmark may use, its second on the one before, and so on."""
    if not pin:
        return argv
    taskset = shutil.which("taskset")
    if taskset is None:
        raise SystemExit("--pin needs taskset (util-linux)")
    cpus = sorted(os.sched_getaffinity(0))
    return [taskset, "-c", str(cpus[-1 - index % len(cpus)]), *argv]


def workflow_servers(
    db: str,
    processes: int = 1,
    profile: str | None = None,
    extra: tuple[str, ...] = (),
    name: str = "workflow",
    pin: bool = False,
) -> list[Server]:
    """``processes`` × ``collab serve`` on ``db`` (a DuckDB file or a PostgreSQL URL), one
    workspace, the definition created; with ``profile``, the first runs under py-spy; with
    ``pin``, each on one core (:func:`pinned`)."""
    created = subprocess.run(
        [sys.executable, "-c", CLI, "workspace", "create", "--db", db, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if created.returncode != 0:
        raise SystemExit(f"collab workspace create --db {db} failed:\n{created.stderr.strip()}")
    creds = json.loads(created.stdout)
    headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
    servers: list[Server] = []
    try:
        for index in range(processes):
            port = free_port()
            # One workspace at full speed: its rate and in-flight limits (made for fair shares
            # among several) would cap the throughput this measures.
            argv = [
                sys.executable,
                "-c",
                CLI,
                "serve",
                "--db",
                db,
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--log-level",
                "warning",
                "--rate-limit",
                "0",
                "--max-in-flight",
                "0",
                *extra,
            ]
            argv = pinned(argv, index, pin)
            if profile and index == 0:
                argv = profiled(argv, profile)
            label = name if processes == 1 else f"{name} #{index + 1}"
            servers.append(Server(label, argv, f"http://127.0.0.1:{port}", headers))
            servers[-1].start(f"{W}/definitions/list", {})
        with httpx.Client(base_url=servers[0].url, headers=headers, timeout=10) as http:
            answer = http.post(f"{W}/definitions/create", json={"data": examples.load(DEFINITION)}).json()
            if "result" not in answer:
                raise SystemExit(f"creating {DEFINITION} failed: {answer}")
    except BaseException:
        for server in servers:
            server.stop()
        raise
    return servers


def profiled(argv: list[str], profile: str) -> list[str]:
    """``argv`` under ``py-spy record`` (.svg flame graph, .json speedscope, .txt collapsed stacks)."""
    py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if py_spy is None:
        raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
    fmt = "speedscope" if profile.endswith(".json") else "raw" if profile.endswith(".txt") else "flamegraph"
    return [py_spy, "record", "--threads", "--rate", "250", "--format", fmt, "-o", profile, "--", *argv]


def bare_server(pin: bool = False) -> Server:
    port = free_port()
    argv = pinned([sys.executable, str(Path(__file__).resolve()), "--serve-bare", "--port", str(port)], 0, pin)
    return Server("bare", argv, f"http://127.0.0.1:{port}").start(BARE_PATH, {"ping": 1})


@dataclass
class Target:
    """What one configuration's load goes to: its server processes (requests taken in turn)
    and, on PostgreSQL, the database whose processes' CPU is part of the cost."""

    name: str
    servers: list[Server]
    flow_type: type
    postgres: Postgres | None = None

    @property
    def urls(self) -> list[str]:
        return [s.url for s in self.servers]

    @property
    def headers(self) -> dict:
        return self.servers[0].headers

    def server_cpu(self) -> float:
        return sum(cpu_seconds(s.pid) for s in self.servers)

    def server_switches(self) -> tuple[int, float]:
        counts = [thread_switches(s.pid) for s in self.servers]
        return sum(c for c, _ in counts), sum(w for _, w in counts)

    def database_cpu(self) -> float | None:
        return None if self.postgres is None else self.postgres.cpu_seconds()

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


# ---------------------------------------------------------------------------- flows


class FlowError(Exception):
    pass


def _encode(data: dict) -> bytes:
    return json.dumps({"data": data}, separators=(",", ":")).encode()


def _result(response: httpx.Response) -> dict:
    body = response.json()
    if response.status_code != 200 or "result" not in body:
        raise FlowError(f"HTTP {response.status_code}: {body}")
    return body["result"]


class Recorder:
    """Latency samples of requests that started after the warm-up and ended in the window."""

    def __init__(self, start: float, seconds: float):
        self.start, self.end = start, start + seconds
        self.samples: dict[str, list[float]] = defaultdict(list)
        self.flows = 0
        self.errors: dict[str, int] = defaultdict(int)
        self.first_errors: list[str] = []
        self.lock = threading.Lock()

    def add(self, name: str, began: float, ended: float) -> None:
        if began >= self.start and ended <= self.end:
            self.samples[name].append(ended - began)  # list.append is atomic under the GIL

    def flow_done(self, ended: float) -> None:
        if self.start <= ended <= self.end:
            with self.lock:
                self.flows += 1

    def error(self, name: str, exc: Exception) -> None:
        with self.lock:
            self.errors[name] += 1
            if len(self.first_errors) < 5:
                self.first_errors.append(f"{name}: {type(exc).__name__}: {exc}")


class WorkflowFlow:
    """One approval flow; ``next_request`` / ``take`` walk it request by request so the same
    code drives the sync and the async clients."""

    def __init__(self):
        self.execution_id = None
        self.steps: dict[str, str] = {}
        self.index = 0

    def next_request(self):
        i = self.index
        if i == 0:
            return "dispatch", f"{W}/executions/dispatch", {"definitionId": DEFINITION}
        if i == 1:
            return "get", f"{W}/executions/get", {"executionId": self.execution_id}
        if i in (2, 3):
            node = "legal-review" if i == 2 else "brand-review"
            return (
                f"decide.{node.split('-')[0]}",
                f"{W}/steps/recordReviewerDecision",
                {
                    "executionId": self.execution_id,
                    "stepId": self.steps[node],
                    "reviewerId": REVIEWERS[node],
                    "decision": "approve",
                },
            )
        return "getEvents", f"{W}/executions/getEvents", {"executionId": self.execution_id}

    def take(self, result: dict) -> bool:
        """Check a result; True when the flow is complete."""
        i = self.index
        self.index += 1
        if i == 0:
            self.execution_id = result["executionId"]
        elif i == 1:
            self.steps = {s["nodeId"]: s["stepId"] for s in result["steps"] if s["status"] == "waiting"}
            if set(self.steps) != set(REVIEWERS):
                raise FlowError(f"waiting steps {sorted(self.steps)}, expected {sorted(REVIEWERS)}")
        elif i in (2, 3):
            if not result.get("recorded"):
                raise FlowError(f"decision not recorded: {result}")
        else:
            types = [e["type"] for e in result["events"]]
            if not types or types[-1] != "execution.completed":
                raise FlowError(f"flow did not complete: events {types}")
            return True
        return False


class BareFlow(WorkflowFlow):
    """The same five bodies, posted to the bare endpoint."""

    def __init__(self):
        super().__init__()
        self.execution_id = "ex_0123456789abcdef0123"
        self.steps = {n: f"step_draft_1700000000000_abcdef__to__{n}" for n in REVIEWERS}

    def next_request(self):
        label, _, data = super().next_request()
        return label, BARE_PATH, data

    def take(self, result: dict) -> bool:
        if not result.get("ok"):
            raise FlowError(f"bare answer {result}")
        self.index += 1
        return self.index == len(ENDPOINTS)


# Plain-HTTP clients never use it, but httpx builds one per client by default, loading the CA
# bundle each time (0.1 s apiece on a busy machine: 32 clients held up the start by seconds).
_TLS = ssl.create_default_context()


def run_threads(urls: list[str], headers: dict, flow_type, clients: int, opened: Callable[[], Recorder]) -> Recorder:
    """Each client thread sends each request to the next of ``urls`` in turn (one
    ``httpx.Client`` per URL), starting at a different one than its neighbour. The clients
    are made first; ``opened()`` then fixes the window and gives the recorder."""
    headers = {**headers, "content-type": "application/json"}
    with contextlib.ExitStack() as stack:
        turns = []
        for offset in range(clients):
            https = [
                stack.enter_context(httpx.Client(base_url=u, headers=headers, timeout=10, verify=_TLS)) for u in urls
            ]
            turns.append(itertools.cycle(https[offset % len(https) :] + https[: offset % len(https)]))
        recorder = opened()
        gate = threading.Barrier(clients)

        def client(turn) -> None:
            gate.wait()
            while time.perf_counter() < recorder.end:
                flow = flow_type()
                while True:
                    label, path, data = flow.next_request()
                    http = next(turn)
                    began = time.perf_counter()
                    try:
                        result = _result(http.post(path, content=_encode(data)))
                        done = flow.take(result)
                    except Exception as exc:  # noqa: BLE001 - counted and reported
                        recorder.error(label, exc)
                        break
                    ended = time.perf_counter()
                    recorder.add(label, began, ended)
                    if done:
                        recorder.flow_done(ended)
                        break

        threads = [threading.Thread(target=client, args=(turn,), daemon=True) for turn in turns]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return recorder


def _generator(urls: list[str], headers: dict, flow_type, clients: int, conn) -> None:
    """One forked load generator of :func:`run_processes`: says when its clients are made, is
    told the window, runs them and sends back what it recorded."""

    def opened() -> Recorder:
        conn.send("ready")
        start, seconds = conn.recv()
        return Recorder(start, seconds)

    recorder = run_threads(urls, headers, flow_type, clients, opened)
    conn.send((dict(recorder.samples), recorder.flows, dict(recorder.errors), recorder.first_errors))


def run_processes(
    urls: list[str],
    headers: dict,
    flow_type,
    clients: int,
    opened: Callable[[], Recorder],
    generators: int,
    pids: list[int],
) -> Recorder:
    """The clients split over ``generators`` forked processes, each running :func:`run_threads`
    on its share under its own GIL; this process opens the window once all are ready and merges
    what they recorded. Their pids are added to ``pids`` (whose CPU is the load generator's)."""
    context = multiprocessing.get_context("fork")  # the flow classes and URLs go as they are
    children = []
    for index in range(generators):
        mine, theirs = context.Pipe()
        share = clients // generators + (1 if index < clients % generators else 0)
        process = context.Process(target=_generator, args=(urls, headers, flow_type, share, theirs), daemon=True)
        process.start()
        theirs.close()  # so that a generator that dies is an EOFError here, not a wait forever
        children.append((process, mine))
        pids.append(process.pid)
    for _, conn in children:
        conn.recv()  # its clients are made
    recorder = opened()
    for _, conn in children:
        conn.send((recorder.start, recorder.end - recorder.start))
    for process, conn in children:
        samples, flows, errors, first_errors = conn.recv()
        for label, values in samples.items():
            recorder.samples[label].extend(values)
        recorder.flows += flows
        for label, count in errors.items():
            recorder.errors[label] += count
        recorder.first_errors.extend(first_errors[: 5 - len(recorder.first_errors)])
        process.join()
    return recorder


def run_asyncio(urls: list[str], headers: dict, flow_type, clients: int, opened: Callable[[], Recorder]) -> Recorder:
    async def main() -> Recorder:
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with contextlib.AsyncExitStack() as stack:
            https = [
                await stack.enter_async_context(
                    httpx.AsyncClient(
                        base_url=u,
                        headers={**headers, "content-type": "application/json"},
                        timeout=10,
                        limits=limits,
                        verify=_TLS,
                    )
                )
                for u in urls
            ]
            recorder = opened()

            async def client(offset: int) -> None:
                turn = itertools.cycle(https[offset % len(https) :] + https[: offset % len(https)])
                while time.perf_counter() < recorder.end:
                    flow = flow_type()
                    while True:
                        label, path, data = flow.next_request()
                        http = next(turn)
                        began = time.perf_counter()
                        try:
                            result = _result(await http.post(path, content=_encode(data)))
                            done = flow.take(result)
                        except Exception as exc:  # noqa: BLE001
                            recorder.error(label, exc)
                            break
                        ended = time.perf_counter()
                        recorder.add(label, began, ended)
                        if done:
                            recorder.flow_done(ended)
                            break

            await asyncio.gather(*(client(i) for i in range(clients)))
        return recorder

    return asyncio.run(main())


# ---------------------------------------------------------------------------- report


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(q / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[rank]


@dataclass
class Summary:
    """One configuration's measured windows: latency samples and CPU seconds (``database_cpu``
    None where the database is not a process of its own, or not ours to look at)."""

    name: str
    seconds: float
    samples: dict  # label -> latencies in seconds
    flows: int
    errors: dict
    first_errors: list
    server_cpu: float
    client_cpu: float
    other_cpu: float
    database_cpu: float | None = None
    processes: int = 1
    stolen_cpu: float = 0.0  # a hypervisor's steal over the windows (0 on bare metal)
    switches: int = 0  # context switches of the server processes' threads
    waited: float = 0.0  # seconds the server processes' threads were ready but had no core

    @property
    def rows(self) -> dict:
        """label -> (count, req/s, p50 ms, p99 ms), per endpoint and ``all``."""
        rows = {}
        everything: list[float] = []
        for label in [*ENDPOINTS, "all"]:
            values = everything if label == "all" else sorted(self.samples.get(label, []))
            if label == "all":
                values.sort()
            else:
                everything.extend(values)
            p50, p99 = percentile(values, 50) * 1e3, percentile(values, 99) * 1e3
            rows[label] = (len(values), len(values) / self.seconds, p50, p99)
        return rows

    @property
    def total(self):
        return self.rows["all"]

    def per_request_ms(self, cpu_seconds: float) -> float:
        return cpu_seconds * 1e3 / max(1, self.total[0])


def print_summary(s: Summary) -> None:
    rows = s.rows
    print(f"\n{s.name}: {s.total[1]:,.0f} req/s, {s.flows / s.seconds:,.1f} flows/s, errors {sum(s.errors.values())}")
    database = (
        f"PostgreSQL {s.database_cpu / s.seconds:.2f} ({s.per_request_ms(s.database_cpu):.2f} ms a request), "
        if s.database_cpu is not None
        else ""
    )
    print(
        f"  CPU, in cores busy: server{'s' if s.processes > 1 else ''} {s.server_cpu / s.seconds:.2f} "
        f"({s.per_request_ms(s.server_cpu):.2f} ms a request), {database}"
        f"load generator {s.client_cpu / s.seconds:.2f} ({s.per_request_ms(s.client_cpu):.2f} ms a request), "
        f"other processes on the machine {s.other_cpu / s.seconds:.2f}, "
        f"taken by the hypervisor (steal) {s.stolen_cpu / s.seconds:.2f}"
    )
    print(
        f"  server threads: {s.switches / max(1, s.total[0]):.1f} context switches a request; "
        f"ready to run but waiting for a core {s.waited / s.seconds:.2f} (in cores)"
    )
    for what, cores in (("other processes kept", s.other_cpu), ("the hypervisor took", s.stolen_cpu)):
        if cores / s.seconds > NOISY:
            print(
                f"  WARNING: {what} {cores / s.seconds:.2f} cores: throughput and latency figures are "
                f"depressed; CPU per request is the steadier measure"
            )
    print(f"  {'endpoint':<14}{'requests':>10}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for label, (count, rps, p50, p99) in rows.items():
        print(f"  {label:<14}{count:>10,}{rps:>10,.0f}{p50:>10.2f}{p99:>10.2f}")
    for line in s.first_errors:
        print(f"  error: {line}")


def measure(target: Target, args, scrape: bool = False) -> Summary:
    """One window of load on ``target``; with ``scrape``, GET /metrics every few seconds as
    Prometheus would (its cost is part of what the server does in the window)."""
    load_pids = [os.getpid()]  # the load generator's processes
    samples: list[tuple[float, float, float | None, tuple[float, float], tuple[int, float]]] = []
    window: list[float] = []

    def sample_cpu() -> None:  # CPU counters at the window's edges only (the warm-up is not counted)
        for edge in (window[0], window[0] + args.seconds):
            time.sleep(max(0.0, edge - time.perf_counter()))
            samples.append(
                (
                    target.server_cpu(),
                    sum(cpu_seconds(pid) for pid in load_pids),
                    target.database_cpu(),
                    machine_seconds(),
                    target.server_switches(),
                )
            )

    def scraper() -> None:
        with httpx.Client(base_url=target.urls[0], timeout=30) as http:
            while time.perf_counter() < window[0] + args.seconds:
                if http.get("/metrics").status_code != 200:
                    raise SystemExit(f"{target.name}: GET /metrics failed")
                time.sleep(SCRAPE_EVERY_S)

    sampler = threading.Thread(target=sample_cpu, daemon=True)
    helpers = [threading.Thread(target=scraper, daemon=True)] if scrape else []

    def opened() -> Recorder:
        window.append(time.perf_counter() + 0.3 + args.warmup)  # clients connect, warm up, then it opens
        for thread in (sampler, *helpers):
            thread.start()
        return Recorder(window[0], args.seconds)

    if args.generators > 1:
        recorder = run_processes(
            target.urls, target.headers, target.flow_type, args.clients, opened, args.generators, load_pids
        )
    else:
        runner = run_threads if args.mode == "threads" else run_asyncio
        recorder = runner(target.urls, target.headers, target.flow_type, args.clients, opened)
    sampler.join()
    for helper in helpers:
        helper.join()
    (server0, client0, db0, (busy0, stolen0), (sw0, wait0)), (server1, client1, db1, (busy1, stolen1), (sw1, wait1)) = (
        samples
    )
    server_cpu, client_cpu, busy = server1 - server0, client1 - client0, busy1 - busy0
    database_cpu = None if db0 is None or db1 is None else db1 - db0
    return Summary(
        target.name,
        args.seconds,
        dict(recorder.samples),
        recorder.flows,
        dict(recorder.errors),
        recorder.first_errors,
        server_cpu,
        client_cpu,
        max(0.0, busy - server_cpu - client_cpu - (database_cpu or 0.0)),
        database_cpu,
        len(target.servers),
        stolen1 - stolen0,
        sw1 - sw0,
        wait1 - wait0,
    )


def combine(parts: list[Summary]) -> Summary:
    """Rounds of one configuration as one summary (samples, counts and CPU summed)."""
    samples: dict = defaultdict(list)
    errors: dict = defaultdict(int)
    for p in parts:
        for label, values in p.samples.items():
            samples[label].extend(values)
        for k, v in p.errors.items():
            errors[k] += v
    databases = [p.database_cpu for p in parts]
    return Summary(
        parts[0].name,
        sum(p.seconds for p in parts),
        dict(samples),
        sum(p.flows for p in parts),
        dict(errors),
        [e for p in parts for e in p.first_errors][:5],
        sum(p.server_cpu for p in parts),
        sum(p.client_cpu for p in parts),
        sum(p.other_cpu for p in parts),
        None if None in databases else sum(d for d in databases if d is not None),
        parts[0].processes,
        sum(p.stolen_cpu for p in parts),
        sum(p.switches for p in parts),
        sum(p.waited for p in parts),
    )


def observability(args) -> int:
    """The same load with metrics and request logs off and on, in alternating rounds."""
    rounds: dict[str, list[Summary]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="collab-load-") as tmp:
        targets = {
            "off": Target(
                "metrics and request logs off",
                workflow_servers(str(Path(tmp) / "off.duckdb"), name="metrics and request logs off"),
                WorkflowFlow,
            ),
            "on": Target(
                "metrics and request logs on",
                workflow_servers(str(Path(tmp) / "on.duckdb"), extra=OBSERVED, name="metrics and request logs on"),
                WorkflowFlow,
            ),
        }
        try:
            for _ in range(args.rounds):
                for key, target in targets.items():
                    rounds[key].append(measure(target, args, scrape=key == "on"))
            logged = targets["on"].servers[0].output()
        finally:
            for target in targets.values():
                target.stop()
    off, on = combine(rounds["off"]), combine(rounds["on"])
    for summary in (off, on):
        print_summary(summary)
    if '"logger":"collab.access"' not in logged:
        print("the observed server wrote no request log lines")
        return 1
    ratio = on.total[1] / off.total[1]
    cpu = [s.server_cpu / max(1, s.total[0]) for s in (off, on)]
    print(
        f"\nthroughput with metrics and JSON request logs / without = {on.total[1]:,.0f} / {off.total[1]:,.0f} req/s "
        f"= {ratio:.3f} (goal >= {GOALS['observability']:.2f}, i.e. under 5 % of throughput): "
        f"{'met' if ratio >= GOALS['observability'] else 'NOT met'}"
    )
    limit = 1 / GOALS["observability"]
    print(
        f"server CPU per request: off {cpu[0] * 1e3:.3f} ms, on {cpu[1] * 1e3:.3f} ms "
        f"({(cpu[1] / cpu[0] - 1) * 100:+.1f} %; goal <= {(limit - 1) * 100:+.1f} %, which is what bounds a "
        f"CPU-bound server's throughput when others share the machine): "
        f"{'met' if cpu[1] / cpu[0] <= limit else 'NOT met'}"
    )
    if args.batches:
        from observability_cost import report

        ratio = report(args.batches, args.flows)
        print(
            f"in process, CPU per request with / without = {ratio:.3f} (goal <= {1 / GOALS['observability']:.3f}): "
            f"{'met' if ratio <= 1 / GOALS['observability'] else 'NOT met'}"
        )
    return 1 if off.errors or on.errors else 0


# ---------------------------------------------------------------------------- the comparison


def start_targets(
    configs: list[str], tmp: Path, postgres: Postgres | None, profile: str | None, pin: bool = False
) -> list[Target]:
    """Every configuration's servers, on fresh databases (with ``pin``, each server process on
    one core); stopped again if one fails to start."""
    targets: list[Target] = []
    try:
        for config in configs:
            name = CONFIGS[config]
            if config == "bare":
                targets.append(Target(name, [bare_server(pin)], BareFlow))
                continue
            # One profile per configuration: the configuration's name goes into the file name.
            path = str(Path(profile).with_stem(f"{Path(profile).stem}.{config}")) if profile else None
            if config == "duckdb":
                servers = workflow_servers(str(tmp / "load.duckdb"), 1, path, name=name, pin=pin)
                targets.append(Target(name, servers, WorkflowFlow))
            else:
                assert postgres is not None
                processes = 2 if config == "postgres2" else 1
                servers = workflow_servers(postgres.database(config), processes, path, name=name, pin=pin)
                targets.append(Target(name, servers, WorkflowFlow, postgres))
    except BaseException:
        for target in targets:
            target.stop()
        raise
    return targets


def compare(results: dict[str, Summary], clients: int, rounds: dict[str, list[Summary]]) -> None:
    """The ratios and projections issue 14 asks for, from the measured summaries; each rate ratio
    also round by round (``rounds``), where the two rates were measured close together in time,
    so a reader sees how far the machine's drift moves it."""

    def each_round(a: str, b: str) -> str:
        if len(rounds[a]) < 2:
            return ""
        ratios = [x.total[1] / y.total[1] for x, y in zip(rounds[a], rounds[b])]
        return f"; round by round {', '.join(f'{r:.2f}' for r in ratios)}"

    print()
    for config, s in results.items():
        if config != "bare":
            p99 = s.total[3]
            print(
                f"{s.name}: p99 {p99:.1f} ms at {clients} clients (goal < {GOALS['p99_ms']:g} ms): "
                f"{'met' if p99 < GOALS['p99_ms'] else 'NOT met'}"
            )
    rate = {config: s.total[1] for config, s in results.items()}
    if "postgres" in rate and "duckdb" in rate:
        ratio = rate["postgres"] / rate["duckdb"]
        print(
            f"PostgreSQL 1 process / DuckDB = {rate['postgres']:,.0f} / {rate['duckdb']:,.0f} req/s = {ratio:.2f} "
            f"(goal >= {GOALS['postgres']:.2f}): {'met' if ratio >= GOALS['postgres'] else 'NOT met'}"
            f"{each_round('postgres', 'duckdb')}"
        )
    if "postgres2" in rate and "postgres" in rate:
        print(f"PostgreSQL 2 processes / 1 process = {rate['postgres2'] / rate['postgres']:.2f}")
    if "bare" in rate:
        for config in ("duckdb", "postgres", "postgres2"):
            if config in rate:
                ratio = rate[config] / rate["bare"]
                print(
                    f"{results[config].name} / bare Starlette = {rate[config]:,.0f} / {rate['bare']:,.0f} req/s = "
                    f"{ratio:.2f} (goal >= {GOALS['bare']:.2f}): {'met' if ratio >= GOALS['bare'] else 'NOT met'}"
                    f"{each_round(config, 'bare')}"
                )
    print("\nCPU per request (ms): server processes, PostgreSQL, together")
    for s in results.values():
        server = s.per_request_ms(s.server_cpu)
        database = s.per_request_ms(s.database_cpu) if s.database_cpu is not None else None
        both = server + (database or 0.0)
        shown = f"{database:.2f}" if database is not None else "-"
        print(f"  {s.name:<26}{server:>8.2f}{shown:>8}{both:>8.2f}")
    if "bare" in results:
        bare = results["bare"].per_request_ms(results["bare"].server_cpu)
        for config in ("duckdb", "postgres"):
            if config in results:
                s = results[config]
                print(
                    f"  bare / {s.name} server CPU = {bare / s.per_request_ms(s.server_cpu):.2f} "
                    f"(the rate ratio if both were bound by server CPU alone)"
                )
    pg = results.get("postgres2") or results.get("postgres")
    if pg is not None and pg.database_cpu:
        server, database = pg.per_request_ms(pg.server_cpu), pg.per_request_ms(pg.database_cpu)
        print(
            f"\nprojection from {pg.name}: each added server core serves about {1e3 / server:,.0f} req/s "
            f"({server:.2f} ms of server CPU a request); PostgreSQL spends {database:.2f} ms a request, so "
            f"a database with C cores becomes the bound at about C × {1e3 / database:,.0f} req/s, i.e. when the "
            f"servers have about {server / database:.1f} cores for each of its cores"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent closed-loop clients (default 16)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per window (default 10)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds first (default 1)")
    parser.add_argument(
        "--mode",
        choices=("threads", "asyncio"),
        default="threads",
        help="threads with one httpx.Client per server each (default) or asyncio + httpx.AsyncClient",
    )
    parser.add_argument(
        "--only",
        default=",".join(CONFIGS),
        help=f"comma-separated configurations among {', '.join(CONFIGS)} (default: all), or observability: "
        "the DuckDB server with metrics and request logs off, then on",
    )
    parser.add_argument(
        "--generators",
        type=int,
        default=1,
        help="load generator processes the clients are split over (default 1: this process; threads mode only)",
    )
    parser.add_argument("--rounds", type=int, default=2, help="rounds over the configurations (default 2)")
    parser.add_argument("--pg-url", help="a PostgreSQL server to create the databases on (default: start a cluster)")
    parser.add_argument(
        "--batches",
        type=int,
        default=10,
        help="observability, in process: alternating batches (default 10; 0 skips this part)",
    )
    parser.add_argument("--flows", type=int, default=30, help="observability, in process: flows a batch (default 30)")
    parser.add_argument(
        "--profile",
        metavar="PATH",
        help="run each workflow configuration's first server under `py-spy record` (.svg flame graph, "
        ".json speedscope, .txt collapsed stacks); the configuration's name is added to the file name",
    )
    parser.add_argument(
        "--pin",
        action="store_true",
        help="run each server process on one core (`taskset -c`): a configuration's first process on the "
        "last core, its second on the one before; PostgreSQL and the load generator are not pinned",
    )
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.serve_bare:
        serve_bare("127.0.0.1", args.port, "warning")
        return 0

    configs = [c.strip() for c in args.only.split(",") if c.strip()]
    unknown = [c for c in configs if c not in (*CONFIGS, "observability")]
    if unknown or not configs:
        parser.error(f"--only: unknown configuration {', '.join(unknown)}; choose among {', '.join(CONFIGS)}")
    if args.generators < 1 or (args.generators > 1 and args.mode != "threads"):
        parser.error("--generators: 1 or more, and more than 1 only with --mode threads")
    cores = os.cpu_count()
    print(
        f"server_load: {args.clients} clients ({args.mode}"
        f"{f', over {args.generators} processes' if args.generators > 1 else ''}), "
        f"{args.warmup:g} s warm-up + {args.seconds:g} s per window, {args.rounds} round(s), {cores} CPU cores "
        f"shared by the load generator, the servers "
        f"(one uvicorn worker each{', each pinned to one core' if args.pin else ''}) and PostgreSQL",
        flush=True,
    )
    if "observability" in configs:
        return observability(args)
    rounds: dict[str, list[Summary]] = {c: [] for c in configs}
    with tempfile.TemporaryDirectory(prefix="collab-load-") as tmp, contextlib.ExitStack() as stack:
        needs_postgres = any(c.startswith("postgres") for c in configs)
        postgres = stack.enter_context(Postgres(args.pg_url)) if needs_postgres else None
        targets = start_targets(configs, Path(tmp), postgres, args.profile, args.pin)
        try:
            # A server's first seconds are not its steady state (pool connections opened,
            # caches and statement plans filled): each gets a longer warm-up, once.
            settle = argparse.Namespace(**{**vars(args), "seconds": 0.5, "warmup": max(args.warmup, SETTLE_S)})
            for target in targets:
                measure(target, settle)
            for _ in range(args.rounds):
                for config, target in zip(configs, targets):
                    rounds[config].append(measure(target, args))
        finally:
            for target in targets:
                target.stop()
    results = {config: combine(parts) for config, parts in rounds.items()}
    for summary in results.values():
        print_summary(summary)
    if args.profile:
        print(f"\nprofiles written next to {args.profile}, one per workflow configuration")
    compare(results, args.clients, rounds)
    failed = any(s.errors for s in results.values())
    if failed:
        print("errors occurred during the load (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
