"""Scripts: exact inputs at exact virtual times — how authors unit-test a definition.

A script is JSON; ``atMs`` is virtual time since dispatch, and a step is addressed by its
node id and ``occurrence`` (1 = the first step created for that node, 2 = the second, …)::

    {
      "input": {"channel": "web"},
      "actions": [
        {"atMs": 60000,  "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"},
        {"atMs": 90000,  "node": "brand-review", "reviewer": "bob@brand", "decision": "reject",
                         "reason": "off-brand"},
        {"atMs": 120000, "node": "draft", "occurrence": 2, "agentOutput": {"decision": "approve"}},
        {"atMs": 150000, "node": "risk-panel", "resolution": {"resolutionId": "r1", "status": "success"}},
        {"atMs": 200000, "node": "publish", "resolve": "force-complete", "actor": "ops", "output": {}},
        {"atMs": 300000, "node": "publish", "cancelStep": true, "actor": "ops"},
        {"atMs": 400000, "cancelExecution": true, "reason": "withdrawn"}
      ],
      "expect": {"status": "completed", "failureReason": null,
                 "path": ["draft", "legal-review", "brand-review", "draft", "legal-review", "brand-review", "publish"]}
    }

Each action carries exactly one of ``decision`` (with ``reviewer``), ``agentOutput`` /
``agentError`` (completes a non-blocking agent step), ``resolution`` (a blocking agent
resolution), ``resolve`` (a Resolve Step action, with ``actor``), ``cancelStep`` (with
``actor``) or ``cancelExecution``. Non-blocking agent steps that no action addresses complete
at once through the default runner; human and blocking-agent steps that no action
addresses wait (unless a policy is also given, which then drives them).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from toolkit.model.base import ApiModel, JsonObject

ResolveAction = Literal[
    "force-approve", "force-reject", "force-complete", "force-fail", "reviewer-approve", "reviewer-reject"
]

_KINDS = ("decision", "agent_output", "agent_error", "resolution", "resolve", "cancel_step", "cancel_execution")


class AgentError(ApiModel):
    code: str = "agent-error"
    message: str = "scripted failure"


class Resolution(ApiModel):
    resolution_id: str
    status: Literal["success", "failure"]
    output: JsonObject | None = None
    error_message: str | None = None


class Action(ApiModel):
    at_ms: Annotated[int, Field(ge=0)]
    node: str | None = None
    occurrence: Annotated[int, Field(ge=1)] = 1
    reviewer: str | None = None
    decision: Literal["approve", "reject"] | None = None
    reason: str | None = None
    agent_output: JsonObject | None = None
    agent_error: AgentError | None = None
    resolution: Resolution | None = None
    resolve: ResolveAction | None = None
    actor: str | None = None
    output: JsonObject | None = None
    cancel_step: bool | None = None
    cancel_execution: bool | None = None

    @model_validator(mode="after")
    def _one_kind(self):
        given = [k for k in _KINDS if getattr(self, k) not in (None, False)]
        if len(given) != 1:
            raise ValueError(
                "give exactly one of decision, agentOutput, agentError, resolution, resolve, "
                "cancelStep, cancelExecution"
            )
        kind = given[0]
        if kind != "cancel_execution" and self.node is None:
            raise ValueError("node: required to address a step")
        if kind == "decision" and self.reviewer is None:
            raise ValueError("reviewer: required with decision")
        if kind in ("resolve", "cancel_step") and self.actor is None:
            raise ValueError("actor: required with resolve and cancelStep")
        return self

    @property
    def kind(self) -> str:
        return next(k for k in _KINDS if getattr(self, k) not in (None, False))


class Expectation(ApiModel):
    status: Literal["running", "completed", "failed", "cancelled"] | None = None
    failure_reason: str | None = None
    path: list[str] | None = None


class Script(ApiModel):
    input: JsonObject | None = None
    actions: list[Action] = []
    expect: Expectation | None = None

    @classmethod
    def load(cls, value: Script | dict) -> Script:
        return value if isinstance(value, Script) else cls.model_validate(value)

    def agent_addressed(self) -> set[tuple[str, int]]:
        """(node, occurrence) pairs whose agent completion the script decides."""
        return {
            (a.node, a.occurrence)
            for a in self.actions
            if a.kind in ("agent_output", "agent_error") and a.node is not None  # (validated: always)
        }
