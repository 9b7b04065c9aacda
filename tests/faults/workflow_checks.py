"""After a restart: definitions and executions are whole, every acknowledged command is in
effect, retried dispatches and commands are idempotent, SLA timers still fire, and waiting
steps can still be decided to the end.

Writes whose answer a kill swallowed are retried here, as a client would retry them: a
dispatch with the same idempotency key, a decision or agent resolution with the same ids.
"""

from __future__ import annotations

import time

from api.support import (
    AGENT_RESOLUTION,
    DECIDE,
    DEF_GET,
    DISPATCH,
    EVENTS,
    EXEC_GET,
    EXEC_LIST,
    EXTERNAL_TYPES,
    RESOLVE,
)

from faults.context import Ctx
from faults.ledger import ABSENT
from faults.registry import check
from faults.workflow_load import (
    ACTIONABLE,
    REVIEWERS,
    Command,
    ExecutionRecord,
    active_step,
    decide,
    decided_by,
    resolution,
    send,
    timer_races,
)

DEEP = 150  # executions changed since the last check, verified in depth (a sample when more)
RESAMPLE = 25  # executions verified before, verified again at random after each restart
RESUME = 4  # executions driven to their end after each restart
SLA_LOOKAHEAD_MS = 3000
SLA_GRACE_S = 15.0  # how late a breach may be seen after its deadline (a restart takes ~5 s)

STEP_END_EVENT = {
    "completed": "step.completed",
    "skipped": "step.completed",
    "failed": "step.failed",
    "cancelled": "step.cancelled",
    "breached": "step.breached",
}
STEP_END_EVENTS = set(STEP_END_EVENT.values())
RESOLVED_AS = {
    "force-approve": ("completed", "approve"),
    "reviewer-approve": ("completed", "approve"),
    "force-reject": ("completed", "reject"),
    "reviewer-reject": ("completed", "reject"),
    "force-complete": ("completed", None),
    "force-fail": ("failed", None),
}


def _where(rec: ExecutionRecord) -> str:
    return f"execution {rec.execution_id} (key {rec.key}, {rec.kind})"


def events_of(ctx: Ctx, execution_id: str) -> list | None:
    return ctx.pages(
        EVENTS,
        {"executionId": execution_id, "sinceSeq": 0, "pageSize": 500},
        token_field="sinceSeq",
        next_field="nextCursor",
        items="events",
    )


@check("online")
def definitions_intact(ctx: Ctx) -> None:
    """Every acknowledged create and update is there, with the version it answered."""
    for owner in ctx.run.owners:
        for key in ctx.ledger.keys("definition", owner):
            view = ctx.find(DEF_GET, {"definitionId": key[2]})
            if view is not None:
                ctx.ledger.settle(key, view if view is ABSENT else (view["version"], view["name"]))


@check("online")
def executions_intact(ctx: Ctx) -> None:
    """Every acknowledged dispatch is listed once under its key; the executions a kill left
    unsure, and a sample of the others (all of them when few), are whole and deduplicated
    by their key, with every acknowledged command in effect."""
    records = ctx.ledger.executions()
    for rec in records:
        if not rec.dispatch_known:
            settle_dispatch(ctx, rec)
    listed = ctx.pages(EXEC_LIST, {"pageSize": 100}, token_field="cursor", next_field="nextCursor", items="items")
    missing = set() if listed is None else check_listed(ctx, records, listed)
    records = [r for r in records if r.dispatch_known and r.key not in missing]
    touched = [r for r in records if not r.checked and not r.unknown]
    before = [r for r in records if r.checked and not r.unknown]
    deep = (
        [r for r in records if r.unknown]
        + ctx.rng.sample(touched, min(DEEP, len(touched)))
        + ctx.rng.sample(before, min(RESAMPLE, len(before)))
    )
    for rec in deep:
        verify_execution(ctx, rec)
    for rec in touched:
        rec.checked = True  # listed with its key and status; its commands were sampled
    ctx.report.count("executions found listed (summed over checks)", len(records))
    ctx.report.count("executions verified in depth (summed over checks)", len(deep))


