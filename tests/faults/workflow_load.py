"""Workflow load: definitions created and updated, executions dispatched with idempotency
keys and driven by reviewer decisions, agent resolutions, overrides and cancellations.

Each worker owns its definitions (facts ``("definition", owner, id)`` = ``(version, name)``)
and its executions (an :class:`ExecutionRecord` per idempotency key, in
``ledger.executions()``), so what each acknowledged command promised is known exactly.
faults.workflow_checks holds what is checked after a restart.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

from api.support import (
    AGENT_RESOLUTION,
    DECIDE,
    DEF_CREATE,
    DEF_LIST,
    DEF_UPDATE,
    DISPATCH,
    EVENTS,
    EXEC_CANCEL,
    EXEC_GET,
    EXEC_LIST,
    RESOLVE,
    STEP_CANCEL,
    blocking_agent_definition,
    external_agent_definition,
    human_definition,
)

from faults.context import Ctx
from faults.registry import operation

# ann and bob must both approve; cy is optional. The SLA kind has one mandatory reviewer.
REVIEWERS = [
    {"userId": "ann", "mandatory": True},
    {"userId": "bob", "mandatory": True},
    {"userId": "cy", "mandatory": False},
]
SLA_REVIEWERS = [{"userId": "ann", "mandatory": True}]
KINDS = ("review", "gate", "external", "sla")
SLA_CHOICES_MS = (1500, 3000, 6000)
ACTIONABLE = {"review": "review", "sla": "review", "gate": "gate", "external": "work"}  # kind -> node decided
MAX_DEFINITIONS = 8


def definition_body(kind: str, definition_id: str, name: str, sla_ms: int | None = None) -> dict:
    if kind == "review":
        body = human_definition(definition_id, reviewers=REVIEWERS)
    elif kind == "sla":
        body = human_definition(definition_id, reviewers=SLA_REVIEWERS, sla_ms=sla_ms)
    elif kind == "gate":
        body = blocking_agent_definition(definition_id, expected=2)
    else:
        body = external_agent_definition(definition_id)
    return {**body, "name": name}


@dataclass
class Command:
    """One write on an execution: ``kind`` is decide, resolution, resolve, cancelStep or
    cancelExecution; ``result`` is the acknowledged answer (None while unknown)."""

    kind: str
    step_id: str | None
    args: dict
    result: dict | None = None


@dataclass
class ExecutionRecord:
    key: str  # the idempotencyKey
    owner: Hashable
    kind: str
    definition_id: str
    definition_version: int | None  # the version current when it was dispatched
    sla_ms: int | None = None
    crossing: bool = False  # dispatched just before a kill, its SLA due while the server is down
    execution_id: str | None = None
    dispatch_known: bool = False  # acknowledged, or found by a check
    acked: list[Command] = field(default_factory=list)
    unknown: list[Command] = field(default_factory=list)  # in flight at a kill, not yet looked at
    undetermined: list[Command] = field(default_factory=list)  # in flight, effect not visible: may explain an end
    checked: bool = False  # verified since it last changed
    ended: bool = False  # seen ended: the load leaves it alone
    timer_fired: bool = False  # its SLA breach was seen


# ------------------------------------------------------------------ shared with the checks


def create_definition_of(ctx: Ctx, kind: str, sla_ms: int | None = None) -> str | None:
    definition_id = ctx.new_id(f"{kind}-")
    name = f"{kind} {definition_id} v1"
    ctx.state.setdefault("defs", {})[definition_id] = (kind, sla_ms)
    result = ctx.write(
        DEF_CREATE,
        definition_body(kind, definition_id, name, sla_ms),
        {("definition", ctx.owner, definition_id): (1, name)},
        ok=lambda r: r["version"] == 1 and r["definitionId"] == definition_id,
    )
    return definition_id if result is not None else None


def dispatch_record(
    ctx: Ctx, definition_id: str, *, crossing: bool = False, extra: dict | None = None
) -> ExecutionRecord:
    """Dispatch a new execution with a fresh idempotency key (and ``extra`` request fields, a
    webhook say); its record is kept whatever happens."""
    kind, sla_ms = ctx.state["defs"][definition_id]
    version = ctx.ledger.value(("definition", ctx.owner, definition_id))[0]
    rec = ExecutionRecord(ctx.new_id("key"), ctx.owner, kind, definition_id, version, sla_ms, crossing)
    ctx.ledger.add_execution(rec)

    def acked(result):
        rec.execution_id, rec.dispatch_known = result["executionId"], True
        if result["deduplicated"] is not False:
            ctx.report.duplicate(f"dispatch with the new key {rec.key} answered deduplicated: {result}")

    # (kept even when refused or answered 5xx, both reported: a check retries the key)
    ctx.write(
        DISPATCH,
        {
            "definitionId": definition_id,
            "idempotencyKey": rec.key,
            "correlationId": f"corr-{rec.key}",
            "triggerContext": {"owner": str(ctx.owner)},
            **(extra or {}),
        },
        on_ack=acked,
    )
    return rec


def send(
    ctx: Ctx, rec: ExecutionRecord, kind: str, step_id: str | None, path: str, data: dict, *, ok=None, allow=()
) -> Any:
    """One command on an execution, recorded in its log (acknowledged or unknown)."""
    command = Command(kind, step_id, data)

    def acked(result):
        command.result = result
        rec.acked.append(command)

    rec.checked = False
    return ctx.write(path, data, ok=ok, on_ack=acked, on_unknown=lambda: rec.unknown.append(command), allow=allow)


def decide(ctx: Ctx, rec: ExecutionRecord, step_id: str, reviewer: str, decision: str, allow=()) -> Any:
    return send(
        ctx,
        rec,
        "decide",
        step_id,
        DECIDE,
        {
            "executionId": rec.execution_id,
            "stepId": step_id,
            "reviewerId": reviewer,
            "decision": decision,
            "reason": f"{decision} by {reviewer}",
        },
        ok=lambda r: r["recorded"] is True,
        allow=allow,
    )


def resolution(ctx: Ctx, rec: ExecutionRecord, step_id: str, status: str = "success", decision: str = "approve") -> Any:
    data = {"executionId": rec.execution_id, "stepId": step_id, "resolutionId": ctx.new_id("res"), "status": status}
    if status == "success":
        data["output"] = {"decision": decision, "reason": f"{decision} by the classifier"}
    else:
        data["errorMessage"] = "the classifier gave up"
    return send(ctx, rec, "resolution", step_id, AGENT_RESOLUTION, data, ok=lambda r: r["recorded"] is True)


def decided_by(rec: ExecutionRecord, step_id: str) -> set[str]:
    return {c.args["reviewerId"] for c in rec.acked if c.kind == "decide" and c.step_id == step_id}


def active_step(view: dict, kind: str) -> dict | None:
    """The step the load acts on: the waiting review or gate, or the running external work."""
    node = ACTIONABLE[kind]
    return next((s for s in view["steps"] if s["nodeId"] == node and s["status"] in ("waiting", "running")), None)


def timer_races(rec: ExecutionRecord) -> tuple[str, ...]:
    """A command may meet a step its timer just ended (an SLA breach; an external agent past
    its 10-minute agentMaxRuntimeMs in a long soak): that refusal is expected."""
    return ("FAILED_PRECONDITION",) if rec.kind in ("sla", "external") else ()


def open_records(ctx: Ctx) -> list[ExecutionRecord]:
    return [r for r in ctx.ledger.executions(ctx.owner) if r.dispatch_known and not r.ended]


# ------------------------------------------------------------------ operations


@operation(2)
def create_definition(ctx: Ctx) -> None:
    if len(ctx.ledger.keys("definition", ctx.owner, present=True)) >= MAX_DEFINITIONS:
        return update_definition(ctx)
    kind = ctx.rng.choice(KINDS)
    create_definition_of(ctx, kind, ctx.rng.choice(SLA_CHOICES_MS) if kind == "sla" else None)


@operation(2)
def update_definition(ctx: Ctx) -> None:
    present = ctx.ledger.keys("definition", ctx.owner, present=True)
    if not present:
        return create_definition(ctx)
    key = ctx.rng.choice(sorted(present))
    definition_id = key[2]
    version, _ = ctx.ledger.value(key)
    kind, sla_ms = ctx.state["defs"][definition_id]
    name = f"{kind} {definition_id} v{version + 1}"
    body = {**definition_body(kind, definition_id, name, sla_ms), "ifVersion": version}
    ctx.write(DEF_UPDATE, body, {key: (version + 1, name)}, ok=lambda r: r["version"] == version + 1)


@operation(12)
def dispatch(ctx: Ctx) -> None:
    present = ctx.ledger.keys("definition", ctx.owner, present=True)
    if not present:
        return create_definition(ctx)
    mine = [r for r in ctx.ledger.executions(ctx.owner) if r.dispatch_known]
    if mine and ctx.rng.random() < 0.1:  # a client retrying a dispatch it already made
        rec = ctx.rng.choice(mine)
        result = ctx.write(DISPATCH, {"definitionId": rec.definition_id, "idempotencyKey": rec.key})
        if result is not None and (result["executionId"], result["deduplicated"]) != (rec.execution_id, True):
            ctx.report.duplicate(f"dispatch retried with key {rec.key} gave {result}, not {rec.execution_id}")
        return
    dispatch_record(ctx, ctx.rng.choice(sorted(present))[2])


@operation(26)
def act_on_execution(ctx: Ctx) -> None:
    """Read one of this worker's executions and make one move on its active step."""
    records = open_records(ctx)
    if not records:
        return dispatch(ctx)
    rec = ctx.rng.choice(records)
    view = ctx.read(EXEC_GET, {"executionId": rec.execution_id}, allow=("NOT_FOUND",))
    if view is None:
        ctx.report.loss(f"execution {rec.execution_id} (key {rec.key}) was acknowledged, now NOT_FOUND")
        rec.ended = True
        return
    step = active_step(view, rec.kind)
    if view["status"] != "running" or step is None:
        rec.ended = True
        return
    allow = timer_races(rec)
    roll, eid, sid = ctx.rng.random(), rec.execution_id, step["stepId"]
    if roll < 0.05:
        send(
            ctx,
            rec,
            "cancelExecution",
            None,
            EXEC_CANCEL,
            {"executionId": eid, "reason": "withdrawn"},
            ok=lambda r: r["cancelled"] is True,
            allow=allow,
        )
    elif roll < 0.08:
        send(
            ctx,
            rec,
            "cancelStep",
            sid,
            STEP_CANCEL,
            {"executionId": eid, "stepId": sid, "actorId": "ops", "reason": "not needed"},
            ok=lambda r: r["cancelled"] is True,
            allow=allow,
        )
    elif rec.kind == "external":
        action = "force-complete" if roll < 0.8 else "force-fail"
        send(
            ctx,
            rec,
            "resolve",
            sid,
            RESOLVE,
            {
                "executionId": eid,
                "stepId": sid,
                "action": action,
                "actorId": "outside-system",
                "output": {"n": ctx.rng.randrange(99)},
            },
            ok=lambda r: r["resolved"] is True,
            allow=allow,
        )
    elif rec.kind == "gate":
        if roll < 0.15 and any(c.kind == "resolution" and c.step_id == sid for c in rec.acked):
            replay = next(c for c in rec.acked if c.kind == "resolution" and c.step_id == sid)
            result = ctx.write(AGENT_RESOLUTION, replay.args)
            if result is not None and result["recorded"] is not False:
                ctx.report.duplicate(f"resolution {replay.args['resolutionId']} replayed was recorded again: {result}")
            return
        status = "failure" if roll < 0.2 else "success"
        resolution(ctx, rec, sid, status, "reject" if roll > 0.95 else "approve")
    elif roll < 0.14:
        action = ctx.rng.choice(("force-approve", "force-reject", "reviewer-reject"))
        actor = "ann" if action.startswith("reviewer") else "ops"
        send(
            ctx,
            rec,
            "resolve",
            sid,
            RESOLVE,
            {"executionId": eid, "stepId": sid, "action": action, "actorId": actor, "reason": "override"},
            ok=lambda r: r["resolved"] is True,
            allow=allow,
        )
    elif rec.kind == "sla" and roll < 0.6:
        return  # leave some SLA steps alone so their timers fire
    else:
        reviewers = [r["userId"] for r in (SLA_REVIEWERS if rec.kind == "sla" else REVIEWERS)]
        left = [r for r in reviewers if r not in decided_by(rec, sid)]
        if left:
            decide(ctx, rec, sid, ctx.rng.choice(left), "reject" if roll > 0.93 else "approve", allow=allow)


@operation(6)
def read_events(ctx: Ctx) -> None:
    """Page through one execution's events; they must come in strictly increasing ``seq``."""
    records = [r for r in ctx.ledger.executions(ctx.owner) if r.dispatch_known]
    if not records:
        return
    rec = ctx.rng.choice(records)
    events = ctx.pages(
        EVENTS,
        {"executionId": rec.execution_id, "sinceSeq": 0, "pageSize": ctx.rng.choice((3, 100, 500))},
        token_field="sinceSeq",
        next_field="nextCursor",
        items="events",
    )
    if events is None:
        return
    seqs = [e["seq"] for e in events]
    if seqs != sorted(set(seqs)) or len({e["eventId"] for e in events}) != len(events):
        ctx.report.duplicate(f"events of {rec.execution_id}: seq {seqs} or repeated event ids")


@operation(1)
def list_workflow(ctx: Ctx) -> None:
    if ctx.rng.random() < 0.5:
        ctx.read(DEF_LIST, {"pageSize": 20})
    else:
        ctx.read(EXEC_LIST, {"pageSize": 20, "status": "running"})
