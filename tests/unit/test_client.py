"""toolkit.client: LocalClient (services in process) and HttpClient (a real uvicorn server on
127.0.0.1, in a background thread) give the same results and the same errors for the same
calls — modulo ids and timestamps, which the scenario normalises."""

from __future__ import annotations

import doctest
import re
import socket
import threading
import time

import pytest
import uvicorn

import toolkit.client
from server import Settings, create_app
from toolkit import examples
from toolkit.client import OPERATIONS, HttpClient, LocalClient, WorkflowClient
from toolkit.errors import ApiError, ErrorCode
from toolkit.services.runtime import SystemClock
from toolkit.services.workspaces import create_workspace
from toolkit.store import Store

REVIEWERS = {"legal-review": "alice@legal", "brand-review": "bob@brand"}
WORKSPACES = 12  # one per HTTP test; created before the server starts


# ---------------------------------------------------------------------------- fixtures


class _Server:
    """uvicorn in a background thread on a pre-bound socket (a free port on 127.0.0.1)."""

    def __init__(self, app):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    def __enter__(self):
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc):
        self.server.should_exit = True
        self.thread.join(timeout=20)
        self.sock.close()


@pytest.fixture(scope="module")
def http_server(tmp_path_factory):
    db = tmp_path_factory.mktemp("client") / "x.duckdb"
    with Store(db) as store:  # closed before the app opens the file
        credentials = [create_workspace(store, f"test-{i}", now_ms=SystemClock().now()) for i in range(WORKSPACES)]
    with _Server(create_app(Settings(db=db))) as server:
        server.credentials = credentials
        yield server


@pytest.fixture
def http_client(http_server):
    assert http_server.credentials, f"more than {WORKSPACES} HTTP tests: raise WORKSPACES"
    creds = http_server.credentials.pop()
    with HttpClient(http_server.url, creds.api_key, creds.auth_token) as client:
        yield client


@pytest.fixture
def local_client():
    with LocalClient.open() as client:
        yield client


@pytest.fixture(params=["local", "http"])
def client(request) -> WorkflowClient:
    return request.getfixturevalue(f"{request.param}_client")


# ---------------------------------------------------------------------------- helpers

# Execution, resume-key, workspace and scope ids, and the "_<ms>_<rand6>" part of step ids.
_IDS = re.compile(r"ex_[0-9a-f]{20}|rk_[0-9a-f]{16}|ws_[0-9a-f]{16}|ns_[0-9a-f]{24}|_\d{13}_[0-9a-f]{6}")