def settle_dispatch(ctx: Ctx, rec: ExecutionRecord) -> None:
    """A dispatch in flight at the kill, retried with its key as the client would: the answer
    tells whether the first one happened."""
    first = ctx.write(DISPATCH, {"definitionId": rec.definition_id, "idempotencyKey": rec.key})
    if first is None:
        return
    ctx.report.count("in-flight write " + ("applied" if first["deduplicated"] else "not applied"))
    rec.execution_id, rec.dispatch_known, rec.checked = first["executionId"], True, False
    if not first["deduplicated"]:
        rec.definition_version = None  # dispatched now: an update in flight may have moved the version


def check_listed(ctx: Ctx, records: list[ExecutionRecord], listed: list[dict]) -> set[str]:
    """List executions shows each acknowledged one once, with its key (and cancelled when a
    cancel was acknowledged). Returns the keys of those missing."""
    by_id: dict[str, dict] = {}
    keys: dict[tuple, str] = {}
    for item in listed:
        if item["executionId"] in by_id:
            ctx.report.duplicate(f"execution {item['executionId']} is listed twice")
        by_id[item["executionId"]] = item
        key = (item["definitionId"], item["idempotencyKey"])
        if item["idempotencyKey"] is not None and keys.setdefault(key, item["executionId"]) != item["executionId"]:
            ctx.report.duplicate(f"two executions for the key {key}: {keys[key]}, {item['executionId']}")
    missing = set()
    for rec in records:
        if not rec.dispatch_known:
            continue
        item = by_id.get(rec.execution_id)
        if item is None:
            ctx.report.loss(f"{_where(rec)}: acknowledged dispatch, not listed")
            missing.add(rec.key)
            rec.ended = rec.checked = True
        elif item["idempotencyKey"] != rec.key:
            ctx.report.problem(f"{_where(rec)}: listed with the key {item['idempotencyKey']}")
        elif any(c.kind == "cancelExecution" for c in rec.acked) and item["status"] != "cancelled":
            ctx.report.loss(f"{_where(rec)}: cancel acknowledged, listed as {item['status']}")
    return missing


def verify_execution(ctx: Ctx, rec: ExecutionRecord) -> None:
    key = {"definitionId": rec.definition_id, "idempotencyKey": rec.key}
    view = ctx.find(EXEC_GET, {"executionId": rec.execution_id})
    if view is ABSENT:
        ctx.report.loss(f"{_where(rec)}: acknowledged dispatch, now NOT_FOUND")
        rec.ended = rec.checked = True
        return
    again = ctx.write(DISPATCH, key)
    if view is None or again is None:
        return
    if (again["executionId"], again["deduplicated"]) != (rec.execution_id, True):
        ctx.report.duplicate(f"{_where(rec)}: dispatch retried after the restart answered {again}")
    expected = (rec.key, rec.definition_id, rec.definition_version or view["definitionVersion"])
    if (view["idempotencyKey"], view["definitionId"], view["definitionVersion"]) != expected:
        ctx.report.problem(
            f"{_where(rec)}: key, definition, version {view['idempotencyKey']}, "
            f"{view['definitionId']}, {view['definitionVersion']}; expected {expected}"
        )
    view, events = settled(ctx, rec, view)
    if view is None or events is None:
        return
    check_structure(ctx, rec, view, events)
    unknown, rec.unknown = rec.unknown, []
    for command in list(rec.acked):
        check_acked(ctx, rec, view, command)
    check_step_ends_explained(ctx, rec, view, unknown)
    for command in unknown:
        retry_unknown(ctx, rec, view, command)
    rec.checked = True


