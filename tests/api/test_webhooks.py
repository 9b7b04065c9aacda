"""Push delivery of execution events (semantics §6), end to end: a real `collab serve` POSTs to
a real HTTPS receiver (its CA passed with --webhook-ca-bundle; loopback and its port allowed explicitly),
signs each body, retries on the schedule (shortened with --webhook-retry-delays), dead-letters,
redrives, and resumes after kill -9 without losing or re-sending what was acknowledged."""

from __future__ import annotations

import json

import pytest

from api.receiver import Receiver
from api.support import (
    DECIDE,
    DISPATCH,
    EXEC_GET,
    Api,
    Server,
    human_definition,
    serve_fresh,
    uid,
    wait_for,
)
from toolkit.webhooks import iso_timestamp, verify_webhook_signature

LIST, REDRIVE = "/v2/workflow/deliveries/list", "/v2/workflow/deliveries/redrive"
SECRET = "whsec-test-0123456789"
FAST = "100,100,100,100,100"  # the schedule's five waits, shortened from 2 s … 8 min


def _server(root, receiver: Receiver, name: str) -> Server:
    """A server with two workspaces whose deliveries may reach the test receiver on loopback."""
    return serve_fresh(
        root,
        name,
        (
            "--webhook-allow-loopback",
            "--webhook-ca-bundle",
            str(receiver.ca_path),
            "--webhook-retry-delays",
            FAST,
            "--webhook-allow-port",
            str(receiver.port),
        ),
    )


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    rec = Receiver(tmp_path_factory.mktemp("receiver")).start()
    yield rec
    rec.stop()


@pytest.fixture(scope="module")
def hooked_server(tmp_path_factory, receiver):
    srv = _server(tmp_path_factory.mktemp("hooked"), receiver, "hooked")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def hooked(hooked_server):
    with hooked_server.client(hooked_server.creds_a) as client:
        yield Api(client)


@pytest.fixture(scope="module")
def hooked_b(hooked_server):
    with hooked_server.client(hooked_server.creds_b) as client:
        yield Api(client)


@pytest.fixture(autouse=True)
def _answer_ok(receiver):
    receiver.respond = lambda path, attempt: 200


def _start(api: Api, receiver: Receiver, path: str, **extra) -> tuple[str, str]:
    definition_id = uid("hook")
    api.create(human_definition(definition_id))
    execution_id = api.dispatch(definition_id, webhookUrl=receiver.url(path), webhookSecret=SECRET, **extra)
    return definition_id, execution_id


def _deliveries(api: Api, **filters) -> list[dict]:
    items, cursor = [], None
    while True:
        page = api.ok(LIST, {**filters, "pageSize": 100, **({"cursor": cursor} if cursor else {})})
        items += page["items"]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            return items


def _settled(api: Api, execution_id: str, count: int, status: str = "delivered") -> list[dict]:
    def check():
        items = _deliveries(api, executionId=execution_id)
        return items if len(items) == count and all(d["status"] == status for d in items) else None

    return wait_for(check, timeout=30, what=f"{count} deliveries of {execution_id} to be {status}")


def _decide(api: Api, execution_id: str, reviewer: str, decision: str) -> None:
    step = api.ok(EXEC_GET, {"executionId": execution_id})["steps"][0]
    api.ok(
        DECIDE, {"executionId": execution_id, "stepId": step["stepId"], "reviewerId": reviewer, "decision": decision}
    )


# ---------------------------------------------------------------------------- delivery


def test_every_external_event_is_posted_signed_in_seq_order(hooked, receiver):
    _, execution_id = _start(hooked, receiver, "/ordered", correlationId="campaign-7")
    _decide(hooked, execution_id, "ann", "approve")
    events = hooked.events(execution_id)
    assert [e["type"] for e in events][-1] == "execution.completed"
    _settled(hooked, execution_id, len(events))
    got = receiver.received("/ordered")
    assert [r.headers["x-service-event-id"] for r in got] == [e["eventId"] for e in events]
    definition_id = hooked.ok(EXEC_GET, {"executionId": execution_id})["definitionId"]
    for request, event in zip(got, events):
        assert verify_webhook_signature(request.body, request.headers["x-service-signature"], SECRET)
        assert not verify_webhook_signature(request.body, request.headers["x-service-signature"], "other")
        assert request.headers["x-service-signature"].startswith("sha256=")
        assert request.headers["x-service-attempt"] == "1"
        assert request.headers["content-type"] == "application/json"
        assert json.loads(request.body) == {
            "event": event["type"],
            "executionId": execution_id,
            "definitionId": definition_id,
            "stepId": event["stepId"],
            "seq": event["seq"],
            "timestamp": iso_timestamp(event["timestamp"]),
            "correlationId": "campaign-7",
            "data": event["data"],
        }


