"""Benchmark: one workspace flooding the server over its limits must not raise another's p99
by more than 2x (issue 13, item 5).

``collab serve`` (default limits except ``--rate-limit``, default 20 req/s per workspace) on a
fresh DuckDB file with two workspaces, or with ``--backend postgres --processes N`` N server
processes on a fresh PostgreSQL database (a durable cluster the benchmark starts), every
client sending each request to the next process in turn (limits are per process, so A is
served at about N times its limit). Workspace B runs ``--calm`` clients (default 2), each
repeating list definitions, dispatch, get execution. Workspace A, in a
separate process (so that its client work does not steal B's client's GIL), floods with
``--flood`` threads (default 16) sending list definitions and dispatch as fast as answers come.
B keeps to half its rate limit (each client paces its rounds of three requests), so every
one of its requests must be served.

Phases alternate — B alone, B with A's flood — ``--rounds`` times (default 2) of ``--seconds``
each (default 5), so that drift in the machine's load hits both alike. Printed: B's p50/p99
alone and under the flood, the ratio of the p99s (goal ≤ 2), A's answers by status (most must
be 429) and the rate A was served at (about its limit).

    .venv/bin/python benchmarks/tenant_fairness.py [--seconds 5] [--rounds 2] [--flood 16] [--rate 20]
    .venv/bin/python benchmarks/tenant_fairness.py --backend postgres --processes 2
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from pg_bench import Postgres  # noqa: E402

from toolkit import examples  # noqa: E402

W = "/v2/workflow"
CLI = "import sys; from toolkit.cli import main; sys.exit(main())"
GOAL = 2.0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def headers(creds: dict) -> dict:
    return {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}


class InTurn:
    """One client per server process, each request sent to the next in turn."""

    def __init__(self, urls: list[str], creds: dict) -> None:
        self.clients = [httpx.Client(base_url=url, headers=headers(creds), timeout=30) for url in urls]
        self.turn = itertools.cycle(self.clients)

    def post(self, path: str, json: dict) -> httpx.Response:
        return next(self.turn).post(path, json=json)

    def __enter__(self) -> InTurn:
        return self

    def __exit__(self, *exc) -> None:
        for client in self.clients:
            client.close()


def calm_loop(urls: list[str], creds: dict, definition_id: str, until: float, every_s: float, out: list) -> None:
    """B's client: a list, a dispatch and a get every ``every_s`` (within B's rate limit)."""
    with InTurn(urls, creds) as http:
        next_at = time.monotonic()
        while time.monotonic() < until:
            next_at += every_s
            time.sleep(max(0.0, next_at - time.monotonic()))
            for path, data in (
                (f"{W}/definitions/list", {}),
                (f"{W}/executions/dispatch", {"definitionId": definition_id}),
            ):
                began = time.perf_counter()
                resp = http.post(path, json={"data": data})
                out.append((time.perf_counter() - began, resp.status_code))
                if path.endswith("dispatch") and resp.status_code == 200:
                    execution_id = resp.json()["result"]["executionId"]
                    began = time.perf_counter()
                    resp = http.post(f"{W}/executions/get", json={"data": {"executionId": execution_id}})
                    out.append((time.perf_counter() - began, resp.status_code))


def flood(urls: list[str], creds: dict, definition_id: str, seconds: float, threads: int, queue) -> None:
    """In its own process: ``threads`` clients of workspace A sending as fast as answered."""
    statuses: Counter = Counter()
    lock = threading.Lock()
    until = time.monotonic() + seconds

    def loop():
        with InTurn(urls, creds) as http:
            while time.monotonic() < until:
                for path, data in (
                    (f"{W}/definitions/list", {}),
                    (f"{W}/executions/dispatch", {"definitionId": definition_id}),
                ):
                    code = http.post(path, json={"data": data}).status_code
                    with lock:
                        statuses[code] += 1

    workers = [threading.Thread(target=loop) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    queue.put(dict(statuses))


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_server(db: str, rate: float, log: Path) -> tuple[subprocess.Popen, str]:
    """``collab serve`` on ``db``, ready; its process and URL."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-c", CLI, "serve", "--db", db, "--port", str(port), "--log-level", "warning"]
    server = subprocess.Popen([*argv, "--rate-limit", str(rate)], stdout=open(log, "wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while True:
        try:
            if httpx.get(f"{url}/openapi.json", timeout=2).status_code == 200:
                return server, url
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline or server.poll() is not None:
            raise SystemExit(f"the server did not start; see {log}")
        time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--flood", type=int, default=16)
    parser.add_argument("--calm", type=int, default=2)
    parser.add_argument("--rate", type=float, default=20.0)
    parser.add_argument("--backend", choices=("duckdb", "postgres"), default="duckdb")
    parser.add_argument("--processes", type=int, default=1, help="server processes (PostgreSQL only)")
    args = parser.parse_args(argv)
    if args.processes > 1 and args.backend != "postgres":
        parser.error("several processes need --backend postgres (DuckDB admits one writing process)")

    root = Path(tempfile.mkdtemp(prefix="collab-fairness-"))
    with contextlib.ExitStack() as stack:
        if args.backend == "postgres":
            db = stack.enter_context(Postgres(None)).database("fairness")
        else:
            db = str(root / "fairness.duckdb")
        creds = [
            json.loads(
                subprocess.run(
                    [sys.executable, "-c", CLI, "workspace", "create", "--db", db, "--json"],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
            )
            for _ in range(2)
        ]
        servers = []
        for i in range(args.processes):
            servers.append(start_server(db, args.rate, root / f"server{i}.log"))
            stack.callback(servers[-1][0].wait, timeout=30)
            stack.callback(servers[-1][0].terminate)
        urls = [url for _, url in servers]
        definition = examples.load("parallel-review")
        for c in creds:
            created = httpx.post(
                f"{urls[0]}{W}/definitions/create", json={"data": definition}, headers=headers(c), timeout=30
            )
            assert created.status_code == 200, created.text
        a, b = creds
        alone, flooded, flood_statuses = [], [], Counter()
        ctx = multiprocessing.get_context("spawn")
        for _ in range(args.rounds):
            for with_flood in (False, True):
                out: list = []
                proc = queue = None
                if with_flood:
                    queue = ctx.Queue()
                    proc = ctx.Process(
                        target=flood, args=(urls, a, definition["definitionId"], args.seconds + 1, args.flood, queue)
                    )
                    proc.start()
                    time.sleep(1.0)  # let the flood reach full strength before measuring
                until = time.monotonic() + args.seconds
                every = 3 * args.calm / (args.rate / 2)  # B uses half its rate: 3 requests per round
                calm = [
                    threading.Thread(target=calm_loop, args=(urls, b, definition["definitionId"], until, every, out))
                    for _ in range(args.calm)
                ]
                for t in calm:
                    t.start()
                for t in calm:
                    t.join()
                if proc is not None:
                    flood_statuses.update(queue.get(timeout=120))
                    proc.join()
                (flooded if with_flood else alone).extend(out)

    failed = [s for _, s in alone + flooded if s != 200]
    lat_alone, lat_flooded = [t * 1000 for t, _ in alone], [t * 1000 for t, _ in flooded]
    p99_alone, p99_flooded = quantile(lat_alone, 0.99), quantile(lat_flooded, 0.99)
    served = flood_statuses.get(200, 0) / ((args.seconds + 1) * args.rounds)
    print(
        f"workspace B ({args.calm} clients): alone p50 {quantile(lat_alone, 0.5):.1f} ms p99 {p99_alone:.1f} ms "
        f"({len(lat_alone)} requests); under A's flood p50 {quantile(lat_flooded, 0.5):.1f} ms "
        f"p99 {p99_flooded:.1f} ms ({len(lat_flooded)} requests)"
    )
    print(
        f"workspace A ({args.flood} clients, limit {args.rate:g} req/s): answers "
        f"{dict(sorted(flood_statuses.items()))},"
        f" served {served:.0f} req/s"
    )
    ratio = p99_flooded / p99_alone
    print(
        f"[{args.backend}, {args.processes} process{'es' if args.processes > 1 else ''}] "
        f"B's p99 under the flood / alone: {ratio:.2f}x (goal <= {GOAL:g}x); B's failed requests: {len(failed)}; "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
