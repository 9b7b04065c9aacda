"""Execution state: plain ``__slots__`` records the engine mutates in place.

Statuses (semantics §5.1), in one place:

Execution
    ``running``   dispatched, at least one step not terminal (or about to be checked)
    ``completed`` every step terminal and every outcome handled
    ``failed``    every step terminal and some outcome unhandled, or a loop exhausted with
                  no ``exhausted`` route (``failureReason`` says which came first)
    ``cancelled`` executions/cancel

Step
    ``pending``   created, not started (transient: the engine starts a step in the same
                  transition that creates it, so a stored step is never pending)
    ``running``   started; a non-blocking agent stays here until its runner answers
    ``waiting``   a human or blocking agent step waiting for decisions / resolutions
    ``completed`` finished with an output (its ``decision`` routes approve/reject edges)
    ``failed``    agent error, empty output, agent timeout, unreachable threshold, force-fail
    ``skipped``   webhook steps (their runtime is deferred in v1)
    ``cancelled`` by an operator, a quorum, a loop restart, or the execution's end
    ``breached``  its SLA passed before it finished

The last five are terminal. ``to_dict`` / ``from_dict`` give an exact JSON round trip, so a
host can persist the state between any two commands and continue identically.
"""

from __future__ import annotations

import copy as _copy
from collections.abc import Sequence
from typing import Any

from toolkit.engine.types import JsonObject, Outcome

__all__ = ["ExecutionState", "StepState", "GroupInstance", "LoopState", "TERMINAL", "ACTIVE"]

TERMINAL = frozenset({"completed", "failed", "skipped", "cancelled", "breached"})
ACTIVE = frozenset({"pending", "running", "waiting"})


# The records' fields, by name: their persistence (to_dict, from_dict) walks these. Module
# constants, not ``Cls.__slots__``, which a class compiled by mypyc does not have.
_STEP_FIELDS = (
    "step_id",
    "node_id",
    "node_type",
    "status",
    "group_id",
    "instance_id",
    "iteration",
    "input",
    "output",
    "error",
    "started_at",
    "completed_at",
    "sla_deadline",
    "agent_deadline",
    "responses",
    "resolutions",
    "reviewer_ids",
    "terminal_seq",
    "overridden",
)


class StepState:
    """One step: a node's run. ``responses`` (human) and ``resolutions`` (blocking agent)
    hold what was recorded, keyed by reviewer id / resolution id, in arrival order."""

    __slots__ = _STEP_FIELDS

    def __init__(
        self,
        step_id: str,
        node_id: str,
        node_type: str,
        group_id: str | None,
        instance_id: str | None,
        iteration: int,
        input: JsonObject,
        reviewer_ids: Sequence[str] = (),
    ) -> None:
        self.step_id = step_id
        self.node_id = node_id
        self.node_type = node_type
        self.status = "pending"
        self.group_id = group_id
        self.instance_id = instance_id
        self.iteration = iteration
        self.input = input
        self.output: JsonObject | None = None
        self.error: dict[str, str] | None = None  # {code, message}
        self.started_at: int | None = None
        self.completed_at: int | None = None
        self.sla_deadline: int | None = None
        self.agent_deadline: int | None = None
        self.responses: dict[str, JsonObject] | None = None
        self.resolutions: dict[str, JsonObject] | None = None
        self.reviewer_ids = reviewer_ids
        self.terminal_seq: int | None = None
        self.overridden: str | None = None  # the Resolve Step action that ended it, if any

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def view(self) -> dict[str, Any]:
        """StepView (api-v2 §2.8 + semantics §5.10). Shares nested objects: treat as read-only."""
        return {
            "stepId": self.step_id,
            "nodeId": self.node_id,
            "nodeType": self.node_type,
            "status": self.status,
            "groupId": self.group_id,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "output": self.output if self.output is not None else {},
            "error": self.error,
            "input": self.input,
            "iteration": self.iteration,
            "reviewerIds": list(self.reviewer_ids),
        }

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {name: getattr(self, name) for name in _STEP_FIELDS}
        d["reviewer_ids"] = list(self.reviewer_ids)
        # Arrival order matters (the resolutions list, the first rejecting output) and JSON
        # stores may sort object keys, so keyed records persist as ordered [key, value] pairs.
        for name in ("responses", "resolutions"):
            if d[name] is not None:
                d[name] = [[k, v] for k, v in d[name].items()]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> StepState:
        self = cls(
            d["step_id"], d["node_id"], d["node_type"], d["group_id"], d["instance_id"], d["iteration"], d["input"]
        )
        for name in _STEP_FIELDS:
            value = d[name]
            if value is not None and name in ("responses", "resolutions"):
                value = {k: v for k, v in value}
            setattr(self, name, value)
        return self

    def __repr__(self) -> str:
        return f"StepState({self.step_id!r}, {self.status})"


_GROUP_FIELDS = (
    "instance_id",
    "group_id",
    "iteration",
    "ordinal",
    "member_step_ids",
    "terminal",
    "approved",
    "quorum_met",
    "resolved",
    "completed",
    "closed",
    "decision",
    "first_reject",
    "deferred",
)


class GroupInstance:
    """One run of a parallel group: its member steps started together (semantics §5.5).

    ``approved`` lists member node ids in approval order; ``deferred`` holds the members'
    unrouted bad outcomes ``[seq, code]`` until the group decides whether it routes them.
    ``closed`` marks an instance superseded by a loop restart or the end of the execution.
    """

    __slots__ = _GROUP_FIELDS

    def __init__(self, instance_id: str, group_id: str, iteration: int, ordinal: int) -> None:
        self.instance_id = instance_id
        self.group_id = group_id
        self.iteration = iteration
        self.ordinal = ordinal
        self.member_step_ids: list[str] = []
        self.terminal = 0
        self.approved: list[str] = []
        self.quorum_met = False
        self.resolved = False
        self.completed = False
        self.closed = False
        self.decision: str | None = None
        self.first_reject: JsonObject | None = None
        self.deferred: list[Outcome] = []

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _GROUP_FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GroupInstance:
        self = cls(d["instance_id"], d["group_id"], d["iteration"], d["ordinal"])
        for name in _GROUP_FIELDS:
            setattr(self, name, d[name])
        return self

    def __repr__(self) -> str:
        return f"GroupInstance({self.instance_id!r}, terminal={self.terminal}, approved={self.approved})"


