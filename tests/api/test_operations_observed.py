"""Request logs, request ids and Prometheus metrics, seen from outside: a real `collab serve`
(metrics switched on by COLLAB_METRICS=1, logs at debug level) and a real HTTPS webhook
receiver; the tests read the server's log file and scrape GET /metrics over HTTP."""

from __future__ import annotations

import io
import json
import logging
import os
import re

import httpx
import pytest
from processes import free_port
from prometheus_client.parser import text_string_to_metric_families

from api.inprocess import InProcess
from api.receiver import Receiver
from api.support import (
    BACKEND,
    DECIDE,
    DEF_CREATE,
    DISPATCH,
    EXEC_GET,
    Api,
    create_workspace,
    http_client,
    human_definition,
    serve_fresh,
    uid,
    wait_for,
)
from server import Settings
from toolkit.engine import DefaultAgentRunner
from toolkit.logs import JsonFormatter

SECRET = "whsec-observed-5a4b3c2d1e"
FAMILIES = (
    "collab_http_requests",
    "collab_http_request_duration_seconds",
    "collab_executions",
    "collab_steps_waiting",
    "collab_timers_due",
    "collab_outbox_pending",
    "collab_outbox_oldest_pending_seconds",
    "collab_deliveries",
    "collab_db_statement_seconds",
)
# DuckDB's single writer has a queue; PostgreSQL commits each job on a connection of its own.
if BACKEND == "duckdb":
    FAMILIES += ("collab_writer_queue_depth",)
# Every label value a series may carry: route templates, status codes and small vocabularies.
ROUTE = re.compile(r"^(/v2/[A-Za-z_/]+|/openapi\.json|/healthz|/readyz|/metrics|unmatched)$")
LABEL_VALUES = {
    "status": re.compile(r"^(\d{3}|running|completed|failed|cancelled)$"),
    "route": ROUTE,
    "result": re.compile(r"^(delivered|failed|refused)$"),
    "kind": re.compile(r"^(read|write|commit)$"),
    "le": re.compile(r"^[0-9.e+-]+|\+Inf$"),
}


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    rec = Receiver(tmp_path_factory.mktemp("receiver")).start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def observed(tmp_path_factory, receiver):
    previous = os.environ.get("COLLAB_METRICS")
    os.environ["COLLAB_METRICS"] = "1"  # the environment variable of --metrics
    try:
        srv = serve_fresh(
            tmp_path_factory.mktemp("observed"),
            "observed",
            (
                "--webhook-allow-loopback",
                "--webhook-ca-bundle",
                str(receiver.ca_path),
                "--webhook-retry-delays",
                "100,100,100,100,100",
                "--log-level",
                "debug",
                "--webhook-allow-port",
                str(receiver.port),
            ),
        )
    finally:
        if previous is None:
            del os.environ["COLLAB_METRICS"]
        else:
            os.environ["COLLAB_METRICS"] = previous
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def api(observed):
    with observed.client(observed.creds_a) as client:
        yield Api(client)


@pytest.fixture(autouse=True)
def _answer_ok(receiver):
    receiver.respond = lambda path, attempt: 200


def log_records(server) -> list[dict]:
    """Every log line of the server as JSON (the one startup banner is plain `print` output)."""
    records = []
    for line in server.log().splitlines():
        if line.startswith("Serving the v2 API on "):
            continue
        records.append(json.loads(line))  # any other line that is not one JSON object fails here
    return records


def logged(server, **match) -> list[dict]:
    return [r for r in log_records(server) if all(r.get(k) == v for k, v in match.items())]


def scrape(server) -> dict[tuple, float]:
    """{(sample name, sorted labels): value} from GET /metrics. With several processes, as a
    Prometheus sum over instances: counters and histograms added up (each process counts
    what it served), gauges taken from the first (they are read from the shared database)."""
    out: dict[tuple, float] = {}
    for port in server.ports:
        text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                key = (sample.name, tuple(sorted(sample.labels.items())))
                summed = family.type in ("counter", "histogram") and not sample.name.endswith("_created")
                if key not in out:
                    out[key] = sample.value
                elif summed:
                    out[key] += sample.value
    return out


def value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


# ---------------------------------------------------------------- request ids