def test_internal_events_and_executions_without_webhook_are_not_delivered(hooked, receiver):
    definition_id = uid("quiet")
    hooked.create(human_definition(definition_id))
    quiet = hooked.dispatch(definition_id)
    _decide(hooked, quiet, "ann", "approve")
    assert _deliveries(hooked, executionId=quiet) == []
    _, loud = _start(hooked, receiver, "/loud")
    items = _settled(hooked, loud, len(hooked.events(loud)))
    assert {d["event"] for d in items} <= {"execution.dispatched", "step.awaiting-approval"}


def test_failed_attempts_are_retried_with_the_same_bytes_and_event_id(hooked, receiver):
    receiver.respond = lambda path, attempt: 503 if path == "/flaky" and attempt < 3 else 200
    _, execution_id = _start(hooked, receiver, "/flaky")
    first = hooked.events(execution_id)[0]
    items = _settled(hooked, execution_id, len(hooked.events(execution_id)))
    assert all(d["attempts"] == 3 and d["lastError"] is None for d in items)
    tries = [r for r in receiver.received("/flaky") if r.headers["x-service-event-id"] == first["eventId"]]
    assert [r.headers["x-service-attempt"] for r in tries] == ["1", "2", "3"]
    assert [r.status for r in tries] == [503, 503, 200]
    assert len({r.body for r in tries}) == 1
    assert len({r.headers["x-service-signature"] for r in tries}) == 1


def test_a_later_event_waits_while_an_earlier_one_is_retried(hooked, receiver):
    receiver.respond = lambda path, attempt: 500 if path == "/stuck" and attempt < 4 else 200
    _, execution_id = _start(hooked, receiver, "/stuck")
    _settled(hooked, execution_id, len(hooked.events(execution_id)))
    seqs = [json.loads(r.body)["seq"] for r in receiver.received("/stuck")]
    assert seqs == sorted(seqs), "an execution's events must arrive in seq order, retries included"


def test_the_schedule_ends_in_the_dead_letters_and_redrive_sends_again(hooked, receiver):
    receiver.respond = lambda path, attempt: 500 if path == "/down" else 200
    _, execution_id = _start(hooked, receiver, "/down")
    dead = wait_for(
        lambda: [d for d in _deliveries(hooked, status="dead") if d["executionId"] == execution_id],
        timeout=30,
        what="a dead letter",
    )
    head = dead[0]
    assert head["attempts"] == 6 and head["lastError"] == "HTTP 500" and head["deadAt"] is not None
    assert head["nextAttemptAt"] is None
    # The queue behind a dead letter moves on: every event of the execution ends up dead here.
    items = _settled(hooked, execution_id, len(hooked.events(execution_id)), status="dead")

    receiver.respond = lambda path, attempt: 200
    redriven = hooked.ok(REDRIVE, {"eventIds": [head["eventId"], "evt_unknown_1"]})
    assert redriven == {"redriven": 1, "eventIds": [head["eventId"]]}
    wait_for(
        lambda: _deliveries(hooked, executionId=execution_id)[0]["status"] == "delivered",
        timeout=30,
        what="the redriven delivery",
    )
    last = [r for r in receiver.received("/down") if r.headers["x-service-event-id"] == head["eventId"]][-1]
    assert last.headers["x-service-attempt"] == "7" and last.status == 200

    rest = hooked.ok(REDRIVE, {"executionId": execution_id})
    assert rest["redriven"] == len(items) - 1
    _settled(hooked, execution_id, len(items))
    assert hooked.ok(REDRIVE, {"executionId": execution_id}) == {"redriven": 0, "eventIds": []}


def test_private_and_link_local_addresses_are_refused_at_dispatch_even_with_loopback_allowed(hooked):
    definition_id = uid("ssrf")
    hooked.create(human_definition(definition_id))
    for url, kind in (
        ("https://10.0.0.7/hook", "private"),
        ("https://169.254.169.254/latest/meta-data", "link-local"),
        ("https://[fd00::1]/hook", "private"),
    ):
        message = hooked.err(DISPATCH, {"definitionId": definition_id, "webhookUrl": url, "webhookSecret": SECRET})
        assert "data.webhookUrl" in message and f"a {kind} address" in message, message
    assert hooked.ok("/v2/workflow/executions/list", {"definitionId": definition_id})["items"] == []


def test_a_name_resolving_to_loopback_is_refused_at_delivery_without_the_test_setting(api):
    definition_id = uid("loop")
    api.create(human_definition(definition_id))
    execution_id = api.dispatch(definition_id, webhookUrl="https://localhost/hook", webhookSecret=SECRET)
    dead = _settled(api, execution_id, 2, status="dead")
    assert all(d["attempts"] == 1 and "a loopback address" in d["lastError"] for d in dead), dead


# ---------------------------------------------------------------------------- input and isolation