def settled(ctx: Ctx, rec: ExecutionRecord, view: dict, tries: int = 5) -> tuple[dict | None, list | None]:
    """The execution's view and its events as one moment: the events read between two equal
    views. The view and the events are two requests, and the servers' own work (a deadline
    firing, an agent run finishing) goes on during the checks; a state and its events are
    written in one transaction, so events read between two equal views belong to that view."""
    for _ in range(tries):
        events = events_of(ctx, rec.execution_id)
        after = ctx.read(EXEC_GET, {"executionId": rec.execution_id})
        if events is None or after is None or after == view:
            return view, events
        view = after
    ctx.report.problem(f"{_where(rec)}: still changing after {tries} reads of its view and events")
    return None, None


def check_structure(ctx: Ctx, rec: ExecutionRecord, view: dict, events: list) -> None:
    """No step or event twice, ``seq`` strictly increasing, statuses and events agree."""
    where, report = _where(rec), ctx.report
    step_ids = [s["stepId"] for s in view["steps"]]
    if len(step_ids) != len(set(step_ids)):
        report.duplicate(f"{where}: a step id appears twice: {step_ids}")
    seqs = [e["seq"] for e in events]
    if len(seqs) != len(set(seqs)) or len({e["eventId"] for e in events}) != len(events):
        report.duplicate(f"{where}: an event appears twice: seq {seqs}")
    elif seqs != sorted(seqs):
        report.problem(f"{where}: seq not increasing: {seqs}")
    types = [e["type"] for e in events]
    if not types or types[0] != "execution.dispatched" or not set(types) <= EXTERNAL_TYPES:
        report.problem(f"{where}: events {types}")
    ends = [t for t in types if t.startswith("execution.") and t != "execution.dispatched"]
    expected_ends = [] if view["status"] == "running" else [f"execution.{view['status']}"]
    if ends != expected_ends or (ends and types[-1] != ends[0]):
        (report.duplicate if len(ends) > 1 else report.problem)(
            f"{where}: status {view['status']} with execution events {ends} (last {types[-1:]})"
        )
    steps = {s["stepId"]: s for s in view["steps"]}
    strays = {e["stepId"] for e in events if e["stepId"] is not None} - set(steps)
    if strays:
        report.problem(f"{where}: events of steps the execution does not have: {sorted(strays)}")
    for sid, step in steps.items():
        mine = [e["type"] for e in events if e["stepId"] == sid]
        step_ends = [t for t in mine if t in STEP_END_EVENTS]
        expected = [STEP_END_EVENT[step["status"]]] if step["status"] in STEP_END_EVENT else []
        if mine.count("step.awaiting-approval") > 1 or len(step_ends) > 1:
            report.duplicate(f"{where}: step {sid} ({step['status']}) has events {mine}")
        elif step_ends != expected:
            report.problem(f"{where}: step {sid} is {step['status']} but its events are {mine}")


def check_acked(ctx: Ctx, rec: ExecutionRecord, view: dict, command: Command) -> None:
    """One acknowledged command is in effect."""
    where = f"{_where(rec)}: acknowledged {command.kind} {command.args}"
    if command.kind == "cancelExecution":
        if view["status"] != "cancelled":
            ctx.report.loss(f"{where}: the execution is {view['status']}")
        return
    step = next((s for s in view["steps"] if s["stepId"] == command.step_id), None)
    if step is None:
        ctx.report.loss(f"{where}: the step is gone")
        return
    status, output = step["status"], step["output"] or {}
    if command.kind == "cancelStep" and status != "cancelled":
        ctx.report.loss(f"{where}: the step is {status}")
    elif command.kind == "resolve":
        want_status, want_decision = RESOLVED_AS[command.args["action"]]
        if status != want_status or (want_decision and output.get("decision") != want_decision):
            ctx.report.loss(f"{where}: the step is {status} with decision {output.get('decision')}")
    elif command.kind == "decide":
        check_decision(ctx, where, command, status, output, timer_races(rec))
    elif command.kind == "resolution":
        if command.result["resumeScheduled"] and status not in ("completed", "failed"):
            ctx.report.loss(f"{where}: it resolved the step, which is {status}")
        replay = ctx.write(AGENT_RESOLUTION, command.args)
        if replay is not None and replay["recorded"] is not False:
            ctx.report.loss(f"{where}: replayed after the restart it was recorded anew: {replay}")


