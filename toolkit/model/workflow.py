"""Requests and results of the workflow endpoints (api-v2 §4.5–4.9, semantics §7)."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, StringConstraints, model_validator

from toolkit.limits import MAX_ID_CHARS
from toolkit.model.base import ApiModel, JsonObject, present, schema_rules, when
from toolkit.model.definition import Scope
from toolkit.webhook_urls import url_problem

NonEmpty = Annotated[str, StringConstraints(min_length=1)]
# Every id a request names is bounded, so that neither the lookup nor an error echoing it can
# be made arbitrarily large (issue 13).
Id = Annotated[str, StringConstraints(min_length=1, max_length=MAX_ID_CHARS)]
Cursor = Annotated[str, StringConstraints(max_length=MAX_ID_CHARS)]
Tag = Annotated[str, StringConstraints(max_length=64)]
Actor = Annotated[str, StringConstraints(min_length=1, max_length=256)]
ResolutionIdStr = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9:_.-]{1,200}$")]
PageSize100 = Annotated[int, Field(ge=1, le=100)]

ResolveActionName = Literal[
    "force-approve", "force-reject", "force-complete", "force-fail", "reviewer-approve", "reviewer-reject"
]
ExecutionStatus = Literal["running", "completed", "failed", "cancelled"]


class DefinitionRef(ApiModel):
    definition_id: Id


class ListDefinitions(ApiModel):
    scope: Scope | None = None
    status: Literal["active", "tombstoned"] | None = None
    tags: Annotated[list[Tag], Field(max_length=20)] | None = None
    page_size: PageSize100 = 50
    cursor: Cursor | None = None


# An absolute https URL without credentials (no '@' before the path), whitespace or control characters.
_HTTPS_URL = {"format": "uri", "pattern": r"^[Hh][Tt][Tt][Pp][Ss]://[^\x00-\x20\x7f@/?#]+(?:[/?#][^\x00-\x20\x7f]*)?$"}


class Dispatch(ApiModel):
    """``webhookUrl`` and ``webhookSecret`` come together; the URL is https, without
    credentials, naming a valid host name (IDNA labels, at most 253 characters, no trailing
    dot) or IP address, with a port from 1 to 65535 if any. Deliveries go only to public
    addresses on allowed ports (443 unless the server allows more)."""

    model_config = ConfigDict(
        json_schema_extra=schema_rules(
            {"if": present("webhookUrl"), "then": present("webhookSecret")},
            {"if": present("webhookSecret"), "then": present("webhookUrl")},
            {"properties": {"webhookUrl": {"anyOf": [{"type": "null"}, _HTTPS_URL]}}},
        )
    )

    definition_id: Id
    idempotency_key: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    correlation_id: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None
    trigger_context: JsonObject | None = None
    organization_id: Id | None = None
    document_id: Id | None = None
    webhook_url: Annotated[str, StringConstraints(max_length=2048)] | None = None
    webhook_secret: Annotated[str, StringConstraints(min_length=1, max_length=256)] | None = None

    @model_validator(mode="after")
    def _webhook_pair(self):
        if (self.webhook_url is None) != (self.webhook_secret is None):
            raise ValueError("webhookSecret: webhookUrl and webhookSecret are given together or not at all")
        problem = None if self.webhook_url is None else url_problem(self.webhook_url)
        if problem is not None:
            raise ValueError(f"webhookUrl: {problem}")
        return self


class ExecutionRef(ApiModel):
    execution_id: Id


class ListExecutions(ApiModel):
    definition_id: Id | None = None
    status: ExecutionStatus | None = None
    page_size: PageSize100 = 50
    cursor: Cursor | None = None


class CancelExecution(ApiModel):
    execution_id: Id
    reason: Annotated[str, StringConstraints(max_length=2000)] | None = None


class GetEvents(ApiModel):
    execution_id: Id
    since_seq: Annotated[int, Field(ge=0)] = 0
    page_size: Annotated[int, Field(ge=1, le=500)] = 100


class ResolveStep(ApiModel):
    execution_id: Id
    step_id: Id
    action: ResolveActionName
    actor_id: Actor
    output: JsonObject | None = None
    reason: Annotated[str, StringConstraints(max_length=2000)] | None = None


class RecordReviewerDecision(ApiModel):
    execution_id: Id
    step_id: Id
    reviewer_id: Id
    decision: Literal["approve", "reject"]
    reason: Annotated[str, StringConstraints(max_length=2000)] | None = None


class RecordAgentResolution(ApiModel):
    """Each ``output`` value is at most 16k characters (strings; JSON text for others)."""

    model_config = ConfigDict(json_schema_extra=schema_rules(when("status", "failure", present("errorMessage"))))

    execution_id: Id
    step_id: Id
    resolution_id: ResolutionIdStr
    status: Literal["success", "failure"]
    output: JsonObject | None = None
    error_message: NonEmpty | None = None

    @model_validator(mode="after")
    def _failure_message(self):
        if self.status == "failure" and self.error_message is None:
            raise ValueError("errorMessage: required when status is failure")
        for key, value in (self.output or {}).items():
            if len(value if isinstance(value, str) else _json_text(value)) > 16_384:
                raise ValueError(f"output.{key}: each output value is at most 16k characters")
        return self


def _json_text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class CancelStep(ApiModel):
    execution_id: Id
    step_id: Id
    actor_id: Actor
    reason: Annotated[str, StringConstraints(max_length=500)] | None = None


DeliveryStatus = Literal["pending", "delivered", "dead"]


class ListDeliveries(ApiModel):
    """Webhook deliveries, oldest first; ``status: "dead"`` lists the dead letters."""

    status: DeliveryStatus | None = None
    execution_id: Id | None = None
    page_size: PageSize100 = 50
    cursor: Cursor | None = None


class RedriveDeliveries(ApiModel):
    """Dead-lettered deliveries to try again from the start of the retry schedule: the ones
    named in ``eventIds``, or every one of ``executionId`` (at least one of the two)."""

    model_config = ConfigDict(json_schema_extra=schema_rules({"anyOf": [present("eventIds"), present("executionId")]}))

    event_ids: Annotated[list[Id], Field(min_length=1, max_length=100)] | None = None
    execution_id: Id | None = None

    @model_validator(mode="after")
    def _some(self):
        if self.event_ids is None and self.execution_id is None:
            raise ValueError("eventIds: give eventIds or executionId (which dead letters to redrive)")
        return self


# ------------------------------------------------------------------ results (for OpenAPI)


class CompiledView(ApiModel):
    forward_edges: list[JsonObject]
    loops: list[JsonObject]


class ScopeView(ApiModel):
    level: Literal["apiKey", "organization", "document"]
    organization_id: str | None
    document_id: str | None


class FindingView(ApiModel):
    """A lint warning of the definition (semantics §4): it never blocks a write."""

    key: str
    severity: Literal["error", "warning"]
    message: str
    where: str


class DefinitionView(ApiModel):
    definition_id: str
    name: str
    description: str | None
    version: int
    scope: ScopeView
    nodes: list[JsonObject]
    edges: list[Any]
    groups: list[JsonObject] | None
    compiled: CompiledView
    triggers: list[JsonObject] | None
    tags: list[str] | None
    custom: JsonObject | None
    created_at: int
    updated_at: int
    status: Literal["active", "tombstoned"]
    warnings: list[FindingView]


class DefinitionList(ApiModel):
    items: list[DefinitionView]
    next_cursor: str | None
    has_more: bool


class Deleted(ApiModel):
    deleted: bool


class StepView(ApiModel):
    step_id: str
    node_id: str
    node_type: str
    status: str
    group_id: str | None
    started_at: int | None
    completed_at: int | None
    output: JsonObject
    error: JsonObject | None
    input: JsonObject
    iteration: int
    reviewer_ids: list[str]


class ExecutionView(ApiModel):
    execution_id: str
    status: ExecutionStatus
    started_at: int | None
    completed_at: int | None
    cancelled_at: int | None
    definition_id: str
    definition_version: int
    correlation_id: str
    idempotency_key: str | None
    failure_reason: str | None
    steps: list[StepView]


class ExecutionList(ApiModel):
    items: list[ExecutionView]
    next_cursor: str | None
    has_more: bool


class Dispatched(ApiModel):
    execution_id: str
    correlation_id: str
    deduplicated: bool


class ExecutionCancelled(ApiModel):
    cancelled: bool
    execution_id: str


class EventView(ApiModel):
    event_id: str
    seq: int
    type: str
    step_id: str | None
    timestamp: int
    correlation_id: str
    data: JsonObject


class EventPage(ApiModel):
    execution_id: str
    events: list[EventView]
    next_cursor: int
    has_more: bool


class Resolved(ApiModel):
    resolved: bool
    execution_id: str
    step_id: str
    action: str


class DecisionRecorded(ApiModel):
    recorded: bool
    aggregator_status: str
    resume_scheduled: bool
    rejection_reason: str | None = None


class ResolutionRecorded(ApiModel):
    recorded: bool
    aggregator_status: str
    resume_scheduled: bool


class StepCancelled(ApiModel):
    cancelled: bool
    step_id: str
    execution_id: str


class DeliveryView(ApiModel):
    event_id: str
    execution_id: str
    seq: int
    event: str
    url: str
    status: DeliveryStatus
    attempts: int
    next_attempt_at: int | None
    last_error: str | None
    created_at: int
    delivered_at: int | None
    dead_at: int | None


class DeliveryList(ApiModel):
    items: list[DeliveryView]
    next_cursor: str | None
    has_more: bool


class Redriven(ApiModel):
    redriven: int
    event_ids: list[str]