_LOOP_FIELDS = ("loop_id", "iteration", "attempts", "entry_step_id", "exhausted")


class LoopState:
    """A loop's counter (starts at 1) and the history of its rejected attempts."""

    __slots__ = _LOOP_FIELDS

    def __init__(self, loop_id: str) -> None:
        self.loop_id = loop_id
        self.iteration = 1
        self.attempts: list[JsonObject] = []
        self.entry_step_id: str | None = None
        self.exhausted = False

    def to_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _LOOP_FIELDS}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LoopState:
        self = cls(d["loop_id"])
        for name in _LOOP_FIELDS:
            setattr(self, name, d[name])
        return self

    def __repr__(self) -> str:
        return f"LoopState({self.loop_id!r}, iteration={self.iteration})"


_EXEC_SCALARS = (
    "execution_id",
    "definition_id",
    "definition_version",
    "status",
    "correlation_id",
    "idempotency_key",
    "input",
    "started_at",
    "completed_at",
    "cancelled_at",
    "failure_reason",
    "last_seq",
    "instance_counts",
    "unhandled",
)


class ExecutionState:
    """Everything about one execution that the next command may need.

    ``steps`` keeps creation order; ``active`` is the subset not yet terminal (creation
    order, same objects); ``unhandled`` lists ``[seq, code]`` outcomes nothing routed.
    """

    __slots__ = _EXEC_SCALARS + ("steps", "active", "groups", "loops")

    def __init__(
        self,
        execution_id: str,
        definition_id: str,
        definition_version: int,
        correlation_id: str | None,
        idempotency_key: str | None,
        input: JsonObject | None,
        started_at: int,
    ) -> None:
        self.execution_id = execution_id
        self.definition_id = definition_id
        self.definition_version = definition_version
        self.status = "running"
        self.correlation_id = correlation_id
        self.idempotency_key = idempotency_key
        self.input = input if input is not None else {}
        self.started_at = started_at
        self.completed_at: int | None = None
        self.cancelled_at: int | None = None
        self.failure_reason: str | None = None
        self.last_seq = 0
        self.instance_counts: dict[str, int] = {}
        self.unhandled: list[Outcome] = []
        self.steps: dict[str, StepState] = {}
        self.active: dict[str, StepState] = {}
        self.groups: dict[str, GroupInstance] = {}
        self.loops: dict[str, LoopState] = {}

    # ------------------------------------------------------------ queries

    def next_deadline(self) -> int | None:
        """Earliest pending SLA deadline or agent timeout (epoch ms), None when there is none."""
        best: int | None = None
        for step in self.active.values():
            d = step.sla_deadline
            if d is not None and (best is None or d < best):
                best = d
            d = step.agent_deadline
            if d is not None and step.status == "running" and (best is None or d < best):
                best = d
        return best

    def steps_of(self, node_id: str) -> list[StepState]:
        """The steps of one node, in creation order (occurrence 1 is index 0)."""
        return [s for s in self.steps.values() if s.node_id == node_id]

    def view(self) -> dict[str, Any]:
        """ExecutionView (api-v2 §2.8). Shares nested objects: treat as read-only."""
        return {
            "executionId": self.execution_id,
            "status": self.status,
            "startedAt": self.started_at,
            "completedAt": self.completed_at,
            "cancelledAt": self.cancelled_at,
            "definitionId": self.definition_id,
            "definitionVersion": self.definition_version,
            "correlationId": self.correlation_id,
            "idempotencyKey": self.idempotency_key,
            "failureReason": self.failure_reason,
            "steps": [s.view() for s in self.steps.values()],
        }

    # ------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (shares nested values with the state: serialise it, do not mutate it)."""
        d: dict[str, Any] = {name: getattr(self, name) for name in _EXEC_SCALARS}
        d["format"] = 1
        d["steps"] = [s.to_dict() for s in self.steps.values()]
        d["groups"] = [g.to_dict() for g in self.groups.values()]
        d["loops"] = [lp.to_dict() for lp in self.loops.values()]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ExecutionState:
        if d.get("format", 1) != 1:
            raise ValueError(f"unknown execution state format {d.get('format')!r}")
        self = cls(
            d["execution_id"],
            d["definition_id"],
            d["definition_version"],
            d["correlation_id"],
            d["idempotency_key"],
            d["input"],
            d["started_at"],
        )
        for name in _EXEC_SCALARS:
            setattr(self, name, d[name])
        self.steps = {}
        self.active = {}
        for sd in d["steps"]:
            step = StepState.from_dict(sd)
            self.steps[step.step_id] = step
            if step.status not in TERMINAL:
                self.active[step.step_id] = step
        self.groups = {g["instance_id"]: GroupInstance.from_dict(g) for g in d["groups"]}
        self.loops = {lp["loop_id"]: LoopState.from_dict(lp) for lp in d["loops"]}
        return self

    def copy(self) -> ExecutionState:
        """An independent deep copy (not for the hot loop)."""
        return ExecutionState.from_dict(_copy.deepcopy(self.to_dict()))

    def __repr__(self) -> str:
        return f"ExecutionState({self.execution_id!r}, {self.status}, steps={len(self.steps)})"
