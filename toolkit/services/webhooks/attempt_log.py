"""One log line per webhook attempt, with the id of the request whose commit created the
delivery: :class:`Origins` remembers it between the commit and the attempt, sent later.
The URL is never logged (its query may hold a credential)."""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Callable, Iterable

from toolkit.logs import current_request_id, fields
from toolkit.services.workflow.deliveries import Outcome

ORIGINS_KEPT = 100_000  # event ids whose originating request is remembered for the delivery log

delivery_log = logging.getLogger("collab.webhooks")


class Origins:
    """Which request created each webhook delivery (by event id), for the delivery log.
    Kept in memory for the last :data:`ORIGINS_KEPT` events: after a restart, or for rows a
    redrive brought back, the attempt is logged without a request id."""

    def __init__(self, kept: int = ORIGINS_KEPT) -> None:
        self.kept = kept
        self._ids: OrderedDict[str, str] = OrderedDict()

    def note(self, event_ids: Iterable[str]) -> None:
        request_id = current_request_id()
        if request_id is None:
            return
        for event_id in event_ids:
            self._ids[event_id] = request_id
        while len(self._ids) > self.kept:
            self._ids.popitem(last=False)

    def get(self, event_id: str) -> str | None:
        return self._ids.get(event_id)


def delivery_result(outcome: Outcome) -> str:
    """``delivered``, ``failed`` (retried on the schedule) or ``refused`` (a destination never
    called: dead-lettered at once)."""
    return "delivered" if outcome.error is None else ("refused" if outcome.permanent else "failed")


def log_delivery(origins: Origins) -> Callable[[Outcome], None]:
    """An observer for the deliverer (:attr:`.deliverer.Deliverer.observers`): one line per attempt."""

    def observe(outcome: Outcome) -> None:
        d = outcome.delivery
        result = delivery_result(outcome)
        delivery_log.info(
            "webhook attempt %s",
            result,
            extra=fields(
                eventId=d.event_id,
                attempt=d.attempts + 1,
                result=result,
                error=outcome.error,
                requestId=origins.get(d.event_id),
            ),
        )

    return observe
