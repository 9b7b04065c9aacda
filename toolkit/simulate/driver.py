"""The virtual-clock driver: one simulated execution from dispatch to its end.

The driver owns a heap of future inputs ``(virtual time, order, command)``. It applies each
with :func:`toolkit.engine.apply` — the server's engine, unchanged — and reacts to what the
engine says: agent requests get a completion from the policy (or the script), steps that
start waiting get reviewer decisions or agent resolutions, and the state's next deadline gets
a ``Tick``. Everything random comes from one seeded ``random.Random`` per run, so a run is a
pure function of (definition, policy, script, seed, run number).
"""

from __future__ import annotations

import heapq
import random

from toolkit.engine import (
    AgentCompleted,
    CancelExecution,
    CancelStep,
    DefaultAgentRunner,
    Dispatch,
    ManualClock,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    Tick,
    apply,
)
from toolkit.errors import ApiError

_DEFAULT_RUNNER = DefaultAgentRunner()


class RunIds:
    """Ids for one run, drawn from the run's own generator."""

    __slots__ = ("rng", "_execution_id")

    def __init__(self, rng: random.Random, execution_id: str) -> None:
        self.rng = rng
        self._execution_id = execution_id

    def rand6(self) -> str:
        return format(self.rng.getrandbits(24), "06x")

    def execution_id(self) -> str:
        return self._execution_id


class RunLog:
    """What one run produced: final state, every event (internal ones included) in ``seq``
    order, each step's occurrence number per node, and script actions the engine refused."""

    __slots__ = ("state", "events", "occurrence", "script_errors")

    def __init__(self, state, events, occurrence, script_errors) -> None:
        self.state = state
        self.events = events
        self.occurrence = occurrence
        self.script_errors = script_errors


def run_execution(plan, *, execution_id: str, start_ms: int, rng: random.Random, behaviour=None,
                  script=None, trigger_context: dict | None = None, horizon_ms: int) -> RunLog:
    """Drive one execution to its end (or to ``start_ms + horizon_ms``) and return its log."""
    clock = ManualClock(start_ms)
    ids = RunIds(rng, execution_id)
    heap: list = []
    order = 0
    ticks: set[int] = set()
    events: list = []
    occurrence: dict[str, tuple[str, int]] = {}
    seen: dict[str, int] = {}
    script_errors: list[tuple[int, str]] = []
    scripted_agents = script.agent_addressed() if script is not None else set()
    end = start_ms + horizon_ms

    def push(at: int, command, script_index: int = -1) -> None:
        nonlocal order
        order += 1
        heapq.heappush(heap, (at, order, command, script_index))

    if script is not None:
        for index, action in enumerate(script.actions):
            push(start_ms + action.at_ms, action, index)

    def react(transition) -> None:
        state = transition.state
        now = clock.now()
        new_events = transition.events
        events.extend(new_events)
        if script is not None:
            # Script actions address steps by (node, occurrence): number them as they appear.
            for event in new_events:
                if event.type == "step.scheduled":
                    node_id = event.data["nodeId"]
                    n = seen.get(node_id, 0) + 1
                    seen[node_id] = n
                    occurrence[event.step_id] = (node_id, n)
        if behaviour is not None:
            for event in new_events:
                if event.type == "step.awaiting-approval":
                    _schedule_waiting(state.steps[event.step_id], now, rng, behaviour, push)
        for request in transition.agent_requests:
            if scripted_agents and occurrence[request.step_id] in scripted_agents:
                continue
            if behaviour is not None:
                fail_p, sample, outputs = behaviour.agents[request.node_id]
                at = now + sample(rng)
                if fail_p and rng.random() < fail_p:
                    push(at, AgentCompleted(request.step_id, error={"code": "agent-error", "message": "simulated agent failure"}))
                elif outputs is not None:
                    draw = rng.random()
                    output = next((o for cum, o in outputs if draw <= cum), outputs[-1][1])
                    push(at, AgentCompleted(request.step_id, output=output))
                else:
                    push(at, AgentCompleted(request.step_id, output=_default_output(request)))
            elif not request.config.get("external"):
                push(now, AgentCompleted(request.step_id, output=_default_output(request)))
        deadline = state.next_deadline()
        if deadline is not None and deadline not in ticks:
            ticks.add(deadline)
            push(max(deadline, now), Tick())

    transition = apply(plan, None, Dispatch(execution_id, trigger_context=trigger_context), clock, ids)
    state = transition.state
    react(transition)
    while heap:
        at, _, command, script_index = heapq.heappop(heap)
        if at > end:
            break
        if state.status != "running":
            if script is None:
                break
            if script_index < 0:
                continue  # planned by the policy for an execution that has ended; script actions
                          # still go to the engine, which refuses them (reported in errors)
        clock.set(at)
        if script_index >= 0:
            command = _script_command(command, occurrence)
            if isinstance(command, str):
                script_errors.append((script_index, command))
                continue
        try:
            transition = apply(plan, state, command, clock, ids)
        except ApiError as exc:
            # Late inputs (a decision for a step a quorum already cancelled, an agent that
            # answers after its timeout) are refused by the engine, exactly as the server would.
            if script_index >= 0:
                script_errors.append((script_index, f"{exc.code.value}: {exc.message}"))
            continue
        react(transition)
    return RunLog(state, events, occurrence, script_errors)


def _default_output(request) -> dict:
    output = _DEFAULT_RUNNER.run(request)
    return output if output is not None else {"agentId": request.agent_id, "decision": "approve"}


def _schedule_waiting(step, now: int, rng: random.Random, behaviour, push) -> None:
    node_id = step.node_id
    if step.node_type == "human":
        for reviewer, approve_p, respond_p, sample in behaviour.humans[node_id]:
            if respond_p < 1.0 and rng.random() >= respond_p:
                continue
            decision = "approve" if rng.random() < approve_p else "reject"
            push(now + sample(rng), RecordReviewerDecision(step.step_id, reviewer, decision))
    else:
        expected, success_p, approve_p, sample = behaviour.resolutions[node_id]
        for k in range(1, expected + 1):
            ok = rng.random() < success_p
            if ok:
                output = {"decision": "approve" if rng.random() < approve_p else "reject"}
                command = RecordAgentResolution(step.step_id, f"sim-{k}", "success", output=output)
            else:
                command = RecordAgentResolution(step.step_id, f"sim-{k}", "failure",
                                                error_message="simulated resolution failure")
            push(now + sample(rng), command)


def _script_command(action, occurrence: dict):
    """The engine command for a script action, or a message saying why there is none."""
    kind = action.kind
    if kind == "cancel_execution":
        return CancelExecution(reason=action.reason)
    step_id = next((sid for sid, (node, n) in occurrence.items()
                    if node == action.node and n == action.occurrence), None)
    if step_id is None:
        return f"no step for node {action.node!r} occurrence {action.occurrence} at {action.at_ms} ms"
    if kind == "decision":
        return RecordReviewerDecision(step_id, action.reviewer, action.decision, action.reason)
    if kind == "agent_output":
        return AgentCompleted(step_id, output=action.agent_output)
    if kind == "agent_error":
        return AgentCompleted(step_id, error=action.agent_error.model_dump(mode="json"))
    if kind == "resolution":
        r = action.resolution
        return RecordAgentResolution(step_id, r.resolution_id, r.status, r.output, r.error_message)
    if kind == "resolve":
        return ResolveStep(step_id, action.resolve, action.actor, action.output, action.reason)
    return CancelStep(step_id, action.actor, action.reason)