def check_decision(ctx: Ctx, where: str, command: Command, status: str, output: dict, allow=()) -> None:
    reviewer, decision = command.args["reviewerId"], command.args["decision"]
    if command.result["resumeScheduled"]:
        if status != "completed" or output.get("decision") != decision:
            ctx.report.loss(f"{where}: it resolved the step, which is {status} with {output.get('decision')}")
    elif status == "waiting":
        replay = ctx.write(DECIDE, command.args, allow=allow)
        if replay is not None and (replay["recorded"], replay.get("rejectionReason")) != (False, "idempotent"):
            ctx.report.loss(f"{where}: replayed after the restart it was recorded anew: {replay}")
    elif "reviewers" in output:  # completed by its reviewers: the record lists every response
        given = next((r["decision"] for r in output["reviewers"] if r["userId"] == reviewer), None)
        if given != decision:
            ctx.report.loss(f"{where}: the completed step records {reviewer}'s decision as {given}")


def check_step_ends_explained(ctx: Ctx, rec: ExecutionRecord, view: dict, unknown: list[Command]) -> None:
    """A decided step ended only through a write of ours (or its SLA timer)."""
    commands = rec.acked + unknown + rec.undetermined
    cancelled = any(c.kind == "cancelExecution" for c in commands)
    for step in view["steps"]:
        if step["nodeId"] != ACTIONABLE[rec.kind] or step["status"] in ("waiting", "running", "pending"):
            continue
        if step["status"] == "breached" and rec.sla_ms is not None:
            continue
        if step["status"] == "failed" and (step.get("error") or {}).get("code") == "agent-timeout":
            continue
        if not cancelled and not any(c.step_id == step["stepId"] for c in commands):
            ctx.report.problem(f"{_where(rec)}: step {step['stepId']} is {step['status']} but no write ended it")


def retry_unknown(ctx: Ctx, rec: ExecutionRecord, view: dict, command: Command) -> None:
    """Find out whether a command in flight at the kill happened, retrying the idempotent
    ones; what happened joins the acknowledged log (so later checks expect it too)."""
    step = next((s for s in view["steps"] if s["stepId"] == command.step_id), None)
    status = step["status"] if step else None
    output = (step or {}).get("output") or {}
    # what the command answered had it got through; it did not end a step still waiting
    assumed = {"recorded": True, "resumeScheduled": False, "resolved": True, "cancelled": True}
    verdict = "undetermined"
    if command.kind in ("decide", "resolution") and status == "waiting":
        path = DECIDE if command.kind == "decide" else AGENT_RESOLUTION
        again = ctx.write(path, command.args, allow=("FAILED_PRECONDITION",))
        if again is not None:
            verdict = "applied" if again["recorded"] is False else "not applied"
            if again["recorded"]:  # it had not happened; the retry made it happen
                rec.acked.append(Command(command.kind, command.step_id, command.args, again))
    elif command.kind == "decide" and "reviewers" in output:
        given = next((r["decision"] for r in output["reviewers"] if r["userId"] == command.args["reviewerId"]), None)
        verdict = "applied" if given == command.args["decision"] else "not applied"
    elif command.kind == "cancelExecution":
        verdict = "applied" if view["status"] == "cancelled" else "not applied"
    elif command.kind == "cancelStep":
        verdict = "applied" if status == "cancelled" else "not applied"
    elif command.kind == "resolve":
        want_status, want_decision = RESOLVED_AS[command.args["action"]]
        verdict = (
            "applied"
            if status == want_status and (want_decision is None or output.get("decision") == want_decision)
            else "not applied"
        )
    if verdict == "applied":
        rec.acked.append(Command(command.kind, command.step_id, command.args, assumed))
    elif verdict == "undetermined":
        rec.undetermined.append(command)
    ctx.report.count(f"in-flight write {verdict}")


