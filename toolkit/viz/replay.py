"""Rebuild an execution's step statuses from its event log, up to any ``seq``.

What a player widget needs to scrub through an execution: events as Get Execution Events
returns them (dicts with ``seq``, ``type``, ``stepId``, ``data``) or engine
:class:`~toolkit.engine.Event` objects. External events are enough; internal ones
(``step.scheduled``, ``step.response-recorded``...) make the picture more precise (node ids
and iterations of new steps, which reviewers have answered).

>>> events = [
...     {"seq": 1, "type": "execution.dispatched", "stepId": None, "data": {"rootStepIds": ["step_a_0_abcdef"]}},
...     {"seq": 2, "type": "step.completed", "stepId": "step_a_0_abcdef", "data": {"agentId": "w"}},
...     {"seq": 5, "type": "step.awaiting-approval", "stepId": "step_a_0_abcdef__to__review", "data": {}}]
>>> view = replay(events, upto_seq=5)
>>> [(s["nodeId"], s["status"]) for s in view["steps"]]
[('a', 'completed'), ('review', 'waiting')]
>>> [(s["nodeId"], s["status"]) for s in replay(events, upto_seq=1)["steps"]]
[('a', 'running')]
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["replay", "node_of_step_id", "parent_of_step_id", "event_dict"]

_ROOT = re.compile(r"^step_(.+)_\d+_[0-9A-Za-z]{6}$")
_HASHED = re.compile(r"^step_(.+)_[0-9a-f]{20}$")
_STEP_STATUS = {
    "step.failed": "failed",
    "step.breached": "breached",
    "step.cancelled": "cancelled",
    "step.scheduled": "pending",
    "step.started": "running",
    "step.awaiting-approval": "waiting",
}
_TERMINAL_EVENTS = frozenset({"step.failed", "step.breached", "step.cancelled"})
_END = {"execution.completed": "completed", "execution.failed": "failed", "execution.cancelled": "cancelled"}


def node_of_step_id(step_id: str) -> str | None:
    """The node a step id belongs to (semantics §5.2), or None when it cannot be told.

    >>> node_of_step_id("step_draft_1767225600000_95aeee__to__legal-review__e3")
    'legal-review'
    >>> node_of_step_id("group_review-board__to__draft__i2"), node_of_step_id("step_draft_1_abc123")
    ('draft', 'draft')
    """
    base = re.sub(r"__d\d+$", "", step_id or "")
    if "__to__" in base:
        return base.rsplit("__to__", 1)[1].split("__", 1)[0] or None
    match = _ROOT.match(base) or _HASHED.match(base)
    return match.group(1) if match else None


def parent_of_step_id(step_id: str) -> tuple[str, str] | None:
    """``("step", parentStepId)`` or ``("group", groupId)`` for a step created by an edge;
    None for roots (and for shortened ids, which keep no parent)."""
    if not step_id or "__to__" not in step_id:
        return None
    parent = step_id.rsplit("__to__", 1)[0]
    if parent.startswith("group_"):
        return "group", parent[6:]
    return "step", parent


def event_dict(event) -> dict:
    """An event as a dict with ``seq, type, stepId, data`` (engine Events are converted)."""
    if isinstance(event, dict):
        if "stepId" not in event and "step_id" in event:
            event = {**event, "stepId": event["step_id"]}
        return event
    return event.to_json()


def replay(events, upto_seq: int | None = None, reviewers: dict[str, list[str]] | None = None) -> dict:
    """An ExecutionView-like dict rebuilt from ``events`` with ``seq <= upto_seq`` (all when None).

    Beyond the ExecutionView fields, each step carries ``answeredBy`` (reviewers who have
    answered, when the log shows it) and the view carries ``loops`` ``{loopId: iteration}``,
    ``quorumMet`` (group ids), ``seq`` (the last applied) and ``lastEvent``.
    ``reviewers`` maps a human node id to its declared reviewer ids.
    """
    reviewers = reviewers or {}
    view: dict[str, Any] = {
        "executionId": None,
        "status": "running",
        "failureReason": None,
        "steps": [],
        "loops": {},
        "quorumMet": [],
        "seq": 0,
        "lastEvent": None,
    }
    steps: dict[str, dict] = {}

    def step(step_id: str | None, node_id: str | None = None) -> dict | None:
        if not step_id:
            return None
        found = steps.get(step_id)
        if found is None:
            node_id = node_id or node_of_step_id(step_id)
            if node_id is None:
                return None
            match = re.search(r"__i(\d+)", step_id.rsplit("__to__", 1)[-1])
            found = steps[step_id] = {
                "stepId": step_id,
                "nodeId": node_id,
                "status": "running",
                "iteration": int(match.group(1)) if match else 1,
                "reviewerIds": list(reviewers.get(node_id, [])),
                "answeredBy": [],
                "output": {},
            }
            view["steps"].append(found)
        return found

    ordered = sorted((event_dict(e) for e in events), key=lambda e: e["seq"])
    for event in ordered:
        if upto_seq is not None and event["seq"] > upto_seq:
            break
        kind, data, step_id = event["type"], event.get("data") or {}, event.get("stepId")
        view["seq"], view["lastEvent"] = event["seq"], event
        if kind == "execution.dispatched":
            for root in data.get("rootStepIds") or []:
                step(root)
        elif kind in _END:
            view["status"] = _END[kind]
            view["failureReason"] = data.get("failureReason", view["failureReason"])
        elif kind == "loop.iteration-started":
            view["loops"][data.get("loopId")] = data.get("iteration", 1)
            s = step(step_id)
            if s is not None:
                s["iteration"] = data.get("iteration", s["iteration"])
        elif kind == "group.quorum-met":
            if data.get("groupId") not in view["quorumMet"]:
                view["quorumMet"].append(data.get("groupId"))
        elif kind.startswith("step."):
            s = step(step_id, data.get("nodeId"))
            if s is None:
                continue
            if kind == "step.scheduled" and "iteration" in data:
                s["iteration"] = data["iteration"]
            if kind == "step.completed":
                s["status"] = "skipped" if data.get("status") == "skipped" else "completed"
                if "decision" in data:
                    s["output"] = {"decision": data["decision"]}
            elif kind == "step.response-recorded" and data.get("reviewerId"):
                s["answeredBy"].append(data["reviewerId"])
            elif kind in _TERMINAL_EVENTS:
                s["status"] = _STEP_STATUS[kind]
            elif kind in _STEP_STATUS and s["status"] in ("pending", "running", "waiting"):
                s["status"] = _STEP_STATUS[kind]
    return view
