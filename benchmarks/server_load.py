"""Benchmark: closed-loop HTTP load on the workflow server, against a bare Starlette baseline.

Workload: N concurrent clients (default 16) on loopback, each looping full approval flows on
the ``parallel-review`` example — dispatch, get execution, ``alice@legal`` approves,
``bob@brand`` approves, getEvents (5 requests; the flow is checked to end with
``execution.completed``) — for ``--seconds`` (default 10) after ``--warmup`` (default 1 s).
The server is ``collab serve`` itself, started as a subprocess (one uvicorn worker, default
settings) on a fresh temporary DuckDB file with a workspace made by ``collab workspace create``.

Baseline, in the same run: the same closed loop — same clients, same request bodies, five
POSTs per "flow" — against a bare Starlette app with one POST JSON endpoint that parses the
body and answers ``{"result": {...}}``, served by ``uvicorn.run`` with the same settings.

``--only observability`` measures instead what metrics and request logs cost: the same load
on two `collab serve` processes, one as above (no metrics; ``--log-level warning``, so no
request log lines) and one with ``--metrics --log-level info --log-format json`` (a JSON line
per request, to a file, and /metrics scraped every 2 s), measured in alternating rounds
(``--rounds``, default 2) so that the machine's other load falls on both alike. Printed: the
throughput ratio on/off (goal >= 0.95: under 5 % of throughput) and server CPU per request;
then the steadier in-process measure of benchmarks/observability_cost.py (server CPU per
request, off and on, in alternating batches: ``--batches``, ``--flows``).

Printed: requests/s, flows/s and p50/p99 latency overall and per endpoint for both; the CPU
used in the measured window by each server, by the load generator and by every other process
on the machine (a run is flagged when others kept more than a quarter core busy: throughput
and latency then drop, CPU per request much less); the ratio workflow req/s ÷ bare req/s and,
steadier, the ratio of server CPU per request. Goals: ratio ≥ 0.30 and workflow p99 < 50 ms
at 16 clients. Exit status 1 only if a request failed or a flow did not complete.

The load generator runs in this process and shares the machine's cores with the server
(on a 2-core box it takes most of one); the server is a single process whose Python work is
bound by one GIL. Clients are threads with one ``httpx.Client`` each (``--mode threads``,
the default: it loads the server harder than ``--mode asyncio`` with ``httpx.AsyncClient``,
whose per-request overhead in the client is higher).

    .venv/bin/python benchmarks/server_load.py [--clients 16] [--seconds 10] [--mode threads|asyncio]
    .venv/bin/python benchmarks/server_load.py --only workflow --profile /tmp/server.svg   # py-spy flame graph
    .venv/bin/python benchmarks/server_load.py --only observability --seconds 5 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from toolkit import examples  # noqa: E402

W = "/v2/workflow"
DEFINITION = "parallel-review"
REVIEWERS = {"legal-review": "alice@legal", "brand-review": "bob@brand"}
ENDPOINTS = ("dispatch", "get", "decide.legal", "decide.brand", "getEvents")
BARE_PATH = "/bare"
GOALS = {"ratio": 0.30, "p99_ms": 50.0, "observability": 0.95}
OBSERVED = ("--metrics", "--log-level", "info", "--log-format", "json")  # what --only observability switches on
SCRAPE_EVERY_S = 2.0
NOISY = 0.25  # cores used by other processes above which the run is flagged
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


def busy_seconds() -> float:
    """CPU seconds all processes spent busy (every core, /proc/stat), 0.0 where unavailable."""
    try:
        fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
        idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
        return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


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


def workflow_server(db: Path, profile: str | None, extra: tuple[str, ...] = (), name: str = "workflow") -> Server:
    created = subprocess.run(
        [sys.executable, "-c", CLI, "workspace", "create", "--db", str(db), "--json"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    creds = json.loads(created.stdout)
    port = free_port()
    # One workspace at full speed: its rate and in-flight limits (made for fair shares among
    # several) would cap the throughput this measures.
    argv = [
        sys.executable,
        "-c",
        CLI,
        "serve",
        "--db",
        str(db),
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
    if profile:
        py_spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
        if py_spy is None:
            raise SystemExit("--profile needs py-spy: .venv/bin/pip install py-spy")
        fmt = "speedscope" if profile.endswith(".json") else "raw" if profile.endswith(".txt") else "flamegraph"
        argv = [py_spy, "record", "--threads", "--rate", "250", "--format", fmt, "-o", profile, "--"] + argv
    server = Server(
        name,
        argv,
        f"http://127.0.0.1:{port}",
        {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]},
    )
    server.start(f"{W}/definitions/list", {})
    with httpx.Client(base_url=server.url, headers=server.headers, timeout=10) as http:
        answer = http.post(f"{W}/definitions/create", json={"data": examples.load(DEFINITION)}).json()
        if "result" not in answer:
            server.stop()
            raise SystemExit(f"creating {DEFINITION} failed: {answer}")
    return server


def bare_server() -> Server:
    port = free_port()
    argv = [sys.executable, str(Path(__file__).resolve()), "--serve-bare", "--port", str(port)]
    return Server("bare", argv, f"http://127.0.0.1:{port}").start(BARE_PATH, {"ping": 1})


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


def run_threads(url: str, headers: dict, flow_type, clients: int, start: float, seconds: float) -> Recorder:
    recorder = Recorder(start, seconds)
    stop_at = recorder.end
    gate = threading.Barrier(clients)

    def client() -> None:
        with httpx.Client(base_url=url, headers={**headers, "content-type": "application/json"}, timeout=10) as http:
            gate.wait()
            while time.perf_counter() < stop_at:
                flow = flow_type()
                while True:
                    label, path, data = flow.next_request()
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

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return recorder


def run_asyncio(url: str, headers: dict, flow_type, clients: int, start: float, seconds: float) -> Recorder:
    async def main() -> Recorder:
        recorder = Recorder(start, seconds)
        limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
        async with httpx.AsyncClient(
            base_url=url, headers={**headers, "content-type": "application/json"}, timeout=10, limits=limits
        ) as http:

            async def client() -> None:
                while time.perf_counter() < recorder.end:
                    flow = flow_type()
                    while True:
                        label, path, data = flow.next_request()
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

            await asyncio.gather(*(client() for _ in range(clients)))
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
    name: str
    seconds: float
    rows: dict  # label -> (count, rps, p50 ms, p99 ms)
    flows: int
    errors: dict
    first_errors: list
    server_cpu: float
    client_cpu: float
    other_cpu: float

    @property
    def total(self):
        return self.rows["all"]


def summarise(name: str, recorder: Recorder, seconds: float, cpu: tuple[float, float, float]) -> Summary:
    rows = {}
    everything = []
    for label in ENDPOINTS:
        values = sorted(recorder.samples.get(label, []))
        everything.extend(values)
        rows[label] = (len(values), len(values) / seconds, percentile(values, 50) * 1e3, percentile(values, 99) * 1e3)
    everything.sort()
    rows["all"] = (
        len(everything),
        len(everything) / seconds,
        percentile(everything, 50) * 1e3,
        percentile(everything, 99) * 1e3,
    )
    return Summary(name, seconds, rows, recorder.flows, dict(recorder.errors), recorder.first_errors, *cpu)


def print_summary(s: Summary) -> None:
    print(f"\n{s.name}: {s.total[1]:,.0f} req/s, {s.flows / s.seconds:,.1f} flows/s, errors {sum(s.errors.values())}")
    per_request = 1e3 / max(1, s.total[0])
    print(
        f"  CPU, in cores busy: server {s.server_cpu / s.seconds:.2f} ({s.server_cpu * per_request:.2f} ms a request), "
        f"load generator {s.client_cpu / s.seconds:.2f} ({s.client_cpu * per_request:.2f} ms a request), "
        f"other processes on the machine {s.other_cpu / s.seconds:.2f}"
    )
    if s.other_cpu / s.seconds > NOISY:
        print(
            f"  WARNING: other processes kept {s.other_cpu / s.seconds:.2f} cores busy: throughput and latency "
            f"figures are depressed; CPU per request is the steadier measure"
        )
    print(f"  {'endpoint':<14}{'requests':>10}{'req/s':>10}{'p50 ms':>10}{'p99 ms':>10}")
    for label, (count, rps, p50, p99) in s.rows.items():
        print(f"  {label:<14}{count:>10,}{rps:>10,.0f}{p50:>10.2f}{p99:>10.2f}")
    for line in s.first_errors:
        print(f"  error: {line}")


def measure(server: Server, flow_type, args, scrape: bool = False) -> Summary:
    """One window of load on ``server``; with ``scrape``, GET /metrics every few seconds as
    Prometheus would (its cost is part of what the server does in the window)."""
    runner = run_threads if args.mode == "threads" else run_asyncio
    me, pid = os.getpid(), server.pid
    start = time.perf_counter() + 0.3 + args.warmup  # clients connect, then warm up, then the window opens
    samples = []

    def sample_cpu() -> None:  # CPU counters at the window's edges only (the warm-up is not counted)
        for edge in (start, start + args.seconds):
            time.sleep(max(0.0, edge - time.perf_counter()))
            samples.append((cpu_seconds(pid), cpu_seconds(me), busy_seconds()))

    def scraper() -> None:
        with httpx.Client(base_url=server.url, timeout=30) as http:
            while time.perf_counter() < start + args.seconds:
                if http.get("/metrics").status_code != 200:
                    raise SystemExit(f"{server.name}: GET /metrics failed")
                time.sleep(SCRAPE_EVERY_S)

    sampler = threading.Thread(target=sample_cpu, daemon=True)
    sampler.start()
    helpers = [threading.Thread(target=scraper, daemon=True)] if scrape else []
    for helper in helpers:
        helper.start()
    recorder = runner(server.url, server.headers, flow_type, args.clients, start, args.seconds)
    sampler.join()
    for helper in helpers:
        helper.join()
    server_cpu, client_cpu, busy = (a - b for a, b in zip(samples[1], samples[0]))
    return summarise(
        server.name, recorder, args.seconds, (server_cpu, client_cpu, max(0.0, busy - server_cpu - client_cpu))
    )


def combine(name: str, parts: list[Summary]) -> Summary:
    """Rounds of one server as one summary (counts and CPU summed; latencies: the worst round's)."""
    seconds = sum(p.seconds for p in parts)
    rows = {}
    for label in parts[0].rows:
        count = sum(p.rows[label][0] for p in parts)
        worst = [max(p.rows[label][i] for p in parts) for i in (2, 3)]
        rows[label] = (count, count / seconds, *worst)
    errors: dict = defaultdict(int)
    for p in parts:
        for k, v in p.errors.items():
            errors[k] += v
    return Summary(
        name,
        seconds,
        rows,
        sum(p.flows for p in parts),
        dict(errors),
        [e for p in parts for e in p.first_errors][:5],
        sum(p.server_cpu for p in parts),
        sum(p.client_cpu for p in parts),
        sum(p.other_cpu for p in parts),
    )


def observability(args) -> int:
    """The same load with metrics and request logs off and on, in alternating rounds."""
    rounds: dict[str, list[Summary]] = {"off": [], "on": []}
    with tempfile.TemporaryDirectory(prefix="collab-load-") as tmp:
        servers = {
            "off": workflow_server(Path(tmp) / "off.duckdb", None, name="metrics and request logs off"),
            "on": workflow_server(Path(tmp) / "on.duckdb", None, OBSERVED, name="metrics and request logs on"),
        }
        try:
            for _ in range(args.rounds):
                for key, server in servers.items():
                    rounds[key].append(measure(server, WorkflowFlow, args, scrape=key == "on"))
            logged = servers["on"].output()
        finally:
            for server in servers.values():
                server.stop()
    off, on = combine(servers["off"].name, rounds["off"]), combine(servers["on"].name, rounds["on"])
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=16, help="concurrent closed-loop clients (default 16)")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured seconds per server (default 10)")
    parser.add_argument("--warmup", type=float, default=1.0, help="unmeasured seconds first (default 1)")
    parser.add_argument(
        "--mode",
        choices=("threads", "asyncio"),
        default="threads",
        help="threads with one httpx.Client each (default) or asyncio + httpx.AsyncClient",
    )
    parser.add_argument(
        "--only",
        choices=("both", "workflow", "bare", "observability"),
        default="both",
        help="observability: the workflow server with metrics and request logs off, then on",
    )
    parser.add_argument("--rounds", type=int, default=2, help="alternating off/on rounds (observability; default 2)")
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
        help="run the workflow server under `py-spy record` (.svg flame graph, .json speedscope, "
        ".txt collapsed stacks)",
    )
    parser.add_argument("--serve-bare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.serve_bare:
        serve_bare("127.0.0.1", args.port, "warning")
        return 0

    cores = os.cpu_count()
    print(
        f"server_load: {args.clients} clients ({args.mode}), {args.warmup:g} s warm-up + {args.seconds:g} s "
        f"per server, {cores} CPU cores shared by the load generator and the server (one uvicorn worker)"
    )
    if args.only == "observability":
        return observability(args)
    results: dict[str, Summary] = {}
    with tempfile.TemporaryDirectory(prefix="collab-load-") as tmp:
        if args.only in ("both", "workflow"):
            server = workflow_server(Path(tmp) / "load.duckdb", args.profile)
            try:
                results["workflow"] = measure(server, WorkflowFlow, args)
            finally:
                server.stop()
            print_summary(results["workflow"])
            if args.profile:
                print(f"  profile written to {args.profile}")
        if args.only in ("both", "bare"):
            server = bare_server()
            try:
                results["bare"] = measure(server, BareFlow, args)
            finally:
                server.stop()
            print_summary(results["bare"])

    failed = any(s.errors for s in results.values())
    if "workflow" in results:
        wf = results["workflow"]
        p99 = wf.total[3]
        print(
            f"\nworkflow p99 {p99:.1f} ms (goal < {GOALS['p99_ms']:g} ms at 16 clients): "
            f"{'met' if p99 < GOALS['p99_ms'] else 'NOT met'}"
        )
    if len(results) == 2:
        ratio = results["workflow"].total[1] / results["bare"].total[1]
        print(
            f"ratio workflow req/s / bare req/s = {results['workflow'].total[1]:,.0f} / "
            f"{results['bare'].total[1]:,.0f} = {ratio:.2f} (goal >= {GOALS['ratio']:.2f}): "
            f"{'met' if ratio >= GOALS['ratio'] else 'NOT met'}"
        )
    if len(results) == 2:
        wf, bare = results["workflow"], results["bare"]
        cost = [r.server_cpu / max(1, r.total[0]) for r in (wf, bare)]
        print(
            f"server CPU per request: workflow {cost[0] * 1e3:.2f} ms, bare {cost[1] * 1e3:.2f} ms "
            f"(bare/workflow = {cost[1] / cost[0]:.2f}: the ratio if both were bound by server CPU alone)"
        )
    if failed:
        print("errors occurred during the load (see above)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