@check("online")
def sla_timers_fire(ctx: Ctx) -> None:
    """An SLA deadline set before a kill still fires after the restart (never early)."""
    records = [r for r in ctx.ledger.executions() if r.sla_ms is not None and r.dispatch_known and not r.timer_fired]
    for rec in records:
        view = ctx.find(EXEC_GET, {"executionId": rec.execution_id})
        if view is None or view is ABSENT:
            continue  # a loss is reported by executions_intact
        step = next(s for s in view["steps"] if s["nodeId"] == "review")
        due = step["startedAt"] + rec.sla_ms
        if step["status"] == "waiting" and due <= time.time() * 1000 + SLA_LOOKAHEAD_MS:
            step = wait_for_breach(ctx, rec, due, step)
        if step["status"] == "breached":
            rec.timer_fired = True
            ctx.report.count("SLA timers fired" + (" (due while the server was down)" if rec.crossing else ""))
            if step["completedAt"] < due:
                ctx.report.problem(f"{_where(rec)}: breached at {step['completedAt']}, before its deadline {due}")
        elif step["status"] == "waiting" and due < time.time() * 1000 - SLA_GRACE_S * 1000:
            ctx.report.problem(f"{_where(rec)}: SLA due at {due} never fired (step still waiting)")
        elif rec.crossing and step["status"] != "breached":
            ctx.report.problem(
                f"{_where(rec)}: its SLA fell due while the server was down; the step is {step['status']}"
            )


def wait_for_breach(ctx: Ctx, rec: ExecutionRecord, due: int, step: dict) -> dict:
    give_up = due / 1000 + SLA_GRACE_S
    while step["status"] == "waiting" and time.time() < give_up:
        time.sleep(0.2)
        view = ctx.read(EXEC_GET, {"executionId": rec.execution_id})
        if view is None:
            break
        step = next(s for s in view["steps"] if s["nodeId"] == "review")
    return step


@check("online")
def waiting_steps_decidable(ctx: Ctx) -> None:
    """A few executions still waiting are driven to their end on the restarted server."""
    open_ = [r for r in ctx.ledger.executions() if r.dispatch_known and not r.ended and r.sla_ms is None]
    for rec in ctx.rng.sample(open_, min(RESUME, len(open_))):
        view = ctx.read(EXEC_GET, {"executionId": rec.execution_id})
        step = view and active_step(view, rec.kind)
        if step is None or view["status"] != "running":
            continue
        finish(ctx, rec, step["stepId"])
        after = ctx.read(EXEC_GET, {"executionId": rec.execution_id})
        rec.ended = True
        if after is not None and after["status"] != "completed":
            ctx.report.problem(f"{_where(rec)}: driven to its end after the restart, it is {after['status']}")
        elif after is not None:
            ctx.report.count("executions finished after a restart")


def finish(ctx: Ctx, rec: ExecutionRecord, step_id: str) -> None:
    if rec.kind == "review":
        for reviewer in [r["userId"] for r in REVIEWERS if r["mandatory"]]:
            if reviewer not in decided_by(rec, step_id):
                decide(ctx, rec, step_id, reviewer, "approve")
    elif rec.kind == "gate":
        for _ in range(2):
            result = resolution(ctx, rec, step_id)
            if result is None or result["resumeScheduled"]:
                break
    else:
        send(
            ctx,
            rec,
            "resolve",
            step_id,
            RESOLVE,
            {
                "executionId": rec.execution_id,
                "stepId": step_id,
                "action": "force-complete",
                "actorId": "after-restart",
            },
            ok=lambda r: r["resolved"] is True,
        )