@pytest.mark.parametrize(
    "url, problem",
    [
        ("http://hooks.example.com/x", "must be an https URL"),
        ("https://hooks.example.com/x\r\nX-Injected: yes", "whitespace or control characters"),
        ("https://hooks.example.com/x%0d%0a\nHost: evil", "whitespace or control characters"),
        ("https://hooks.example.com/a b", "whitespace or control characters"),
        ("https://user:pw@hooks.example.com/x", "must not carry credentials"),
        ("https:///x", "must name a host"),
        ("https://hooks.example.com:70000/x", "not a valid URL"),
    ],
)
def test_bad_webhook_urls_are_refused_at_dispatch(api, url, problem):
    definition_id = uid("badurl")
    api.create(human_definition(definition_id))
    message = api.err(DISPATCH, {"definitionId": definition_id, "webhookUrl": url, "webhookSecret": SECRET})
    assert "data.webhookUrl" in message and problem in message
    assert api.ok("/v2/workflow/executions/list", {"definitionId": definition_id})["items"] == []


def test_url_and_secret_come_together(api):
    definition_id = uid("pair")
    api.create(human_definition(definition_id))
    message = api.err(DISPATCH, {"definitionId": definition_id, "webhookUrl": "https://hooks.example.com/x"})
    assert "webhookSecret" in message


@pytest.mark.parametrize(
    "data, field",
    [
        ({}, "eventIds"),
        ({"eventIds": []}, "eventIds"),
        ({"eventIds": [""]}, "eventIds"),
        ({"eventIds": "evt_1"}, "eventIds"),
        ({"executionId": 7}, "executionId"),
        ({"eventIds": ["e"] * 101}, "eventIds"),
    ],
)
def test_redrive_input_is_checked(api, data, field):
    assert f"data.{field}" in api.err(REDRIVE, data)


@pytest.mark.parametrize(
    "data, field",
    [
        ({"status": "lost"}, "status"),
        ({"pageSize": 0}, "pageSize"),
        ({"pageSize": 101}, "pageSize"),
        ({"cursor": "not-a-cursor"}, "cursor"),
        ({"executionId": ""}, "executionId"),
    ],
)
def test_list_input_is_checked(api, data, field):
    assert f"data.{field}" in api.err(LIST, data)


def test_listing_pages_through_everything_once(hooked, receiver):
    _, execution_id = _start(hooked, receiver, "/paged")
    _decide(hooked, execution_id, "ann", "reject")
    total = len(hooked.events(execution_id))
    _settled(hooked, execution_id, total)
    seen, cursor = [], None
    while True:
        page = hooked.ok(LIST, {"executionId": execution_id, "pageSize": 2, **({"cursor": cursor} if cursor else {})})
        seen += [d["seq"] for d in page["items"]]
        cursor = page["nextCursor"]
        if not page["hasMore"]:
            break
    assert seen == sorted(set(seen)) and len(seen) == total


def test_another_workspace_sees_and_redrives_nothing(hooked, hooked_b, receiver):
    receiver.respond = lambda path, attempt: 500 if path == "/isolated" else 200
    _, execution_id = _start(hooked, receiver, "/isolated")
    dead = _settled(hooked, execution_id, 2, status="dead")
    assert _deliveries(hooked_b, executionId=execution_id) == []
    assert all(d["executionId"] != execution_id for d in _deliveries(hooked_b))
    assert hooked_b.ok(REDRIVE, {"eventIds": [d["eventId"] for d in dead]}) == {"redriven": 0, "eventIds": []}
    assert hooked_b.ok(REDRIVE, {"executionId": execution_id}) == {"redriven": 0, "eventIds": []}
    assert [d["status"] for d in _deliveries(hooked, executionId=execution_id)] == ["dead", "dead"]


# ---------------------------------------------------------------------------- restarts


def test_kill_9_loses_no_delivery_and_resends_only_what_was_in_flight(tmp_path, receiver):
    srv = _server(tmp_path, receiver, "killed")
    try:
        with srv.client(srv.creds_a) as client:
            api = Api(client)
            _, execution_id = _start(api, receiver, "/restart")
            before = _settled(api, execution_id, 2)
            receiver.respond = lambda path, attempt: None if path == "/restart" else 200  # hold the next POST open
            _decide(api, execution_id, "ann", "approve")
            wait_for(lambda: len(receiver.received("/restart")) == 3, what="the held delivery")
            held = receiver.received("/restart")[-1].headers["x-service-event-id"]
        srv.kill9()
        receiver.respond = lambda path, attempt: 200
        receiver.release()
        srv.start()
        with srv.client(srv.creds_a) as client:
            api = Api(client)
            events = api.events(execution_id)
            _settled(api, execution_id, len(events))
        got = receiver.received("/restart")
        ids = [r.headers["x-service-event-id"] for r in got]
        assert [e["eventId"] for e in events] == list(dict.fromkeys(ids)), "every event, in order, none lost"
        for delivered in before:  # acknowledged by the receiver before the kill: never sent again
            assert ids.count(delivered["eventId"]) == 1
        assert ids.count(held) == 2
        assert got[3].headers["x-service-event-id"] == held, "the first request after the restart resends it"
        assert [r.headers["x-service-attempt"] for r in got if r.headers["x-service-event-id"] == held] == ["1", "1"]
    finally:
        srv.stop()