def test_request_id_is_taken_when_safe_else_generated_and_always_echoed(observed, api):
    headers = api.client.headers
    given = api.client.post(
        DEF_CREATE.replace("create", "list"), json={"data": {}}, headers={**headers, "x-request-id": "trace-7f:01.ab"}
    )
    assert given.headers["x-request-id"] == "trace-7f:01.ab"
    for bad in ("x" * 129, "has space", "semi;colon", 'quote"d'):
        answer = api.client.post(
            "/v2/workflow/definitions/list", json={"data": {}}, headers={**headers, "x-request-id": bad}
        )
        assert re.fullmatch(r"[0-9a-f]{32}", answer.headers["x-request-id"]), bad
    first, second = (api.client.post("/v2/workflow/definitions/list", json={"data": {}}) for _ in range(2))
    assert first.headers["x-request-id"] != second.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", first.headers["x-request-id"])
    # errors and paths outside the API get one too
    assert httpx.get(f"{observed.base_url}/nowhere").headers["x-request-id"]
    assert api.client.post("/v2/workflow/definitions/get", json={"data": {}}).status_code == 400


def test_one_json_line_per_request_with_route_template_status_duration_and_hashed_workspace(observed, api):
    api.client.post("/v2/workflow/definitions/list", json={"data": {}}, headers={"x-request-id": "line-a"})
    with observed.client(observed.creds_b) as other:
        other.post("/v2/workflow/definitions/list", json={"data": {}}, headers={"x-request-id": "line-b"})
    httpx.post(f"{observed.base_url}/v2/no/such/SECRETPATH?q=1", json={}, headers={"x-request-id": "line-c"})
    wait_for(lambda: logged(observed, requestId="line-c"), what="the request log lines")
    (a,) = logged(observed, requestId="line-a")
    (b,) = logged(observed, requestId="line-b")
    (c,) = logged(observed, requestId="line-c")
    assert a["logger"] == "collab.access" and a["level"] == "info"
    assert {k: a[k] for k in ("method", "route", "status")} == {
        "method": "POST",
        "route": "/v2/workflow/definitions/list",
        "status": 200,
    }
    assert isinstance(a["durationMs"], (int, float)) and a["durationMs"] >= 0
    assert re.fullmatch(r"[0-9a-f]{12}", a["workspace"]) and re.fullmatch(r"[0-9a-f]{12}", b["workspace"])
    assert a["workspace"] != b["workspace"]
    assert not (set(a["workspace"]) - set("0123456789abcdef"))
    assert c["route"] == "unmatched" and c["status"] == 404 and c["workspace"] is None
    assert "SECRETPATH" not in json.dumps(c)  # the raw path is never logged, only the template


def test_the_webhook_attempt_log_line_carries_the_request_id_of_the_dispatch(observed, api, receiver):
    definition_id = uid("logged")
    api.ok(DEF_CREATE, human_definition(definition_id))
    answer = api.client.post(
        DISPATCH,
        json={"data": {"definitionId": definition_id, "webhookUrl": receiver.url("/logged"), "webhookSecret": SECRET}},
        headers={"x-request-id": "dispatch-hook-1"},
    )
    assert answer.status_code == 200, answer.text
    wait_for(lambda: receiver.received("/logged"), timeout=30, what="the first delivery")
    wait_for(
        lambda: logged(observed, logger="collab.webhooks", requestId="dispatch-hook-1"),
        timeout=30,
        what="the delivery attempt's log line",
    )
    attempts = logged(observed, logger="collab.webhooks", requestId="dispatch-hook-1")
    assert {a["result"] for a in attempts} == {"delivered"}
    assert {a["eventId"] for a in attempts} <= {r.headers["x-service-event-id"] for r in receiver.received("/logged")}


# ---------------------------------------------------------------- metrics


def test_metrics_are_off_unless_asked_for(server):
    """The shared API test server runs without --metrics."""
    assert httpx.get(f"{server.base_url}/metrics").status_code == 404


