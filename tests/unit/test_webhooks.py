"""Webhook signing, URL rules, destination checks and the outbox state machine (semantics §6),
on a real DuckDB file; the HTTP side is in tests/api/test_webhooks.py."""

from __future__ import annotations

import ipaddress
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit.engine import ManualClock
from toolkit.model import validate
from toolkit.model import workflow as m
from toolkit.services import workflow
from toolkit.services.context import Services
from toolkit.services.workflow.deliveries import Outcome, due, next_due, record
from toolkit.services.workspaces import Authenticator, create_workspace
from toolkit.store import Store
from toolkit.webhook_urls import refusal, url_problem
from toolkit.webhooks import RETRY_DELAYS_MS, iso_timestamp, retry_delay_ms, sign, verify_webhook_signature

# ---------------------------------------------------------------------------- signatures


@given(st.binary(), st.text(min_size=1))
def test_a_signature_verifies_its_own_body_and_secret(body, secret):
    assert verify_webhook_signature(body, sign(body, secret), secret)


@given(st.binary(min_size=1), st.text(min_size=1), st.data())
def test_any_changed_byte_breaks_the_signature(body, secret, data):
    i = data.draw(st.integers(0, len(body) - 1))
    tampered = body[:i] + bytes([body[i] ^ data.draw(st.integers(1, 255))]) + body[i + 1 :]
    assert not verify_webhook_signature(tampered, sign(body, secret), secret)


@given(st.binary(), st.text(min_size=1), st.text(min_size=1))
def test_another_secret_never_verifies(body, secret, other):
    if other != secret:
        assert not verify_webhook_signature(body, sign(body, secret), other)


@pytest.mark.parametrize("header", [None, "", "sha256=", "sha1=abc", "sha256=zz", 12, "sha256=é"])
def test_missing_or_malformed_headers_are_false_not_errors(header):
    assert verify_webhook_signature(b"{}", header, "s") is False


