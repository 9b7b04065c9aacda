"""Webhook deliveries under kills: some dispatches carry a webhook to the harness's HTTPS
receiver, which fails each execution's first attempts now and then (so retries are pending
when a kill lands). After every restart the outbox must catch up: every external event of
every acknowledged webhook execution reaches the receiver, signed, with its own event id, in
seq order per execution. Deliveries are at least once, so an event a kill caught in flight
may arrive twice; those are counted, never as duplicates.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict

from api.support import EVENTS

from faults.context import Ctx
from faults.registry import check, operation
from faults.workflow_load import dispatch_record
from toolkit.webhooks import verify_webhook_signature

SECRET = "fault-harness-webhook-secret"
CATCH_UP_S = 30.0  # the retry delays the harness sets add up to 6.2 s


@operation(3)
def dispatch_with_webhook(ctx: Ctx) -> None:
    present = ctx.ledger.keys("definition", ctx.owner, present=True)
    if not present:
        return
    ctx.run.receiver.respond = _answer
    path = f"/{ctx.owner}/{'flaky' if ctx.rng.random() < 0.3 else 'steady'}"
    rec = dispatch_record(
        ctx,
        ctx.rng.choice(sorted(present))[2],
        extra={"webhookUrl": ctx.run.receiver.url(path), "webhookSecret": SECRET},
    )
    ctx.run.webhook_records.append(rec)


def _answer(path: str, attempt: int) -> int:
    """The receiver's answer: a flaky path fails the first two attempts of every event."""
    return 503 if path.endswith("/flaky") and attempt < 3 else 200


def _expected(ctx: Ctx) -> dict[str, list[dict]]:
    """Execution id -> its external events, for every acknowledged webhook dispatch."""
    out = {}
    for rec in list(ctx.run.webhook_records):
        if rec.dispatch_known:
            events, since = [], 0
            while True:
                page = ctx.read(EVENTS, {"executionId": rec.execution_id, "sinceSeq": since, "pageSize": 500})
                if page is None:
                    break
                events += page["events"]
                since = page["nextCursor"]
                if not page["hasMore"]:
                    break
            out[rec.execution_id] = events
    return out


@check("online")
def outbox_deliveries_resumed(ctx: Ctx) -> None:
    receiver = ctx.run.receiver
    deadline = time.monotonic() + CATCH_UP_S
    while True:
        expected = _expected(ctx)
        delivered = defaultdict(list)  # event id -> 2xx receipts
        for r in receiver.received():
            if r.status is not None and 200 <= r.status < 300:
                delivered[r.headers.get("x-service-event-id")].append(r)
        missing = [(eid, e) for eid, events in expected.items() for e in events if e["eventId"] not in delivered]
        if not missing or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    for execution_id, event in missing:
        ctx.report.loss(
            f"webhook delivery of {event['eventId']} ({event['type']}) of {execution_id} never "
            f"arrived within {CATCH_UP_S:.0f} s of the restart"
        )
    first_seen: dict[str, list[int]] = defaultdict(list)
    for r in receiver.received():
        body = r.body
        if not verify_webhook_signature(body, r.headers.get("x-service-signature"), SECRET):
            ctx.report.problem(f"webhook {r.headers.get('x-service-event-id')}: bad signature")
            continue
        sent = json.loads(body)
        if f"evt_{sent['executionId']}_{sent['seq']}" != r.headers.get("x-service-event-id"):
            ctx.report.problem(f"webhook body seq {sent['seq']} does not match its event id header")
        if r.status is not None and 200 <= r.status < 300:
            seqs = first_seen[sent["executionId"]]
            if sent["seq"] not in seqs:
                seqs.append(sent["seq"])
    for execution_id, seqs in first_seen.items():
        if seqs != sorted(seqs):
            ctx.report.problem(f"webhook deliveries of {execution_id} arrived out of seq order: {seqs}")
    ctx.report.counts["webhook events delivered"] = sum(len(e) for e in expected.values()) - len(missing)
    ctx.report.counts["webhook events delivered again (at least once)"] = sum(
        1 for receipts in delivered.values() if len(receipts) > 1
    )