def test_the_metric_families_appear_and_move_with_requests(observed, api, receiver):
    before = scrape(observed)
    names = {name for name, _ in before}
    for family in FAMILIES:
        assert any(n == family or n.startswith(family + "_") for n in names), family
    definition_id = uid("metered")
    api.ok(DEF_CREATE, human_definition(definition_id))
    api.dispatch(definition_id)  # one review step waiting
    receiver.respond = lambda path, attempt: None if path == "/held" else 500
    held = api.dispatch(definition_id, webhookUrl=receiver.url("/held"), webhookSecret=SECRET)
    api.dispatch(definition_id, webhookUrl=receiver.url("/failing"), webhookSecret=SECRET)
    wait_for(
        lambda: (
            receiver.received("/held")
            and value(scrape(observed), "collab_deliveries_total", result="failed")
            > value(before, "collab_deliveries_total", result="failed")
        ),
        timeout=30,
        what="a held and a failed delivery",
    )
    after = scrape(observed)
    receiver.release()
    dispatch = "/v2/workflow/executions/dispatch"
    assert (
        value(after, "collab_http_requests_total", route=dispatch, status="200")
        - value(before, "collab_http_requests_total", route=dispatch, status="200")
        == 3
    )
    assert (
        value(after, "collab_http_request_duration_seconds_count", route=dispatch)
        - value(before, "collab_http_request_duration_seconds_count", route=dispatch)
        == 3
    )
    assert (
        value(after, "collab_executions", status="running") - value(before, "collab_executions", status="running") == 3
    )
    assert value(after, "collab_steps_waiting") - value(before, "collab_steps_waiting") == 3
    assert value(after, "collab_outbox_pending") >= 1  # the held one (and the failing one's retries)
    assert value(after, "collab_outbox_oldest_pending_seconds") > 0
    for kind in ("read", "write", "commit"):
        assert value(after, "collab_db_statement_seconds_count", kind=kind) > value(
            before, "collab_db_statement_seconds_count", kind=kind
        ), kind
    assert ("collab_timers_due", ()) in after
    assert (("collab_writer_queue_depth", ()) in after) == (BACKEND == "duckdb")
    # a decision finishes the held execution's review: one step fewer waiting
    step = next(s for s in api.execution(held)["steps"] if s["status"] == "waiting")
    api.ok(DECIDE, {"executionId": held, "stepId": step["stepId"], "reviewerId": "ann", "decision": "approve"})
    assert value(scrape(observed), "collab_steps_waiting") == value(after, "collab_steps_waiting") - 1
    assert api.execution(held)["status"] == "completed"


def test_no_label_carries_an_id_key_or_user_data(observed, api):
    api.client.post("/v2/workflow/executions/get", json={"data": {"executionId": "ex_labelcheck00000000"}})
    httpx.post(f"{observed.base_url}/v2/users/ann@example.com", json={})
    for (name, labels), _ in scrape(observed).items():
        if not name.startswith("collab_"):
            continue
        for key, val in labels:
            assert key in LABEL_VALUES and LABEL_VALUES[key].fullmatch(val), (name, key, val)


# ---------------------------------------------------------------- secrets never logged