def test_signature_is_hex_hmac_sha256_of_the_raw_body():
    # RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?"
    assert sign(b"what do ya want for nothing?", "Jefe") == (
        "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    )


def test_timestamps_are_iso_8601_utc_with_milliseconds():
    assert iso_timestamp(0) == "1970-01-01T00:00:00.000Z"
    assert iso_timestamp(1795317282007) == "2026-11-22T03:14:42.007Z"


# ---------------------------------------------------------------------------- schedule and URLs


def test_the_retry_schedule_is_the_specs():
    assert [retry_delay_ms(n) for n in range(1, 7)] == [2_000, 8_000, 32_000, 120_000, 480_000, None]
    assert RETRY_DELAYS_MS == (2_000, 8_000, 32_000, 120_000, 480_000)


@given(st.text())
def test_no_accepted_url_can_smuggle_a_header_line(url):
    if url_problem(url) is None:
        assert not any(ch in url for ch in "\r\n\t\x00 ")
        assert url.lower().startswith("https://")


@pytest.mark.parametrize(
    "url",
    [
        "https://hooks.example.com",
        "https://hooks.example.com:8443/a/b?c=d#e",
        "https://[2001:db8::1]/x",
        "https://b\u00fccher.example/hook",
    ],
)
def test_ordinary_https_urls_are_accepted(url):
    assert url_problem(url) is None


@pytest.mark.parametrize(
    "address, reason",
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.10", "private"),
        ("172.16.5.4", "private"),
        ("fd12::1", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("::ffff:10.0.0.1", "private"),
        ("::ffff:127.0.0.1", "loopback"),
        ("0.0.0.0", "private"),
        ("100.64.0.1", "non-public"),
        ("224.0.0.1", "non-public"),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_destinations_that_are_not_public_are_refused(address, reason):
    expected = None if reason is None else f"a {reason} address"
    assert refusal(ipaddress.ip_address(address), allow_loopback=False) == expected


def test_the_loopback_setting_allows_loopback_only():
    assert refusal(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    assert refusal(ipaddress.ip_address("::1"), allow_loopback=True) is None
    assert refusal(ipaddress.ip_address("10.0.0.1"), allow_loopback=True) == "a private address"


# ---------------------------------------------------------------------------- the outbox


def _hooked_workspace(services: Services, executions: int) -> tuple[object, list[str]]:
    """A new workspace with ``executions`` waiting executions that push to a webhook."""
    creds = create_workspace(services.store, now_ms=services.clock.now())
    workspace = Authenticator(services.store).authenticate(creds.api_key, creds.auth_token)
    workflow.create_definition(
        services,
        workspace,
        {
            "definitionId": "review",
            "name": "Review",
            "nodes": [
                {"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "ann"}]}},
                {"nodeId": "done", "type": "agent", "config": {"agentId": "publisher"}},
                {"nodeId": "no", "type": "agent", "config": {"agentId": "archiver"}},
            ],
            "edges": [
                {"from": "review", "to": "done", "on": "approve"},
                {"from": "review", "to": "no", "on": "reject"},
            ],
        },
    )
    request = validate(
        m.Dispatch, {"definitionId": "review", "webhookUrl": "https://hooks.example.com/x", "webhookSecret": "s3cret"}
    )
    return workspace, [workflow.dispatch(services, workspace, request)["executionId"] for _ in range(executions)]


@pytest.fixture
def hooked(tmp_path):
    """A store on a real file, a workspace, and a waiting execution that pushes to a webhook."""
    store = Store(tmp_path / "outbox.duckdb")
    services = Services(store, clock=ManualClock(1_000_000))
    workspace, (execution_id,) = _hooked_workspace(services, 1)
    yield services, workspace, execution_id
    store.close()


def _rows(services, execution_id):
    return services.store.read(
        "SELECT seq, status, attempts, failures, next_attempt_at, last_error FROM outbox "
        "WHERE execution_id = ? ORDER BY seq",
        [execution_id],
    ).fetchall()


def test_external_events_get_a_delivery_in_the_same_commit(hooked):
    services, workspace, execution_id = hooked
    events = workflow.get_events(services, workspace, validate(m.GetEvents, {"executionId": execution_id}))["events"]
    assert [r[0] for r in _rows(services, execution_id)] == [e["seq"] for e in events]
    assert all(r[1:4] == ("pending", 0, 0) for r in _rows(services, execution_id))
    bodies = services.store.read(
        "SELECT body FROM outbox WHERE execution_id = ? ORDER BY seq", [execution_id]
    ).fetchall()
    assert [json.loads(b)["event"] for (b,) in bodies] == [e["type"] for e in events]


def test_only_the_head_of_an_executions_queue_is_due(hooked):
    services, _, execution_id = hooked
    now = services.clock.now()
    heads = due(services, now, 10)
    assert [d.event_id for d in heads] == [f"evt_{execution_id}_1"]
    assert heads[0].secret == "s3cret" and heads[0].attempts == 0
    assert due(services, now, 10, skip={heads[0].event_id}) == []  # in flight: the rest waits behind it


def test_failures_follow_the_schedule_then_dead_letter_and_the_queue_moves_on(hooked):
    services, _, execution_id = hooked
    delays = (10, 20)
    for expected_wait in (10, 20, None):
        services.clock.advance(1_000)
        head = due(services, services.clock.now(), 1)[0]
        record(services, [Outcome(head, services.clock.now(), "HTTP 500")], delays)
        seq, status, attempts, failures, next_at, error = _rows(services, execution_id)[0]
        assert error == "HTTP 500" and attempts == head.attempts + 1
        if expected_wait is None:
            assert status == "dead"
        else:
            assert status == "pending" and next_at == services.clock.now() + expected_wait
            assert next_due(services, services.clock.now()) == next_at
    second = _rows(services, execution_id)[1][0]
    assert [d.event_id for d in due(services, services.clock.now(), 5)] == [f"evt_{execution_id}_{second}"]


def test_a_refused_destination_dead_letters_at_once(hooked):
    services, _, execution_id = hooked
    head = due(services, services.clock.now(), 1)[0]
    record(services, [Outcome(head, services.clock.now(), "destination refused", permanent=True)])
    assert _rows(services, execution_id)[0][1:4] == ("dead", 1, 1)


def test_success_delivers_and_a_stale_outcome_changes_nothing(hooked):
    services, _, execution_id = hooked
    head = due(services, services.clock.now(), 1)[0]
    record(services, [Outcome(head, services.clock.now())])
    assert _rows(services, execution_id)[0][1:4] == ("delivered", 1, 0)
    record(services, [Outcome(head, services.clock.now(), "HTTP 500")])  # a late duplicate report
    assert _rows(services, execution_id)[0][1:4] == ("delivered", 1, 0)


def test_redrive_restarts_the_schedule_and_keeps_counting_attempts(hooked):
    services, workspace, execution_id = hooked
    head = due(services, services.clock.now(), 1)[0]
    record(services, [Outcome(head, services.clock.now(), "boom", permanent=True)])
    services.clock.advance(5_000)
    result = workflow.redrive_deliveries(
        services, workspace, validate(m.RedriveDeliveries, {"executionId": execution_id})
    )
    assert result == {"redriven": 1, "eventIds": [head.event_id]}
    again = due(services, services.clock.now(), 1)[0]
    assert again.event_id == head.event_id and again.attempts == 1 and again.failures == 0


def test_due_deliveries_are_shared_round_robin_between_workspaces(hooked):
    services, first, _ = hooked
    busy, _ = _hooked_workspace(services, 12)
    services.clock.advance(1_000)
    quiet, _ = _hooked_workspace(services, 1)  # the newest rows of all
    now = services.clock.now()
    picked = due(services, now, 3)
    assert sorted(d.workspace_id for d in picked) == sorted(w.workspace_id for w in (first, busy, quiet))
    # However many are due, a workspace gets at most its share at once, in-flight ones counted.
    assert [d.workspace_id for d in due(services, now, 30)].count(busy.workspace_id) == 8
    counted = due(services, now, 30, busy={busy.workspace_id: 5})
    assert [d.workspace_id for d in counted].count(busy.workspace_id) == 3
    assert quiet.workspace_id in {d.workspace_id for d in counted}
    assert due(services, now, 30, busy={busy.workspace_id: 8}, per_workspace=8) == [
        d for d in due(services, now, 30) if d.workspace_id != busy.workspace_id
    ]
