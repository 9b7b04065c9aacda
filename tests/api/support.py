"""Helpers for the black-box HTTP tests: run `collab` as a subprocess, talk to it with httpx.

Nothing here imports the server: the tests see only the command line and HTTP, as a client
of the service would.
"""

from __future__ import annotations

import atexit
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
from postgres import SKIP_ENV, PostgresCluster
from processes import free_port, wait_until_ready

from toolkit.client import KEEPALIVE_S

W = "/v2/workflow"
DEF_CREATE, DEF_GET, DEF_LIST = f"{W}/definitions/create", f"{W}/definitions/get", f"{W}/definitions/list"
DEF_UPDATE, DEF_DELETE = f"{W}/definitions/update", f"{W}/definitions/delete"
DISPATCH, EXEC_GET, EXEC_LIST = f"{W}/executions/dispatch", f"{W}/executions/get", f"{W}/executions/list"
EXEC_CANCEL, EVENTS = f"{W}/executions/cancel", f"{W}/executions/getEvents"
RESOLVE, DECIDE = f"{W}/steps/resolve", f"{W}/steps/recordReviewerDecision"
AGENT_RESOLUTION, STEP_CANCEL = f"{W}/steps/recordAgentResolution", f"{W}/steps/cancel"

# semantics §1
HTTP_STATUS = {
    "INVALID_ARGUMENT": 400,
    "FAILED_PRECONDITION": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "INTERNAL": 500,
    "UNAVAILABLE": 503,
}

EXTERNAL_TYPES = {
    "execution.dispatched",
    "execution.completed",
    "execution.failed",
    "execution.cancelled",
    "step.awaiting-approval",
    "step.completed",
    "step.failed",
    "step.breached",
    "step.cancelled",
    "group.quorum-met",
    "loop.iteration-started",
    "loop.exhausted",
}
TERMINAL_STEP = {"completed", "failed", "skipped", "cancelled", "breached"}


def collab_bin() -> str:
    """The `collab` console script of the interpreter running the tests (the project venv)."""
    candidate = Path(sys.executable).parent / "collab"
    if candidate.exists():
        return str(candidate)
    found = shutil.which("collab")
    assert found, "the `collab` command is not installed (pip install -e .)"
    return found


def uid(prefix: str) -> str:
    """A definitionId unique within the test session (matches ^[a-z0-9][a-z0-9-]{2,63}$)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


# Which backend the HTTP tests run on: duckdb (a file, the default), postgres (one server process
# on a PostgreSQL database the tests start), postgres2 (two processes, requests taken in turn).
BACKEND_ENV = "COLLAB_TEST_BACKEND"
BACKEND = os.environ.get(BACKEND_ENV, "duckdb")
if BACKEND not in ("duckdb", "postgres", "postgres2"):
    raise RuntimeError(f"{BACKEND_ENV}={BACKEND}: expected duckdb, postgres or postgres2")
PROCESSES = 2 if BACKEND == "postgres2" else 1
_cluster: PostgresCluster | None = None


def is_url(db: Path | str) -> bool:
    return str(db).startswith(("postgresql://", "postgres://"))


def fresh_db(root: Path, name: str, backend: str | None = None) -> Path | str:
    """A new, empty database for one server: ``root/NAME.duckdb``, or on PostgreSQL a new
    database on the cluster the tests start (once per test process). ``backend`` is
    ``COLLAB_TEST_BACKEND``'s unless given ("duckdb" or "postgres"); a test that needs
    PostgreSQL whatever the run's backend asks for it (and calls ``skip_without_postgres`` first)."""
    global _cluster
    if (backend or BACKEND) == "duckdb":
        return Path(root) / f"{name}.duckdb"
    if _cluster is None:
        _cluster = PostgresCluster.start()
        atexit.register(_cluster.stop)
    return _cluster.create_database(f"{name}_{uuid.uuid4().hex[:10]}".lower())


def stored(db: Path | str, sql: str) -> list[tuple]:
    """The rows of ``sql`` (no parameters) on a stopped server's DuckDB file, read-only, or on
    a PostgreSQL database (which may still be serving)."""
    if is_url(db):
        import psycopg

        with psycopg.connect(str(db)) as con:
            return [tuple(row) for row in con.execute(sql).fetchall()]
    import duckdb

    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def postgres_cluster() -> PostgresCluster:
    """The PostgreSQL cluster of this test process (started on first use), e.g. to restart it."""
    fresh_db(Path("."), "probe", backend="postgres")
    assert _cluster is not None
    return _cluster