def test_no_credential_token_or_webhook_secret_reaches_any_log_line(observed, api, receiver):
    """A broad set of calls — every endpoint family, a token, a webhook with its secret, bad
    credentials — then every log line is searched for every secret involved."""
    org, definition_id = uid("org"), uid("swept")
    api.ok(
        "/v2/users/add",
        {
            "organizationId": org,
            "createOrganization": True,
            "users": [{"userId": "ann", "name": "Ann", "email": "ann@example.com"}],
        },
    )
    api.ok("/v2/folders/add", {"organizationId": org, "folders": [{"folderId": "f"}]})
    api.ok("/v2/documents/add", {"organizationId": org, "documents": [{"documentId": "d"}]})
    api.ok(
        "/v2/auth/permissions/add",
        {"userId": "ann", "permissions": {"resources": [{"type": "organization", "id": org}]}},
    )
    token = api.ok(
        "/v2/auth/generate_token",
        {
            "userId": "ann",
            "userProperties": {"name": "Ann", "email": "ann@example.com"},
            "permissions": {"resources": [{"type": "organization", "id": org}]},
        },
    )
    jwt = token["data"]["token"]
    api.ok("/v2/users/get", {"organizationId": org})
    api.ok(
        "/v2/commentannotations/add",
        {
            "organizationId": org,
            "documentId": "d",
            "commentAnnotations": [
                {"annotationId": "c1", "commentData": [{"commentText": f"see {jwt[:10]}", "triggerActivities": True}]}
            ],
        },
    )
    api.ok("/v2/activities/get", {"organizationId": org})
    api.ok("/v2/agents/create", {"name": uid("agent"), "instructions": "Check it."})
    api.ok(DEF_CREATE, human_definition(definition_id))
    hooked = api.dispatch(definition_id, webhookUrl=receiver.url("/swept"), webhookSecret=SECRET)
    api.ok(EXEC_GET, {"executionId": hooked})
    api.ok("/v2/workflow/deliveries/list", {"executionId": hooked})
    refused = api.client.post(
        DISPATCH,
        json={"data": {"definitionId": definition_id, "webhookUrl": "http://x", "webhookSecret": SECRET + "-refused"}},
    )
    assert refused.status_code == 400
    wrong_key, wrong_token = "ak_" + "W" * 32, "at_" + "T" * 43
    for creds in (
        {"x-service-api-key": wrong_key, "x-service-auth-token": wrong_token},
        {"x-service-api-key": observed.creds_a["apiKey"], "x-service-auth-token": wrong_token},
        {"x-service-api-key": wrong_key},
        {"authorization": f"Bearer {jwt}"},
    ):
        answer = httpx.post(f"{observed.base_url}/v2/workflow/definitions/list", json={"data": {}}, headers=creds)
        assert answer.status_code == 401
    wait_for(
        lambda: receiver.received("/swept") and logged(observed, logger="collab.webhooks"),
        timeout=30,
        what="the swept execution's delivery",
    )
    text = observed.log()
    assert logged(observed, route="/v2/auth/generate_token") and logged(observed, route=DISPATCH)
    secrets = {
        "api key A": observed.creds_a["apiKey"],
        "auth token A": observed.creds_a["authToken"],
        "api key B": observed.creds_b["apiKey"],
        "auth token B": observed.creds_b["authToken"],
        "wrong key": wrong_key,
        "wrong token": wrong_token,
        "JWT": jwt,
        "JWT signature": jwt.rsplit(".", 1)[1],
        "webhook secret": SECRET,
    }
    for what, secret in secrets.items():
        assert secret not in text, f"the {what} appears in the server log"


# ---------------------------------------------------------------- background work in process


class ApprovingRunner(DefaultAgentRunner):
    """Not the default runner, so agent steps run on the background pool after the commit."""


def test_agent_runs_log_the_request_id_of_the_request_that_started_them(tmp_path):
    creds = create_workspace(tmp_path / "agents.duckdb")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    background = logging.getLogger("collab.background")
    background.addHandler(handler)
    previous = background.level
    background.setLevel(logging.INFO)
    definition = {
        "definitionId": "chained",
        "name": "Two agents in a row",
        "nodes": [
            {"nodeId": "first", "type": "agent", "config": {"agentId": "one"}},
            {"nodeId": "second", "type": "agent", "config": {"agentId": "two"}},
        ],
        "edges": [{"from": "first", "to": "second", "on": "always"}],
    }
    try:
        settings = Settings(db=tmp_path / "agents.duckdb", agent_runner=ApprovingRunner(), mirror_every_s=None)
        with InProcess(settings) as srv:
            headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
            with http_client(base_url=srv.url, headers=headers) as http:
                assert http.post(DEF_CREATE, json={"data": definition}).status_code == 200
                answer = http.post(
                    DISPATCH, json={"data": {"definitionId": "chained"}}, headers={"x-request-id": "agents-7"}
                )
                execution_id = answer.json()["result"]["executionId"]
                wait_for(
                    lambda: (
                        http.post(EXEC_GET, json={"data": {"executionId": execution_id}}).json()["result"]["status"]
                        == "completed"
                    ),
                    what="both agent runs",
                )
    finally:
        background.removeHandler(handler)
        background.setLevel(previous)
    runs = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["agentId"], r["result"], r["requestId"]) for r in runs] == [
        ("one", "completed", "agents-7"),
        ("two", "completed", "agents-7"),
    ]


def test_metrics_port_serves_them_apart_from_the_api(tmp_path):
    port = free_port()
    settings = Settings(db=tmp_path / "apart.duckdb", metrics_listen=("127.0.0.1", port), mirror_every_s=None)
    with InProcess(settings) as srv:
        assert httpx.get(f"{srv.url}/metrics").status_code == 404
        assert httpx.get(f"{srv.url}/healthz").status_code == 200
        text = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        assert 'collab_http_requests_total{route="/healthz",status="200"} 1.0' in text
        assert 'collab_http_requests_total{route="unmatched",status="404"} 1.0' in text
        assert "collab_writer_queue_depth 0.0" in text
