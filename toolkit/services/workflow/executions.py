"""Executions and steps: dispatch, read, cancel, decide, resolve (api-v2 §4.6–4.9, semantics §7).

Every command runs as one write job: load the execution's engine state, apply the engine
transition — which raises ApiError *before* changing anything — and persist the new state,
its steps, events and the command in the same transaction. Commands of definitions with
regex predicates are first rehearsed in the caller's thread (:mod:`.rehearsal`), so their
searches are answered from a memo inside the job.

On DuckDB jobs run on the store's single writer thread, which orders them; live states stay
cached there so a decision does not reload steps from the database, and a rollback evicts
what it touched. On a shared store (PostgreSQL, several processes) a job runs in its own
transaction and may be run again after a conflict: it reads the execution row ``FOR UPDATE``
(commands on one execution wait for each other, in whatever process), trusts no in-memory
copy of a state or a definition's current version (another process may have changed them),
and leaves every in-memory effect to after the commit or undoes it on rollback.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from toolkit.engine import (
    EXTERNAL_TYPES,
    AgentCompleted,
    CancelExecution,
    CancelStep,
    Dispatch,
    ExecutionState,
    ManualClock,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
    apply,
    run_agents,
    suppress_duplicate_dispatch,
)
from toolkit.errors import ApiError, ErrorCode
from toolkit.model import workflow as m
from toolkit.services.context import CommitNotice, Services
from toolkit.services.paging import decode_cursor, fitting, page_of
from toolkit.services.quotas import take_execution_quota
from toolkit.services.workflow.definitions import plan_for
from toolkit.services.workflow.persist import save
from toolkit.services.workflow.rehearsal import rehearse, rehearse_dispatch, remember_origin
from toolkit.services.workspaces import Workspace
from toolkit.store import definitions, executions
from toolkit.webhook_urls import url_problem
from toolkit.work import Work


@dataclass(frozen=True)
class SuppressedDispatch:
    """The command-log record of a dispatch answered from an earlier one (same idempotencyKey)."""

    idempotency_key: str


def _not_found(execution_id: str) -> ApiError:
    return ApiError(ErrorCode.NOT_FOUND, f"execution {execution_id} not found")


class _Loaded:
    """An execution as a job sees it: its engine state, the version it was read at, its plan,
    and where its events are pushed (``webhook_url``, or None)."""

    __slots__ = ("state", "version", "plan", "webhook_url")

    def __init__(self, state, version: int, plan, webhook_url: str | None) -> None:
        self.state, self.version, self.plan, self.webhook_url = state, version, plan, webhook_url


def _load(services: Services, tx, workspace_id: str, execution_id: str) -> _Loaded:
    """An execution of this workspace, inside the job: from DuckDB's live cache, else the
    database (on a shared store always, its row locked until the job's transaction ends)."""
    cached = services.states.get(execution_id)
    if cached is not None and cached[2] == workspace_id:
        state, version, _, webhook_url = cached
    else:
        row = executions.for_command(tx.execute, execution_id, lock=services.store.shared)
        if row is None or row[0] != workspace_id:
            raise _not_found(execution_id)
        _, version, webhook_url, text = row
        state = ExecutionState.from_dict(json.loads(text))
        remember_origin(services, execution_id, workspace_id, state.definition_id, state.definition_version)
    plan, _ = plan_for(services, workspace_id, state.definition_id, state.definition_version, read=tx.execute)
    return _Loaded(state, version, plan, webhook_url)


def _job_clock(services: Services) -> ManualClock:
    """One reading of the clock per job: every transition of the job, and the command log,
    see the same time — which is what lets a replay reproduce the log exactly."""
    return ManualClock(services.clock.now())


def _commit(
    services: Services,
    tx,
    workspace_id: str,
    state,
    plan,
    transition,
    command,
    version,
    clock,
    webhook_url: str | None,
    extra=None,
    memo: dict | None = None,
):
    """Persist ``transition`` plus, with the default runner, the agent steps it started."""
    events = list(transition.events)
    requests = transition.agent_requests
    name = type(command).__name__
    payload = {k: v for k, v in asdict(command).items() if v is not None}
    if services.runs_agents_inline and requests:
        for more in run_agents(plan, state, transition, clock, services.ids, services.runner, memo=memo):
            events.extend(more.events)
        requests = []
        payload["agentsInline"] = True
    new_version = save(tx, workspace_id, state, events, (name, payload), clock.now(), version, extra, webhook_url)
    eid = state.execution_id
    if requests and services.lease_agent_runs is not None:
        services.lease_agent_runs(tx, eid, requests)
    if not services.store.shared:
        _remember(services, tx, workspace_id, state, new_version, webhook_url)
    deliveries = tuple(e.event_id for e in events if e.type in EXTERNAL_TYPES) if webhook_url is not None else ()
    notice = CommitNotice(workspace_id, eid, state.status, state.next_deadline(), tuple(requests), deliveries)
    tx.after_commit(lambda: services.notify(notice))
    return new_version


def _remember(services: Services, tx, workspace_id: str, state, version: int, webhook_url: str | None) -> None:
    """Keep the state in DuckDB's live cache. The execution row is only written when the group
    flushes, so a later job of the same group must find this state in the cache — also when
    the execution just ended (reading the database would give the pre-group state, and its
    update would overwrite this one). Ended executions leave the cache once the group has
    committed. A shared store keeps no such cache: the row is read, locked, by every command
    (measured in docs/decisions.md, "Several processes: workflow commands")."""
    eid = state.execution_id
    tx.on_rollback(lambda: services.states.pop(eid, None))
    services.states[eid] = (state, version, workspace_id, webhook_url)
    if state.status != "running":
        tx.after_commit(lambda: services.states.pop(eid, None))


def _catch_up(services: Services, tx, workspace_id: str, run: _Loaded, clock, memo: dict | None = None) -> None:
    """Fire deadlines that are already due before applying a command, so a decision that
    arrives after the SLA (while the timer is a moment late) finds the step breached."""
    deadline = run.state.next_deadline()
    if run.state.status != "running" or deadline is None or deadline > clock.now():
        return
    transition = apply(run.plan, run.state, Tick(), clock, services.ids, Work(memo=memo))
    run.version = _commit(
        services,
        tx,
        workspace_id,
        run.state,
        run.plan,
        transition,
        Tick(),
        run.version,
        clock,
        run.webhook_url,
        memo=memo,
    )


def _apply(services: Services, tx, workspace_id: str, run: _Loaded, command, clock, memo: dict | None = None):
    transition = apply(run.plan, run.state, command, clock, services.ids, Work(memo=memo))
    if transition.events:  # a no-op (an idempotent replay, an unknown responder) changes nothing
        run.version = _commit(
            services,
            tx,
            workspace_id,
            run.state,
            run.plan,
            transition,
            command,
            run.version,
            clock,
            run.webhook_url,
            memo=memo,
        )
    return transition


def _command(services: Services, workspace: Workspace, execution_id: str, make_command) -> dict:
    ws = workspace.workspace_id
    memo = rehearse(services, ws, execution_id, make_command)

    def job(tx):
        clock = _job_clock(services)
        run = _load(services, tx, ws, execution_id)
        _catch_up(services, tx, ws, run, clock, memo)
        return _apply(services, tx, ws, run, make_command(run.state), clock, memo).result

    return services.store.write(job)


# ------------------------------------------------------------------ dispatch


def dispatch(services: Services, workspace: Workspace, request: m.Dispatch) -> dict:
    ws = workspace.workspace_id
    if request.webhook_url is not None:  # the syntax is checked by the model; this adds the server's policy
        problem = url_problem(request.webhook_url, services.webhook_policy)
        if problem is not None:
            raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data.webhookUrl: {problem}")
    memo = rehearse_dispatch(
        services,
        ws,
        request.definition_id,
        Dispatch("ex_rehearsal", request.correlation_id, request.idempotency_key, request.trigger_context),
    )

    def job(tx):
        clock = _job_clock(services)
        row = _head(services, tx, ws, request.definition_id)
        if row is None:
            raise ApiError(ErrorCode.NOT_FOUND, f"definition {request.definition_id} not found")
        version, status, level, org, doc = row
        if status != "active":
            raise ApiError(ErrorCode.FAILED_PRECONDITION, f"definition {request.definition_id} is {status}")
        organization_id = _scoped(request.organization_id, org if level != "apiKey" else None, "organizationId")
        document_id = _scoped(request.document_id, doc if level == "document" else None, "documentId")
        if request.idempotency_key is not None:
            # Two dispatches with one key in two processes both find none here; the second
            # insert then fails on the unique index, and its job, run again, finds the first.
            first = executions.by_idempotency_key(tx.execute, ws, request.definition_id, request.idempotency_key)
            if first is not None:
                run = _load(services, tx, ws, first)
                transition = suppress_duplicate_dispatch(run.state, clock)
                _commit(
                    services,
                    tx,
                    ws,
                    run.state,
                    run.plan,
                    transition,
                    SuppressedDispatch(request.idempotency_key),
                    run.version,
                    clock,
                    run.webhook_url,
                )
                return transition.result
        plan, _ = plan_for(services, ws, request.definition_id, version, read=tx.execute)
        take_execution_quota(services, tx, ws)
        execution_id = services.ids.execution_id()
        command = Dispatch(execution_id, request.correlation_id, request.idempotency_key, request.trigger_context)
        transition = apply(plan, None, command, clock, services.ids, Work(memo=memo))
        extra = {
            "organization_id": organization_id,
            "document_id": document_id,
            "webhook_url": request.webhook_url,
            "webhook_secret": request.webhook_secret,
        }
        _commit(
            services, tx, ws, transition.state, plan, transition, command, None, clock, request.webhook_url, extra, memo
        )
        # The execution's next command then finds its definition without reading the row.
        tx.after_commit(lambda: remember_origin(services, execution_id, ws, request.definition_id, version))
        return {"executionId": execution_id, "correlationId": transition.state.correlation_id, "deduplicated": False}

    return services.store.write(job)


def _head(services: Services, tx, workspace_id: str, definition_id: str):
    """The definition's current (version, status, scope…) for a dispatch. DuckDB's writer
    caches it (definition changes drop it). On a shared store it is read every time (a check
    of a cached copy against the stored version would cost the same statement; the copy kept
    there only tells a rehearsal which version's plan to look at), and held ``FOR SHARE``, so
    a concurrent delete waits for this dispatch and then counts its execution, or this
    dispatch waits for the delete and finds the definition deleted."""
    key = (workspace_id, definition_id)
    if services.store.shared:
        row = definitions.head(tx.execute, workspace_id, definition_id, lock=True)
        if row is not None:  # only a hint there, for the next dispatch's rehearsal
            tx.after_commit(lambda: services.heads.__setitem__(key, row))
        return row
    row = services.heads.get(key)
    if row is None:
        row = definitions.head(tx.execute, workspace_id, definition_id)
        if row is not None:
            services.heads[key] = row
            tx.on_rollback(lambda: services.heads.pop(key, None))
    return row


def _scoped(given: str | None, scoped: str | None, field: str) -> str | None:
    if scoped is not None and given is not None and given != scoped:
        raise ApiError(ErrorCode.FAILED_PRECONDITION, f"data.{field}: does not match the definition's scope")
    return given if given is not None else scoped


# ------------------------------------------------------------------ reads


def _state_row(services: Services, workspace_id: str, execution_id: str):
    row = executions.state_of(services.store.read, execution_id)
    if row is None or row[1] != workspace_id:
        raise _not_found(execution_id)
    return row[0]


def get_execution(services: Services, workspace: Workspace, request: m.ExecutionRef) -> dict:
    state = ExecutionState.from_dict(json.loads(_state_row(services, workspace.workspace_id, request.execution_id)))
    return state.view()


def list_executions(services: Services, workspace: Workspace, request: m.ListExecutions) -> dict:
    rows = executions.page(
        services.store.read,
        workspace.workspace_id,
        request.definition_id,
        request.status,
        decode_cursor(request.cursor),
        request.page_size + 1,
        services.store.last_key(),
    )
    rows, next_cursor = page_of(rows, request.page_size)
    keys = (
        "executionId",
        "status",
        "startedAt",
        "completedAt",
        "cancelledAt",
        "definitionId",
        "definitionVersion",
        "correlationId",
        "idempotencyKey",
        "failureReason",
    )
    items = [dict(zip(keys, r[:-1]), steps=[]) for r in rows]
    return {"items": items, "nextCursor": next_cursor, "hasMore": next_cursor is not None}


def get_events(services: Services, workspace: Workspace, request: m.GetEvents) -> dict:
    rows = executions.external_events(
        services.store.read,
        services.store.dialect,
        workspace.workspace_id,
        request.execution_id,
        request.since_seq,
        request.page_size + 1,
    )
    if not rows:  # nothing new, or no such execution: only now pay for the second question
        _state_row(services, workspace.workspace_id, request.execution_id)
    size = fitting(len(r[6]) for r in rows[: request.page_size])  # PAGE_MAX_BYTES, as stored JSON
    more = len(rows) > size
    rows = rows[:size]
    events = [
        {
            "eventId": eid,
            "seq": seq,
            "type": t,
            "stepId": sid,
            "timestamp": ts,
            "correlationId": cid,
            "data": json.loads(data),
        }
        for eid, seq, t, sid, ts, cid, data in rows
    ]
    return {
        "executionId": request.execution_id,
        "events": events,
        "nextCursor": events[-1]["seq"] if events else request.since_seq,
        "hasMore": more,
    }


# ------------------------------------------------------------------ commands


def cancel_execution(services: Services, workspace: Workspace, request: m.CancelExecution) -> dict:
    return _command(services, workspace, request.execution_id, lambda state: CancelExecution(request.reason))


def resolve_step(services: Services, workspace: Workspace, request: m.ResolveStep) -> dict:
    return _command(
        services,
        workspace,
        request.execution_id,
        lambda state: ResolveStep(request.step_id, request.action, request.actor_id, request.output, request.reason),
    )


def record_reviewer_decision(services: Services, workspace: Workspace, request: m.RecordReviewerDecision) -> dict:
    return _command(
        services,
        workspace,
        request.execution_id,
        lambda state: RecordReviewerDecision(request.step_id, request.reviewer_id, request.decision, request.reason),
    )


def record_agent_resolution(services: Services, workspace: Workspace, request: m.RecordAgentResolution) -> dict:
    return _command(
        services,
        workspace,
        request.execution_id,
        lambda state: RecordAgentResolution(
            request.step_id, request.resolution_id, request.status, request.output, request.error_message
        ),
    )


def cancel_step(services: Services, workspace: Workspace, request: m.CancelStep) -> dict:
    return _command(
        services,
        workspace,
        request.execution_id,
        lambda state: CancelStep(request.step_id, request.actor_id, request.reason),
    )


def agent_completed(
    services: Services,
    workspace_id: str,
    execution_id: str,
    step_id: str,
    output: dict | None = None,
    error: dict | None = None,
) -> dict | None:
    """The agent runner finished a non-blocking agent step (background work calls this).
    Returns None when the step had already ended (a timeout, a cancellation)."""
    command = AgentCompleted(step_id, output, error)
    memo = rehearse(services, workspace_id, execution_id, lambda state: command)

    def job(tx):
        clock = _job_clock(services)
        run = _load(services, tx, workspace_id, execution_id)
        _catch_up(services, tx, workspace_id, run, clock, memo)
        step = run.state.steps.get(step_id)
        if run.state.status != "running" or step is None or step.status != "running":
            return None
        return _apply(services, tx, workspace_id, run, command, clock, memo).result

    return services.store.write(job)


def tick(services: Services, workspace_id: str, execution_id: str) -> dict | None:
    """Fire the execution's due deadlines (the background timer calls this)."""
    memo = rehearse(services, workspace_id, execution_id, lambda state: Tick())

    def job(tx):
        clock = _job_clock(services)
        try:
            run = _load(services, tx, workspace_id, execution_id)
        except ApiError:
            return None
        if run.state.status != "running":
            return None
        deadline = run.state.next_deadline()
        if deadline is None or deadline > clock.now():
            return {"nextDeadline": deadline}
        _apply(services, tx, workspace_id, run, Tick(), clock, memo)
        return {"nextDeadline": run.state.next_deadline()}

    return services.store.write(job)
