"""Commands: everything that can change an execution, as plain frozen records.

A command is data, not behaviour: :func:`toolkit.engine.apply` decides what it does. Each one
maps to an API call or to something the host observed:

===========================  ======================================================
``Dispatch``                 executions/dispatch (creates the execution)
``Tick``                     the clock moved: fire due SLA deadlines, agent timeouts
``AgentCompleted``           the agent runner finished a non-blocking agent step
``RecordReviewerDecision``   steps/recordReviewerDecision
``RecordAgentResolution``    steps/recordAgentResolution (blocking agent steps)
``ResolveStep``              steps/resolve (operator and reviewer overrides)
``CancelStep``               steps/cancel
``CancelExecution``          executions/cancel
===========================  ======================================================

Field names are the snake_case forms of the request fields; the server builds these from
validated request models, so the engine trusts their types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.engine.types import JsonObject

__all__ = [
    "Dispatch",
    "Tick",
    "AgentCompleted",
    "RecordReviewerDecision",
    "RecordAgentResolution",
    "ResolveStep",
    "CancelStep",
    "CancelExecution",
    "Command",
    "AgentRequest",
    "RESOLVE_ACTIONS",
]

RESOLVE_ACTIONS = (
    "force-approve",
    "force-reject",
    "force-complete",
    "force-fail",
    "reviewer-approve",
    "reviewer-reject",
)


@dataclass(frozen=True, slots=True)
class Dispatch:
    """Start an execution. ``correlation_id`` defaults to ``execution_id``."""

    execution_id: str
    correlation_id: str | None = None
    idempotency_key: str | None = None
    trigger_context: JsonObject | None = None


@dataclass(frozen=True, slots=True)
class Tick:
    """Time advanced to ``clock.now()``: fire every deadline that is due by then."""


@dataclass(frozen=True, slots=True)
class AgentCompleted:
    """A non-blocking agent step finished: ``output``, or ``error = {code, message}`` (failed)."""

    step_id: str
    output: JsonObject | None = None
    error: JsonObject | None = None


@dataclass(frozen=True, slots=True)
class RecordReviewerDecision:
    step_id: str
    reviewer_id: str
    decision: str  # "approve" | "reject"
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class RecordAgentResolution:
    step_id: str
    resolution_id: str
    status: str  # "success" | "failure"
    output: JsonObject | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ResolveStep:
    step_id: str
    action: str  # one of RESOLVE_ACTIONS
    actor_id: str
    output: JsonObject | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class CancelStep:
    step_id: str
    actor_id: str
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class CancelExecution:
    reason: str | None = None


Command = (
    Dispatch
    | Tick
    | AgentCompleted
    | RecordReviewerDecision
    | RecordAgentResolution
    | ResolveStep
    | CancelStep
    | CancelExecution
)


@dataclass(frozen=True, slots=True)
class AgentRequest:
    """A non-blocking agent step that just started and needs the agent runner.

    ``config`` is the node's config as JSON (camelCase keys, defaults filled in, extra keys
    kept); ``input`` is the step's input. Treat both as read-only.
    """

    step_id: str
    node_id: str
    agent_id: str
    config: dict[str, Any]
    input: dict[str, Any]