class Normaliser:
    """Replaces generated ids by ``<n>`` in order of first appearance and timestamps by ``<ts>``,
    so two runs of the same calls compare equal exactly when they differ only in those."""

    def __init__(self):
        self.seen: dict[str, str] = {}

    def _id(self, match: re.Match) -> str:
        return self.seen.setdefault(match.group(0), f"<{len(self.seen)}>")

    def __call__(self, value, key: str | None = None):
        if isinstance(value, dict):
            return {k: self(v, k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self(v) for v in value)
        if (
            isinstance(value, int)
            and not isinstance(value, bool)
            and key
            and (key.endswith("At") or key == "timestamp")
        ):
            return "<ts>"
        if isinstance(value, str):
            return _IDS.sub(self._id, value)
        return value


def _waiting(client: WorkflowClient, execution_id: str) -> list[dict]:
    return [s for s in client.get_execution(execution_id)["steps"] if s["status"] == "waiting"]


def scenario(client: WorkflowClient) -> list:
    """Create the parallel-review example, dispatch, approve both reviews, read the events."""
    norm = Normaliser()
    out = []
    created = client.create_definition(examples.load("parallel-review"))
    out.append(("create", created))
    out.append(("get", client.get_definition("parallel-review")))
    out.append(("list", client.list_definitions(tags=["benchmark"])))
    run = client.dispatch("parallel-review", idempotency_key="k-1", trigger_context={"campaign": 42})
    out.append(("dispatch", run))
    execution_id = run["executionId"]
    out.append(("dedup", client.dispatch({"definitionId": "parallel-review", "idempotencyKey": "k-1"})))
    waiting = _waiting(client, execution_id)
    out.append(("waiting", waiting))
    for step in sorted(waiting, key=lambda s: s["nodeId"], reverse=True):  # legal first, then brand
        reviewer = REVIEWERS[step["nodeId"]]
        out.append(
            (
                "decide",
                client.record_reviewer_decision(execution_id, step["stepId"], reviewer, "approve", reason="looks good"),
            )
        )
    out.append(("execution", client.get_execution(execution_id)))
    events = client.get_events(execution_id)
    out.append(("events", events))
    out.append(("page", client.get_events(execution_id, since_seq=0, page_size=3)))
    out.append(("iter", list(client.iter_events(execution_id, page_size=2))))
    out.append(("after", client.get_events({"executionId": execution_id, "sinceSeq": events["nextCursor"]})))
    out.append(("executions", client.list_executions(definition_id="parallel-review", status="completed")))
    return norm(out)


def errors(client: WorkflowClient) -> list[tuple[str, str]]:
    """Calls that must fail, and how: (code, normalised message) of each."""
    norm = Normaliser()
    client.create_definition(examples.load("parallel-review"))
    run = client.dispatch("parallel-review")
    execution_id = run["executionId"]
    legal = next(s for s in _waiting(client, execution_id) if s["nodeId"] == "legal-review")
    calls = [
        lambda: client.create_definition(examples.load("parallel-review")),  # ALREADY_EXISTS
        lambda: client.get_definition("no-such-definition"),  # NOT_FOUND
        lambda: client.get_execution("ex_00000000000000000000"),  # NOT_FOUND
        lambda: client.dispatch("parallel-review", bogus_field=1),  # INVALID_ARGUMENT
        lambda: client.get_events(execution_id, page_size=501),  # INVALID_ARGUMENT
        lambda: client.record_reviewer_decision(execution_id, legal["stepId"], "alice@legal", "maybe"),
        lambda: client.resolve_step(execution_id, legal["stepId"], "reviewer-approve", "mallory@evil"),
        lambda: client.update_definition({**examples.load("parallel-review"), "ifVersion": 7}),  # stale version
        lambda: client.create_definition(
            {**examples.load("parallel-review"), "definitionId": "bad-one", "edges": []}
        ),  # lint error
        lambda: client.delete_definition("parallel-review"),  # running execution
        lambda: client.record_agent_resolution(execution_id, legal["stepId"], "r-1", "success"),  # not an agent
        lambda: client.resolve_step(execution_id, legal["stepId"], "reviewer-approve", "alice@legal"),  # fine
        lambda: client.resolve_step(execution_id, legal["stepId"], "force-reject", "ops"),  # now terminal
        lambda: client.cancel_step(execution_id, legal["stepId"], "ops"),  # terminal
        lambda: client.cancel_execution(execution_id, "test"),  # fine
        lambda: client.cancel_execution(execution_id),  # terminal
    ]
    out = []
    for call in calls:
        try:
            result = call()
        except ApiError as exc:
            out.append((exc.code.value, norm(exc.message)))
        else:
            out.append(("ok", norm(result)))
    return out


# ---------------------------------------------------------------------------- the same on both


def test_scenario_is_identical_in_process_and_over_http(local_client, http_client):
    local, remote = scenario(local_client), scenario(http_client)
    assert local == remote
    results = dict(local)
    assert results["dispatch"]["deduplicated"] is False and results["dedup"]["deduplicated"] is True
    assert {s["nodeId"] for s in results["waiting"]} == set(REVIEWERS)
    assert [d["recorded"] for k, d in local if k == "decide"] == [True, True]
    assert results["execution"]["status"] == "completed"
    types = [e["type"] for e in results["events"]["events"]]
    assert types[0] == "execution.dispatched" and types[-1] == "execution.completed"
    assert types.count("step.awaiting-approval") == 2 and "group.quorum-met" in types
    assert results["iter"] == results["events"]["events"]
    assert results["page"]["hasMore"] is True and len(results["page"]["events"]) == 3
    assert results["after"]["events"] == [] and results["after"]["hasMore"] is False
    assert [e["executionId"] for e in results["executions"]["items"]] == [results["dispatch"]["executionId"]]


def test_errors_are_identical_in_process_and_over_http(local_client, http_client):
    local, remote = errors(local_client), errors(http_client)
    assert local == remote
    assert [code for code, _ in local] == [
        "ALREADY_EXISTS",
        "NOT_FOUND",
        "NOT_FOUND",
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
        "INVALID_ARGUMENT",
        "PERMISSION_DENIED",
        "FAILED_PRECONDITION",
        "INVALID_ARGUMENT",
        "FAILED_PRECONDITION",
        "FAILED_PRECONDITION",
        "ok",
        "FAILED_PRECONDITION",
        "FAILED_PRECONDITION",
        "ok",
        "FAILED_PRECONDITION",
    ]
    assert local[3][1] == "data.bogusField: unknown field"
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" in local[8][1]


# ---------------------------------------------------------------------------- arguments


def test_keyword_dict_and_camel_case_forms_send_the_same_request(client):
    client.create_definition(**examples.load("parallel-review"))  # a body as keyword arguments
    a = client.dispatch("parallel-review", correlation_id="c-1", idempotency_key="same")
    b = client.dispatch({"definitionId": "parallel-review", "correlationId": "c-1", "idempotencyKey": "same"})
    c = client.dispatch("parallel-review", correlationId="c-1", idempotencyKey="same")
    d = client.call("/v2/workflow/executions/dispatch", {"definition_id": "parallel-review"}, idempotency_key="same")
    assert a["executionId"] == b["executionId"] == c["executionId"] == d["executionId"]
    assert (a["deduplicated"], b["deduplicated"], c["deduplicated"]) == (False, True, True)
    assert a["correlationId"] == "c-1"
    by_kw = client.get_events(execution_id=a["executionId"], since_seq=1, page_size=1)
    by_dict = client.get_events({"executionId": a["executionId"], "sinceSeq": 1, "pageSize": 1})
    assert by_kw == by_dict and by_kw["events"][0]["seq"] > 1 and by_kw["hasMore"] is True


def test_update_and_delete_definition(client):
    body = examples.load("parallel-review")
    assert client.create_definition(body)["version"] == 1
    updated = client.update_definition({**body, "name": "Renamed", "ifVersion": 1})
    assert (updated["version"], updated["name"]) == (2, "Renamed")
    assert client.get_definition(definition_id="parallel-review")["version"] == 2
    assert client.delete_definition("parallel-review") == {"deleted": True}
    assert client.list_definitions()["items"] == []
    assert [d["status"] for d in client.list_definitions(status="tombstoned")["items"]] == ["tombstoned"]
    with pytest.raises(ApiError) as caught:
        client.dispatch("parallel-review")
    assert caught.value.code is ErrorCode.FAILED_PRECONDITION


def test_resolve_cancel_and_agent_resolution(client):
    client.create_definition(examples.load("parallel-review"))
    run = client.dispatch("parallel-review")
    steps = {s["nodeId"]: s["stepId"] for s in _waiting(client, run["executionId"])}
    resolved = client.resolve_step(run["executionId"], steps["legal-review"], "force-approve", "ops@x", reason="urgent")
    assert resolved == {
        "resolved": True,
        "executionId": run["executionId"],
        "stepId": steps["legal-review"],
        "action": "force-approve",
    }
    assert client.cancel_step(run["executionId"], steps["brand-review"], actor_id="ops@x")["cancelled"] is True
    state = client.get_execution(run["executionId"])
    assert {s["nodeId"]: s["status"] for s in state["steps"]}["brand-review"] == "cancelled"

    client.create_definition(examples.load("blocking-agent-quorum"))
    run = client.dispatch("blocking-agent-quorum")
    blocking = _waiting(client, run["executionId"])
    assert blocking, "the blocking agent parks in waiting"
    recorded = client.record_agent_resolution(
        run["executionId"], blocking[0]["stepId"], "res-1", "success", output={"decision": "approve"}
    )
    assert recorded["recorded"] is True and "aggregatorStatus" in recorded
    cancelled = client.cancel_execution(run["executionId"], reason="done testing")
    assert cancelled == {"cancelled": True, "executionId": run["executionId"]}
    assert client.get_execution(run["executionId"])["status"] == "cancelled"


# ---------------------------------------------------------------------------- transport details


def test_results_are_plain_json_copies(local_client):
    """Mutating a result never reaches the services' caches (definition bodies are cached)."""
    view = local_client.create_definition(examples.load("parallel-review"))
    view["nodes"].clear()
    assert len(local_client.get_definition("parallel-review")["nodes"]) == 4


def test_http_client_reports_status_and_unauthenticated(http_server, http_client):
    with pytest.raises(ApiError) as caught:
        http_client.get_execution("ex_missing")
    assert (caught.value.code, caught.value.http_status) == (ErrorCode.NOT_FOUND, 404)
    with HttpClient(http_server.url, "ak_wrong", "at_wrong", timeout=5) as stranger:
        with pytest.raises(ApiError) as caught:
            stranger.list_definitions()
    assert (caught.value.code, caught.value.http_status) == (ErrorCode.UNAUTHENTICATED, 401)


def test_http_client_drops_an_idle_connection_before_the_server_closes_it(http_server, http_client):
    """A kept-alive connection reused just as the server's keep-alive (5 s) closes it would be
    reset; the client opens a new one once its own shorter expiry has passed."""
    live = http_server.server.server_state.connections  # uvicorn's open connections
    deadline = time.monotonic() + 10
    while live and time.monotonic() < deadline:  # earlier tests' clients are closed, their connections ending
        time.sleep(0.05)
    http_client.list_definitions()
    (first,) = live
    http_client.list_definitions()
    assert live == {first}  # reused at once
    time.sleep(toolkit.client.KEEPALIVE_S + 0.5)
    assert live == {first}  # the server keeps it open, for 5 s
    http_client.list_definitions()
    assert first not in live and len(live) == 1


def test_http_client_unreachable_server_is_unavailable():
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with HttpClient(f"http://127.0.0.1:{port}", "ak", "at", timeout=2) as client:
        with pytest.raises(ApiError) as caught:
            client.list_definitions()
    assert caught.value.code is ErrorCode.UNAVAILABLE


def test_local_client_open_reuses_an_existing_workspace(tmp_path):
    db = tmp_path / "nb.duckdb"
    with LocalClient.open(db) as first:
        first.create_definition(examples.load("parallel-review"))
        creds = first.credentials
    with LocalClient.open(db, api_key=creds.api_key, auth_token=creds.auth_token) as again:
        assert again.credentials is None
        assert [d["definitionId"] for d in again.list_definitions()["items"]] == ["parallel-review"]
    with pytest.raises(ApiError) as caught:
        LocalClient.open(db, api_key="ak_wrong", auth_token="at_wrong")
    assert caught.value.code is ErrorCode.UNAUTHENTICATED


def test_call_rejects_unknown_operations(local_client):
    with pytest.raises(ValueError, match="no operation 'explode'"):
        local_client.call("explode", {})


# ---------------------------------------------------------------------------- one table


def test_one_method_per_operation():
    names = [op.name for op in OPERATIONS]
    assert len(set(names)) == len(names) == 44
    public = {n for n in dir(WorkflowClient) if not n.startswith("_")} - {"call", "iter_events"}
    assert public == set(names)
    for cls in (LocalClient, HttpClient):
        assert not {n for n in vars(cls) if n in public}, f"{cls.__name__} must not override the shared methods"


def test_docstring_examples():
    result = doctest.testmod(toolkit.client, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
