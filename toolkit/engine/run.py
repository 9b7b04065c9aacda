"""The working context of one command: event emission, step creation, terminal transitions.

A :class:`Run` lives for one :func:`~toolkit.engine.apply` call. It appends events (giving
each the next ``seq``), creates steps with their deterministic ids (semantics §5.2), starts
them according to their node type (§5.3), and moves steps to terminal states. A step that
becomes terminal is put on ``queue``; :mod:`toolkit.engine.routing` drains the queue
breadth-first, so fan-out happens in a predictable order: everything created by one step is
created before anything those new steps create.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from functools import lru_cache
from hashlib import sha256

from toolkit.engine.clock import IdSource
from toolkit.engine.commands import AgentRequest
from toolkit.engine.events import Event
from toolkit.engine.plan import EdgePlan, Plan
from toolkit.engine.state import ExecutionState, GroupInstance, StepState
from toolkit.engine.types import JsonObject, PlannedTarget, Target
from toolkit.work import Work, WorkLimitExceeded

__all__ = ["Run", "Transition", "resume_key", "MAX_STEP_ID"]

MAX_STEP_ID = 200
WEBHOOK_OUTPUT = {"deferred": True, "reason": "webhook-runtime-deferred"}


@lru_cache(maxsize=1024)
def resume_key(execution_id: str, step_id: str) -> str:
    """``rk_`` + the first 16 hex of sha256(executionId + ":" + stepId) (semantics §5.3).

    Cached: a human step's key is computed when it starts waiting and again in its output
    when it resumes, usually a few commands later (a pure function, so the cache is safe)."""
    return "rk_" + sha256(f"{execution_id}:{step_id}".encode()).hexdigest()[:16]


class Transition:
    """What one command did: the (mutated) ``state``, the new ``events`` in ``seq`` order
    (internal ones included), the endpoint's ``result`` fields (camelCase) and the
    ``agent_requests`` for non-blocking agent steps that started and need the runner."""

    __slots__ = ("state", "events", "result", "agent_requests")

    def __init__(
        self, state: ExecutionState, events: list[Event], result: JsonObject, agent_requests: list[AgentRequest]
    ) -> None:
        self.state = state
        self.events = events
        self.result = result
        self.agent_requests = agent_requests

    def __repr__(self) -> str:
        return f"Transition({len(self.events)} events, result={self.result!r})"


class Run:
    """Mutation helpers bound to (plan, state, now, ids) for one command, and the command's
    :class:`~toolkit.work.Work` budget (a fresh one unless the host gives one)."""

    __slots__ = ("plan", "state", "now", "ids", "work", "events", "requests", "queue")

    def __init__(self, plan: Plan, state: ExecutionState, now: int, ids: IdSource, work: Work | None = None) -> None:
        self.plan = plan
        self.state = state
        self.now = now
        self.ids = ids
        self.work = work  # created on first use (:meth:`holds`): most commands evaluate no predicate
        self.events: list[Event] = []
        self.requests: list[AgentRequest] = []
        self.queue: deque[StepState] = deque()

    # ------------------------------------------------------------ events

    def emit(self, type_: str, step_id: str | None, data: JsonObject) -> Event:
        state = self.state
        seq = state.last_seq = state.last_seq + 1
        event = Event(None, state.execution_id, seq, type_, step_id, self.now, state.correlation_id, data)
        self.events.append(event)
        return event

    def transition(self, result: JsonObject) -> Transition:
        requests = self.requests
        if requests:
            # A request whose step ended in this same command (a loop restart, a quorum) is moot.
            steps = self.state.steps
            requests = [r for r in requests if steps[r.step_id].status == "running"]
        return Transition(self.state, self.events, result, requests)

    # ------------------------------------------------------------ predicates

    def holds(self, edge: EdgePlan, context: JsonObject) -> bool:
        """Whether custom ``edge``'s predicate is true, charged to this command's budget; a
        :class:`~toolkit.work.WorkLimitExceeded` leaves naming the edge."""
        assert edge.predicate is not None  # a custom edge carries its parsed `when`
        work = self.work
        if work is None:
            work = self.work = Work()
        try:
            return edge.predicate.evaluate(context, work)
        except WorkLimitExceeded as exc:
            exc.edge_index = edge.index
            raise

    # ------------------------------------------------------------ ids

    def iteration_of(self, node_id: str) -> int:
        loop_id = self.plan.nodes[node_id].loop_id
        return self.state.loops[loop_id].iteration if loop_id is not None else 1

    def _base_id(self, source: StepState | GroupInstance | None, node_id: str) -> str:
        if source is None:  # a root
            return f"step_{node_id}_{self.now}_{self.ids.rand6()}"
        if isinstance(source, StepState):
            return f"{source.step_id}__to__{node_id}"
        base = f"group_{source.group_id}__to__{node_id}"
        iteration = self.iteration_of(node_id)
        if iteration > 1:
            base += f"__i{iteration}"
        if source.ordinal > 1:
            base += f"__g{source.ordinal}"
        return base

    def _final_id(self, base: str, node_id: str, planned: set[str]) -> str:
        step_id = base
        if len(step_id) > MAX_STEP_ID:
            step_id = f"step_{node_id}_{sha256(base.encode()).hexdigest()[:20]}"
        steps = self.state.steps
        if step_id in steps or step_id in planned:
            # Not reachable with lint-clean definitions; never reuse an id all the same.
            n = 2
            while f"{step_id}__d{n}" in steps or f"{step_id}__d{n}" in planned:
                n += 1
            step_id = f"{step_id}__d{n}"
        planned.add(step_id)
        return step_id

    def plan_targets(self, source: StepState | GroupInstance | None, targets: Sequence[Target]) -> list[PlannedTarget]:
        """Ids for the steps that ``targets`` — ``(edge_index, kind, ref)`` fired together by
        ``source`` (a StepState, a GroupInstance, or None for roots) — will create.

        Returns ``[(kind, ref, [(node_id, step_id), ...]), ...]``; nothing is created yet, so
        an event that names the new step (``loop.iteration-started``) can come first.
        """
        groups = self.plan.groups
        seen: set[str] = set()
        planned: set[str] = set()
        out: list[PlannedTarget] = []
        for edge_index, kind, ref in targets:
            nodes = groups[ref].members if kind == "group" else (ref,)
            entries: list[tuple[str, str]] = []
            for node_id in nodes:
                base = self._base_id(source, node_id)
                if node_id in seen:  # a second edge from one parent to one child, fired at once
                    base += f"__e{edge_index}"
                seen.add(node_id)
                entries.append((node_id, self._final_id(base, node_id, planned)))
            out.append((kind, ref, entries))
        return out

    # ------------------------------------------------------------ creating steps

    def spawn_targets(self, planned: list[PlannedTarget], input: JsonObject | None) -> None:
        """Create and start the steps of :meth:`plan_targets`; a group target is one instance."""
        for kind, ref, entries in planned:
            instance = self.new_instance(ref) if kind == "group" else None
            if instance is not None:
                instance.member_step_ids = [sid for _, sid in entries]
            for node_id, step_id in entries:
                self.spawn(node_id, step_id, input, instance)

    def fire(self, source: StepState | GroupInstance, edges: Sequence[EdgePlan], input: JsonObject | None) -> int:
        """Create one step (or group instance) per edge in ``edges`` (already decided to fire)."""
        if len(edges) == 1 and edges[0].target_kind == "node":
            # The common case, without the batch bookkeeping (no sibling edges, no group).
            node_id = edges[0].target_ref
            self.spawn(node_id, self._final_id(self._base_id(source, node_id), node_id, set()), input, None)
        elif edges:
            self.spawn_targets(
                self.plan_targets(source, [(e.index, e.target_kind, e.target_ref) for e in edges]), input
            )
        return len(edges)

    def new_instance(self, group_id: str) -> GroupInstance:
        state = self.state
        members = self.plan.groups[group_id].members
        iteration = self.iteration_of(members[0]) if members else 1
        key = f"{group_id}:{iteration}"
        ordinal = state.instance_counts.get(key, 0) + 1
        state.instance_counts[key] = ordinal
        instance = GroupInstance(f"{key}:{ordinal}", group_id, iteration, ordinal)
        state.groups[instance.instance_id] = instance
        return instance

    def spawn(self, node_id: str, step_id: str, input: JsonObject | None, instance: GroupInstance | None) -> StepState:
        """Create a step and start it at once (pending -> running -> node behaviour, §5.3)."""
        plan, state, now = self.plan, self.state, self.now
        node = plan.nodes[node_id]
        loop_id = node.loop_id
        iteration = state.loops[loop_id].iteration if loop_id is not None else 1
        step = StepState(
            step_id,
            node_id,
            node.type,
            node.group_id,
            instance.instance_id if instance is not None else None,
            iteration,
            input if input is not None else {},
            node.reviewer_ids,
        )
        state.steps[step_id] = step
        state.active[step_id] = step
        if loop_id is not None:
            loop_state = state.loops[loop_id]
            if loop_state.entry_step_id is None and plan.loops[loop_id].entry_node == node_id:
                loop_state.entry_step_id = step_id
        ntype = node.type
        self.emit(
            "step.scheduled",
            step_id,
            {"nodeId": node_id, "nodeType": ntype, "groupId": node.group_id, "iteration": iteration},
        )
        step.status = "running"
        step.started_at = now
        if node.sla_ms is not None:
            step.sla_deadline = now + node.sla_ms
        self.emit("step.started", step_id, {"nodeId": node_id, "nodeType": ntype})
        if ntype == "agent":
            if node.blocking:
                step.status = "waiting"
                step.resolutions = {}
                self.emit(
                    "step.awaiting-approval",
                    step_id,
                    {
                        "waitingForReviewers": node.required,
                        "mandatoryCount": node.required,
                        "resumeKey": resume_key(state.execution_id, step_id),
                    },
                )
            else:
                assert node.max_runtime_ms is not None and node.agent_id is not None  # an agent node's
                step.agent_deadline = now + node.max_runtime_ms
                self.requests.append(AgentRequest(step_id, node_id, node.agent_id, node.config, step.input))
        elif ntype == "human":
            step.status = "waiting"
            step.responses = {}
            self.emit(
                "step.awaiting-approval",
                step_id,
                {
                    "waitingForReviewers": len(node.reviewers),
                    "mandatoryCount": node.mandatory_count,
                    "resumeKey": resume_key(state.execution_id, step_id),
                },
            )
        else:  # webhook: accepted, runtime deferred (§5.7)
            self.finish(
                step,
                "skipped",
                dict(WEBHOOK_OUTPUT),
                None,
                "step.completed",
                {"nodeType": "webhook", "status": "skipped"},
            )
        return step

    # ------------------------------------------------------------ ending steps

    def finish(
        self,
        step: StepState,
        status: str,
        output: JsonObject | None,
        error: dict[str, str] | None,
        event_type: str,
        data: JsonObject,
    ) -> None:
        """Make ``step`` terminal, append its event and queue it for routing."""
        step.status = status
        step.completed_at = self.now
        if output is not None:
            step.output = output
        if error is not None:
            step.error = error
        del self.state.active[step.step_id]
        step.terminal_seq = self.emit(event_type, step.step_id, data).seq
        self.queue.append(step)

    def cancel(self, step: StepState, actor_id: str, reason: str | None, route: bool) -> None:
        """Cancel ``step``; ``route`` queues it so its group can count it (cancelled fires nothing)."""
        step.status = "cancelled"
        step.completed_at = self.now
        del self.state.active[step.step_id]
        step.terminal_seq = self.emit("step.cancelled", step.step_id, {"actorId": actor_id, "reason": reason}).seq
        if route:
            self.queue.append(step)

    def cancel_all(self, actor_id: str, reason: str | None) -> None:
        """Cancel every non-terminal step and close every group instance (the execution ends)."""
        for step in list(self.state.active.values()):
            self.cancel(step, actor_id, reason, route=False)
        for instance in self.state.groups.values():
            instance.closed = True
        self.queue.clear()

    # ------------------------------------------------------------ ending the execution

    def end(self, status: str) -> None:
        """Finish the execution as ``completed`` or ``failed`` (semantics §5.8)."""
        state = self.state
        state.completed_at = self.now
        if status == "failed" or state.unhandled:
            state.status = "failed"
            state.failure_reason = min(state.unhandled)[1]
            self.emit("execution.failed", None, {"failureReason": state.failure_reason})
        else:
            state.status = "completed"
            self.emit("execution.completed", None, {})
        for instance in state.groups.values():
            instance.closed = True

    def end_if_done(self) -> None:
        state = self.state
        if state.status == "running" and not state.active:
            self.end("completed")
