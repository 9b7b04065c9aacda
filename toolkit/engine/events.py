"""Events: the append-only log of an execution (api-v2 §2.9, §6; semantics §6).

Every change to an execution appends one or more events. ``seq`` starts at 1 per execution
and strictly increases; internal events take numbers too, so the external stream (what
Get Execution Events returns) may have gaps.

External types (readable through the API and pushed to webhooks)::

    execution.dispatched   {definitionId, definitionVersion, rootStepIds}
    execution.completed    {}
    execution.failed       {failureReason}
    execution.cancelled    {reason}
    step.awaiting-approval {waitingForReviewers, mandatoryCount, resumeKey}
    step.completed         {nodeType, decision, aggregatorStatus}   human, blocking agent
                           {agentId}                                non-blocking agent
                           {nodeType: "webhook", status: "skipped"} webhook
    step.failed            {error: {code, message}}
    step.breached          {reason: "sla-exceeded", slaMs}
    step.cancelled         {actorId, reason}
    group.quorum-met       {groupId, total, quorum, completedTotal, expectedSteps}
    loop.iteration-started {loopId, iteration, triggeredBy: "rejection"}
    loop.exhausted         {loopId, iteration, lastRejectedBy, lastRejectionReason}

Internal types (kept in the log, filtered from the read API)::

    step.scheduled         {nodeId, nodeType, groupId, iteration}
    step.started           {nodeId, nodeType}
    step.response-recorded {reviewerId, decision, reason, mandatory} | {resolutionId, status}
    step.resumed           {aggregatorStatus}
    step.overridden        {actorId, action, reason, decision}
    parallel-group.completed {groupId, decision, totalApproved, completedTotal, expectedSteps}
    idempotency.suppressed {idempotencyKey}
    step.retried           (reserved: the v1 engine never retries)

Execution-level events carry ``stepId: None``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["Event", "EXTERNAL_TYPES", "INTERNAL_TYPES", "external_view"]

EXTERNAL_TYPES: frozenset[str] = frozenset(
    {
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
)

INTERNAL_TYPES: frozenset[str] = frozenset(
    {
        "step.scheduled",
        "step.started",
        "step.retried",
        "step.resumed",
        "step.response-recorded",
        "step.overridden",
        "parallel-group.completed",
        "idempotency.suppressed",
    }
)


# An event's fields but its id, by name (a class compiled by mypyc has no ``__slots__``).
_COMPARED = ("execution_id", "seq", "type", "step_id", "timestamp", "correlation_id", "data")


class Event:
    """One entry of an execution's log. ``data`` is a JSON object owned by the event."""

    __slots__ = ("_event_id", *_COMPARED)

    def __init__(
        self,
        event_id: str | None,
        execution_id: str,
        seq: int,
        type: str,
        step_id: str | None,
        timestamp: int,
        correlation_id: str | None,
        data: dict[str, Any],
    ) -> None:
        self._event_id = event_id
        self.execution_id = execution_id
        self.seq = seq
        self.type = type
        self.step_id = step_id
        self.timestamp = timestamp
        self.correlation_id = correlation_id
        self.data = data

    @property
    def event_id(self) -> str:
        """``evt_<executionId>_<seq>`` unless given explicitly (formatted on demand: the engine
        creates far more events than anyone reads ids of)."""
        eid = self._event_id
        return eid if eid is not None else f"evt_{self.execution_id}_{self.seq}"

    @property
    def external(self) -> bool:
        return self.type in EXTERNAL_TYPES

    def to_json(self) -> dict[str, Any]:
        """The api-v2 §2.9 shape."""
        return {
            "eventId": self.event_id,
            "seq": self.seq,
            "type": self.type,
            "stepId": self.step_id,
            "timestamp": self.timestamp,
            "correlationId": self.correlation_id,
            "data": self.data,
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Event):
            return NotImplemented
        return self.event_id == other.event_id and all(
            getattr(self, name) == getattr(other, name) for name in _COMPARED
        )

    __hash__ = None  # type: ignore[assignment]  # a mutable record: unhashable, as object allows

    def __repr__(self) -> str:
        return f"Event({self.seq}, {self.type!r}, step={self.step_id!r}, data={self.data!r})"


def external_view(events: Iterable[Event]) -> list[Event]:
    """The externally visible events, in order, keeping their ``seq`` (gaps allowed).

    >>> evs = [Event("e1", "x", 1, "step.scheduled", "s", 0, "x", {}),
    ...        Event("e2", "x", 2, "step.completed", "s", 0, "x", {})]
    >>> [e.seq for e in external_view(evs)]
    [2]
    """
    return [e for e in events if e.type in EXTERNAL_TYPES]
