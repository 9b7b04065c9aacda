"""Rehearsals: a command's regex work done in the request's own thread, not on the writer.

Every write of every workspace goes through the store's single writer thread (see
:mod:`toolkit.store.writer`). The costly part of a command is its custom-edge predicates'
regex searches — up to the command's work budget (:mod:`toolkit.work`), about a second of
one core. Done on the writer, that second would be every other workspace's wait.

So before a command of a definition with ``regex`` ops is queued, :func:`rehearse` applies it
once to a copy of the execution as last committed, in the calling thread, with a throwaway
clock reading and id source, and keeps only the regex answers it found, ``(pattern, text) ->
bool``. The real command on the writer is then given that memo (:class:`~toolkit.work.Work`):
each search it repeats is a dictionary lookup. A regex answer is a pure function of pattern
and text, so a stale rehearsal (another command landed in between) can only miss, never
mislead; and the real command charges every search in full, so its outcome does not depend
on whether a rehearsal ran. The engine stays pure; the rehearsal is a cache the host fills.
"""

from __future__ import annotations

import json

from toolkit.engine import Dispatch, ExecutionState, ManualClock, SeededIds, Tick, apply, run_agents
from toolkit.services.context import Services
from toolkit.services.workflow.definitions import plan_for
from toolkit.store import definitions, executions
from toolkit.work import Work

__all__ = ["rehearse", "rehearse_dispatch"]


def rehearse(services: Services, workspace_id: str, execution_id: str, make_command) -> dict | None:
    """The regex memo of ``make_command(state)`` on execution ``execution_id``, or None when its
    definition has no regex op (nothing to rehearse) or the execution is not found."""
    where = _definition_of(services, workspace_id, execution_id)
    if where is None:
        return None
    plan = _plan(services, workspace_id, *where)
    if plan is None or not plan.regex_ops:
        return None
    row = executions.state_of(services.store.read, execution_id)
    if row is None or row[1] != workspace_id:
        return None
    state = ExecutionState.from_dict(json.loads(row[0]))
    memo: dict = {}
    clock = ManualClock(services.clock.now())
    ids = SeededIds(0)  # never the service's own source: a rehearsal must not use up real ids
    # Any error is the real command's to report, on the writer: a rehearsal only warms the memo.
    try:
        deadline = state.next_deadline()
        if state.status == "running" and deadline is not None and deadline <= clock.now():
            apply(plan, state, Tick(), clock, ids, Work(memo=memo))
        _apply(services, plan, state, make_command(state), clock, ids, memo)
    except Exception:  # noqa: BLE001 - see above; the writer runs the command for real
        pass
    return memo


def rehearse_dispatch(services: Services, workspace_id: str, definition_id: str, command: Dispatch) -> dict | None:
    """The regex memo of dispatching ``definition_id`` (its current version) with ``command``."""
    # Each definition's current row is cached for dispatch (on a shared store, as last seen);
    # its version is read here without a statement when it is there (a tuple, replaced whole,
    # never changed in place). A stale version only makes the rehearsal miss: the job reads
    # the current one.
    row = services.heads.get((workspace_id, definition_id))
    version = row[0] if row is not None else definitions.version_of(services.store.read, workspace_id, definition_id)
    plan = _plan(services, workspace_id, definition_id, version) if version is not None else None
    if plan is None or not plan.regex_ops:
        return None
    memo: dict = {}
    try:
        _apply(services, plan, None, command, ManualClock(services.clock.now()), SeededIds(0), memo)
    except Exception:  # noqa: BLE001 - a rehearsal only warms the memo; the writer decides
        pass
    return memo


def _apply(services: Services, plan, state, command, clock, ids, memo: dict) -> None:
    transition = apply(plan, state, command, clock, ids, Work(memo=memo))
    if services.runs_agents_inline and transition.agent_requests:
        run_agents(plan, transition.state, transition, clock, ids, services.runner, memo=memo)


def _definition_of(services: Services, workspace_id: str, execution_id: str) -> tuple[str, int] | None:
    # The writer's live-state cache answers without a statement. Only the definition id and
    # version are read from it, and they never change, so reading them from this thread is safe.
    cached = services.states.get(execution_id)
    if cached is not None and cached[2] == workspace_id:
        return cached[0].definition_id, cached[0].definition_version
    # Never changing, they may also be kept by any process (a shared store keeps no live states).
    origin = services.origins.get(execution_id)
    if origin is None:
        row = executions.definition_of(services.store.read, execution_id)
        if row is None:
            return None
        origin = remember_origin(services, execution_id, row[2], row[0], row[1])
    return None if origin[0] != workspace_id else origin[1:]


ORIGINS_KEPT = 100_000


def remember_origin(services: Services, execution_id: str, workspace_id: str, definition_id: str, version: int):
    """Keep which workspace and definition version ``execution_id`` runs (facts that never
    change); a full cache starts over rather than grow."""
    if len(services.origins) >= ORIGINS_KEPT:
        services.origins.clear()
    origin = services.origins[execution_id] = (workspace_id, definition_id, version)
    return origin


def _plan(services: Services, workspace_id: str, definition_id: str, version: int):
    try:
        return plan_for(services, workspace_id, definition_id, version)[0]
    except Exception:  # noqa: BLE001 - a definition that cannot be planned is the writer's to report
        return None