def skip_without_postgres() -> None:
    """Skip the calling test when the run has no PostgreSQL (COLLAB_SKIP_POSTGRES=1)."""
    import pytest

    if os.environ.get(SKIP_ENV) == "1":
        pytest.skip(f"{SKIP_ENV}=1: the PostgreSQL tests are skipped")


def create_workspace(db: Path | str) -> dict:
    """`collab workspace create --db DB --json` -> {"apiKey", "authToken"} (exactly those keys)."""
    proc = subprocess.run(
        [collab_bin(), "workspace", "create", "--db", str(db), "--json"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, f"workspace create failed: {proc.stderr}"
    creds = json.loads(proc.stdout)
    assert set(creds) == {"apiKey", "authToken"}, proc.stdout
    assert all(isinstance(v, str) and v for v in creds.values())
    return creds


# A pooled connection idle for KEEPALIVE_S is not reused: a request sent just as the server's
# keep-alive (5 s) closes the connection would be reset (as toolkit.client's HttpClient does).
LIMITS = httpx.Limits(max_connections=200, max_keepalive_connections=100, keepalive_expiry=KEEPALIVE_S)


def http_client(**options) -> httpx.Client:
    """``httpx.Client(**options)`` with the tests' pool :data:`LIMITS`."""
    return httpx.Client(limits=LIMITS, **options)


class Server:
    """`collab serve --db DB --port P` as a subprocess; its output goes to a log file.

    The per-workspace rate and in-flight limits are off (``--rate-limit 0 --max-in-flight 0``):
    the tests send as fast and as many at once as they can from one workspace (50 racing
    requests, say). A test of the limits sets them in ``extra_args`` (the last of a repeated
    flag wins).

    A killed process's agent runs and deliveries are taken over when its lease runs out
    (``--lease-seconds``): 10 s here, not the server's 30 s, so that a test which kills a
    process on PostgreSQL does not then wait half a minute; a test of the lease sets its own."""

    def __init__(
        self, db: Path | str, log_path: Path, extra_args: tuple[str, ...] = (), processes: int | None = None
    ) -> None:
        self.db = db if is_url(db) else Path(db)  # a DuckDB file, or a PostgreSQL URL
        self.log_path = Path(log_path)
        self.extra_args = tuple(extra_args)  # more `collab serve` options (e.g. webhook settings)
        # Processes serving the database; a PostgreSQL database may have several (COLLAB_TEST_BACKEND=postgres2).
        self.processes = processes if processes is not None else (PROCESSES if is_url(db) else 1)
        self.procs: list[subprocess.Popen] = []
        self.ports: list[int] = []
        self._log = None

    @property
    def proc(self) -> subprocess.Popen | None:
        """The first process (the only one, unless several serve a PostgreSQL database)."""
        return self.procs[0] if self.procs else None

    @property
    def port(self) -> int | None:
        return self.ports[0] if self.ports else None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> Server:
        self._log = open(self.log_path, "ab")
        self.procs, self.ports = [], []
        for _ in range(self.processes):
            self._start_one(timeout)
        return self

    def _start_one(self, timeout: float) -> None:
        for _ in range(3):  # a free port can be taken between the probe and the bind: retry
            port = free_port()
            proc = subprocess.Popen(
                [
                    collab_bin(),
                    "serve",
                    "--db",
                    str(self.db),
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
                    "--lease-seconds",
                    "10",
                    *self.extra_args,
                ],
                stdout=self._log,
                stderr=subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
            if wait_until_ready(proc, f"http://127.0.0.1:{port}/openapi.json", timeout):
                self.procs.append(proc)
                self.ports.append(port)
                return
            _end(proc)
        self._reap()
        raise AssertionError(f"the server did not start; log:\n{self.log()}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def client(self, creds: dict | None = None, timeout: float = 60) -> httpx.Client:
        """A client of the server; with several processes, each request goes to the next one in turn."""
        headers = {"content-type": "application/json"}
        if creds is not None:
            headers.update({"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]})
        transport = RoundRobin(self.ports, LIMITS) if len(self.ports) > 1 else None
        return httpx.Client(
            base_url=self.base_url, headers=headers, timeout=timeout, limits=LIMITS, transport=transport
        )

    def kill9(self) -> None:
        """SIGKILL every process: no shutdown hook runs, the database is not closed cleanly."""
        for proc in self.procs:
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGKILL)
        self._reap()

    def kill9_one(self, index: int) -> None:
        """SIGKILL one of several processes; the others keep serving (``restart_one`` starts it again)."""
        proc = self.procs[index]
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()

    def restart_one(self, index: int, timeout: float = 60.0) -> None:
        """Start the process ``index`` again, on a new port, after ``kill9_one``."""
        self._start_one(timeout)
        self.procs[index], self.ports[index] = self.procs.pop(), self.ports.pop()

    def terminate(self, timeout: float = 60.0) -> int | None:
        """SIGTERM, then wait for the processes to end by themselves: the first one's exit
        status (None when it was still running after ``timeout`` seconds, and then killed)."""
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        codes = []
        for proc in self.procs:
            try:
                codes.append(proc.wait(timeout=timeout))
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
                codes.append(None)
        self._reap()
        return codes[0] if codes else None

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.kill(proc.pid, signal.SIGKILL)
        self._reap()

    def _reap(self) -> None:
        for proc in self.procs:
            _end(proc)
        if self._log is not None:
            self._log.close()
            self._log = None


def _end(proc: subprocess.Popen) -> None:
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()


class RoundRobin(httpx.BaseTransport):
    """Sends each request to the next server process in turn (a load balancer in miniature),
    so that nothing passes that depends on landing on the process that made or cached a thing.
    As a load balancer does, it sends a request whose connection is refused (a process that
    died) to the next process; ``ports`` is the server's own list, so a restarted process's new
    port is used."""

    def __init__(self, ports: list[int], limits: httpx.Limits) -> None:
        self.ports = ports
        self.transport = httpx.HTTPTransport(limits=limits)
        self.turn = itertools.count()
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        with self.lock:
            first = next(self.turn)
        for i in range(len(self.ports)):
            request.url = request.url.copy_with(port=self.ports[(first + i) % len(self.ports)])
            try:
                return self.transport.handle_request(request)
            except httpx.ConnectError:
                if i == len(self.ports) - 1:
                    raise
        raise AssertionError("no server process to send to")

    def close(self) -> None:
        self.transport.close()


def serve_fresh(
    root: Path, name: str = "server", extra_args: tuple[str, ...] = (), backend: str | None = None
) -> Server:
    """`collab serve` on a new database (``fresh_db``, of ``backend`` when given) with two
    workspaces, created first (DuckDB admits one writing process per file); their credentials
    are ``creds_a``, ``creds_b``."""
    db = fresh_db(root, name, backend)
    creds_a, creds_b = create_workspace(db), create_workspace(db)
    srv = Server(db, Path(root) / f"{name}.log", extra_args).start()
    srv.creds_a, srv.creds_b = creds_a, creds_b
    return srv


class Api:
    """POST {"data": …} to the server; check the envelope of every answer, never accept a 5xx."""

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def post(self, path: str, data=None, *, body=None, **kwargs) -> httpx.Response:
        if body is None:
            body = {"data": data}
        if isinstance(body, (bytes, str)):
            resp = self.client.post(path, content=body, **kwargs)
        else:
            resp = self.client.post(path, json=body, **kwargs)
        assert resp.status_code < 500, f"{path} answered {resp.status_code}: {resp.text}"
        return resp

    def ok(self, path: str, data=None) -> dict:
        resp = self.post(path, data)
        assert resp.status_code == 200, f"{path}: {resp.status_code} {resp.text}"
        body = resp.json()
        assert list(body) == ["result"], body
        return body["result"]

    def err(
        self, path: str, data=None, code: str = "INVALID_ARGUMENT", *, body=None, http: int | None = None, **kwargs
    ) -> str:
        """Expect an error body with ``code``; returns its message."""
        resp = self.post(path, data, body=body, **kwargs)
        return expect_error(resp, code, http)

    # ------------------------------------------------------------ workflow conveniences

    def create(self, definition: dict) -> dict:
        return self.ok(DEF_CREATE, definition)

    def dispatch(self, definition_id: str, **extra) -> str:
        return self.ok(DISPATCH, {"definitionId": definition_id, **extra})["executionId"]

    def execution(self, execution_id: str) -> dict:
        return self.ok(EXEC_GET, {"executionId": execution_id})

    def step(self, execution_id: str, node_id: str, index: int = -1) -> dict:
        steps = [s for s in self.execution(execution_id)["steps"] if s["nodeId"] == node_id]
        assert steps, f"no step of node {node_id} in {execution_id}"
        return steps[index]

    def events(self, execution_id: str, since: int = 0) -> list[dict]:
        """Every external event, paging with nextCursor until hasMore is false."""
        out = []
        while True:
            page = self.ok(EVENTS, {"executionId": execution_id, "sinceSeq": since, "pageSize": 500})
            out.extend(page["events"])
            since = page["nextCursor"]
            if not page["hasMore"]:
                return out


def expect_error(resp: httpx.Response, code: str, http: int | None = None) -> str:
    assert resp.status_code < 500, f"answered {resp.status_code}: {resp.text}"
    body = resp.json()
    assert list(body) == ["error"], f"{resp.status_code}: {body}"
    assert set(body["error"]) == {"message", "status"}, body
    assert body["error"]["status"] == code, f"{resp.status_code}: {body}"
    assert resp.status_code == (http or HTTP_STATUS[code]), f"{resp.status_code}: {body}"
    message = body["error"]["message"]
    assert isinstance(message, str) and message
    return message


# ---------------------------------------------------------------- definition bodies


def human_definition(definition_id: str, reviewers=None, *, sla_ms: int | None = None, **extra) -> dict:
    """review (human) --approve--> approved (agent); --reject--> rejected (agent)."""
    reviewers = (
        reviewers
        if reviewers is not None
        else [{"userId": "ann", "mandatory": True}, {"userId": "bob", "mandatory": False}]
    )
    review = {"nodeId": "review", "type": "human", "config": {"reviewers": reviewers}}
    if sla_ms is not None:
        review["slaMs"] = sla_ms
    edges = [
        {"from": "review", "to": "approved", "on": "approve"},
        {"from": "review", "to": "rejected", "on": "reject"},
    ]
    if sla_ms is not None:
        edges.append({"from": "review", "to": "escalate", "on": "always"})
    nodes = [
        review,
        {"nodeId": "approved", "type": "agent", "config": {"agentId": "publisher"}},
        {"nodeId": "rejected", "type": "agent", "config": {"agentId": "archiver"}},
    ]
    if sla_ms is not None:
        nodes.append({"nodeId": "escalate", "type": "agent", "config": {"agentId": "pager"}})
    return {"definitionId": definition_id, "name": f"Review {definition_id}", "nodes": nodes, "edges": edges, **extra}


def external_agent_definition(definition_id: str) -> dict:
    """work (agent, external: stays running) --always--> after (agent)."""
    return {
        "definitionId": definition_id,
        "name": "External work",
        "nodes": [
            {"nodeId": "work", "type": "agent", "config": {"agentId": "outside", "external": True}},
            {"nodeId": "after", "type": "agent", "config": {"agentId": "follow-up"}},
        ],
        "edges": [{"from": "work", "to": "after", "on": "always"}],
    }


def blocking_agent_definition(definition_id: str, policy="allResolved", expected: int = 1) -> dict:
    """gate (blocking agent) --approve--> pass; --reject--> stop."""
    config = {"agentId": "classifier", "blocking": True, "resolutionPolicy": policy, "expectedResolutions": expected}
    return {
        "definitionId": definition_id,
        "name": "Blocking gate",
        "nodes": [
            {"nodeId": "gate", "type": "agent", "config": config},
            {"nodeId": "pass", "type": "agent", "config": {"agentId": "publisher"}},
            {"nodeId": "stop", "type": "agent", "config": {"agentId": "archiver"}},
        ],
        "edges": [{"from": "gate", "to": "pass", "on": "approve"}, {"from": "gate", "to": "stop", "on": "reject"}],
    }


def wait_for(predicate, timeout: float = 10.0, interval: float = 0.05, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)
