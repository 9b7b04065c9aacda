"""Push delivery of execution events (semantics §6): the payload, its signature and the retry
schedule (the rules a webhook URL must follow are in :mod:`toolkit.webhook_urls`).

A receiver checks each delivery with :func:`verify_webhook_signature` over the *raw* request
body, before parsing it::

    from toolkit.webhooks import verify_webhook_signature

    raw = await request.body()
    if not verify_webhook_signature(raw, request.headers.get("x-service-signature"), SECRET):
        return Response(status_code=401)
    event = json.loads(raw)   # {event, executionId, definitionId, stepId, seq, timestamp, ...}

Deliveries are at least once: the same event can arrive again (after a timeout whose response
was lost, or a server restart mid-delivery), always with the same ``x-service-event-id``, so a
receiver that remembers the ids it has processed sees each event exactly once.
"""

from __future__ import annotations

import hashlib
import hmac
from datetime import UTC, datetime

from toolkit.jsonio import dumps

SIGNATURE_HEADER = "x-service-signature"
EVENT_ID_HEADER = "x-service-event-id"
ATTEMPT_HEADER = "x-service-attempt"

# Waits after the 1st … 5th failed attempt; the 6th failure dead-letters the delivery.
RETRY_DELAYS_MS: tuple[int, ...] = (2_000, 8_000, 32_000, 120_000, 480_000)

TIMEOUT_S = 10.0


def iso_timestamp(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC: ``iso_timestamp(0) == "1970-01-01T00:00:00.000Z"``."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def payload(event, definition_id: str) -> str:
    """The JSON body POSTed for one external event — built once, when the event is written, so
    every retry sends (and signs) exactly the same bytes (its UTF-8 encoding)."""
    return dumps(
        {
            "event": event.type,
            "executionId": event.execution_id,
            "definitionId": definition_id,
            "stepId": event.step_id,
            "seq": event.seq,
            "timestamp": iso_timestamp(event.timestamp),
            "correlationId": event.correlation_id,
            "data": event.data,
        }
    )


def sign(raw_body: bytes, secret: str) -> str:
    """The ``x-service-signature`` header value: ``sha256=<hex HMAC-SHA256 of the raw body>``."""
    return "sha256=" + hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()


def verify_webhook_signature(raw_body: bytes, header: str | None, secret: str) -> bool:
    """Whether ``header`` (the ``x-service-signature`` value) signs ``raw_body`` with ``secret``.
    Compares in constant time; a missing or malformed header is simply ``False``.

    >>> verify_webhook_signature(b'{"seq":1}', sign(b'{"seq":1}', "s3cret"), "s3cret")
    True
    >>> verify_webhook_signature(b'{"seq":2}', sign(b'{"seq":1}', "s3cret"), "s3cret")
    False
    """
    if not isinstance(header, str):
        return False
    expected = sign(raw_body, secret).encode()
    return hmac.compare_digest(expected, header.strip().encode("utf-8", "replace"))


def retry_delay_ms(failures: int, delays: tuple[int, ...] = RETRY_DELAYS_MS) -> int | None:
    """How long to wait after the ``failures``-th failed attempt in a row; ``None`` once the
    schedule is used up (the delivery is dead-lettered)."""
    return delays[failures - 1] if 1 <= failures <= len(delays) else None
