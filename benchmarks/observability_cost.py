"""The CPU that metrics and JSON request logs add to a workflow request, measured in process
(used by ``server_load.py --only observability``; runnable alone).

Two apps (``create_app``), each on its own fresh DuckDB file, one with metrics and request
logs off, one with them on (metrics, a JSON line per request to a file, /metrics scraped once
per batch); the same approval flows as the HTTP benchmark go through each via Starlette's
TestClient, in alternating batches so the machine's other load falls on both alike. Server
CPU = the process's CPU time minus the main thread's (the client's): the app's event loop,
worker threads and writer thread. No network, so far less noise than the HTTP rounds.

    .venv/bin/python benchmarks/observability_cost.py [--batches 10] [--flows 30]
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")  # it works as it is
from starlette.testclient import TestClient  # noqa: E402

from server import Settings, create_app  # noqa: E402
from toolkit import examples  # noqa: E402
from toolkit.logs import configure  # noqa: E402
from toolkit.services.runtime import SystemClock  # noqa: E402
from toolkit.services.workspaces import create_workspace  # noqa: E402
from toolkit.store import Store  # noqa: E402

W = "/v2/workflow"
REVIEWERS = {"legal-review": "alice@legal", "brand-review": "bob@brand"}
REQUESTS_PER_FLOW = 5


def _client(db: Path, metrics: bool) -> TestClient:
    with Store(db) as store:
        creds = create_workspace(store, now_ms=SystemClock().now())
    app = create_app(Settings(db=db, metrics=metrics, mirror_every_s=None))
    client = TestClient(app, headers={"x-service-api-key": creds.api_key, "x-service-auth-token": creds.auth_token})
    client.__enter__()  # runs the lifespan: the store opens, the background starts
    assert client.post(f"{W}/definitions/create", json={"data": examples.load("parallel-review")}).status_code == 200
    return client


def _flow(client: TestClient) -> None:
    def ok(path: str, data: dict) -> dict:
        answer = client.post(path, json={"data": data})
        if answer.status_code != 200:
            raise SystemExit(f"{path}: {answer.status_code} {answer.text}")
        return answer.json()["result"]

    execution_id = ok(f"{W}/executions/dispatch", {"definitionId": "parallel-review"})["executionId"]
    steps = {
        s["nodeId"]: s["stepId"]
        for s in ok(f"{W}/executions/get", {"executionId": execution_id})["steps"]
        if s["status"] == "waiting"
    }
    for node, reviewer in REVIEWERS.items():
        ok(
            f"{W}/steps/recordReviewerDecision",
            {"executionId": execution_id, "stepId": steps[node], "reviewerId": reviewer, "decision": "approve"},
        )
    events = ok(f"{W}/executions/getEvents", {"executionId": execution_id})["events"]
    if events[-1]["type"] != "execution.completed":
        raise SystemExit(f"the flow did not complete: {[e['type'] for e in events]}")


def measure(batches: int, flows: int) -> dict[str, float]:
    """Server CPU seconds per request, off and on."""
    access = logging.getLogger("collab.access")
    with tempfile.TemporaryDirectory(prefix="collab-obs-") as tmp:
        log_file = open(Path(tmp) / "requests.log", "w")
        configure("json", "warning", stream=log_file)
        clients = {"off": _client(Path(tmp) / "off.duckdb", False), "on": _client(Path(tmp) / "on.duckdb", True)}
        cpu = {"off": 0.0, "on": 0.0}
        try:
            for key in ("off", "on"):  # warm-up, unmeasured
                access.setLevel(logging.INFO if key == "on" else logging.WARNING)
                for _ in range(5):
                    _flow(clients[key])
            for _ in range(batches):
                for key, client in clients.items():
                    access.setLevel(logging.INFO if key == "on" else logging.WARNING)
                    process, mine = time.process_time(), time.thread_time()
                    for _ in range(flows):
                        _flow(client)
                    if key == "on":
                        assert client.get("/metrics").status_code == 200
                    cpu[key] += (time.process_time() - process) - (time.thread_time() - mine)
        finally:
            for client in clients.values():
                client.__exit__(None, None, None)
            log_file.close()
        lines = (Path(tmp) / "requests.log").read_text().count('"logger":"collab.access"')
    requests = batches * flows * REQUESTS_PER_FLOW
    if lines < requests:
        raise SystemExit(f"only {lines} request log lines for {requests} requests with logs on")
    return {key: seconds / requests for key, seconds in cpu.items()}


def report(batches: int, flows: int) -> float:
    """Print the in-process figures; returns on/off CPU per request."""
    cost = measure(batches, flows)
    ratio = cost["on"] / cost["off"]
    print(
        f"\nin process ({batches} alternating batches of {flows} flows each, {batches * flows * REQUESTS_PER_FLOW:,} "
        f"requests per side): server CPU per request off {cost['off'] * 1e3:.3f} ms, on {cost['on'] * 1e3:.3f} ms "
        f"({(ratio - 1) * 100:+.1f} %; the throughput of a CPU-bound server falls by {(1 - 1 / ratio) * 100:.1f} %)"
    )
    return ratio


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--flows", type=int, default=30)
    args = parser.parse_args(argv)
    report(args.batches, args.flows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
