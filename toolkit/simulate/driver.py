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
import itertools
import random

from toolkit.engine import (
    AgentCompleted,
    CancelExecution,
    CancelStep,
    DefaultAgentRunner,
    Dispatch,
    ExecutionState,
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


class Held:
    """A reviewer's decision planned while they hold a capacity slot for the step."""

    __slots__ = ("reviewer", "step_id", "command")

    def __init__(self, reviewer: str, step_id: str, command) -> None:
        self.reviewer = reviewer
        self.step_id = step_id
        self.command = command


_STEP_ENDS = frozenset({"step.completed", "step.failed", "step.cancelled", "step.breached"})


class Run:
    """One simulated execution: its state, clock, ids and log, and how it reacts to what the
    engine says. Its future inputs go through ``push(at, run, command, script_index)`` onto a
    heap that the caller owns: one heap per run when runs are independent, one shared heap
    when reviewer capacity couples them (:mod:`toolkit.simulate.queues`)."""

    __slots__ = (
        "plan",
        "execution_id",
        "clock",
        "ids",
        "rng",
        "behaviour",
        "script",
        "scripted_agents",
        "trigger_context",
        "end",
        "push",
        "desks",
        "held",
        "state",
        "events",
        "occurrence",
        "seen",
        "script_errors",
        "ticks",
    )

    state: ExecutionState  # set by start(), which the caller runs before anything else

    def __init__(
        self,
        plan,
        *,
        execution_id: str,
        start_ms: int,
        rng: random.Random,
        behaviour,
        script,
        trigger_context: dict | None,
        horizon_ms: int,
        push,
        desks=None,
    ) -> None:
        self.plan = plan
        self.execution_id = execution_id
        self.clock = ManualClock(start_ms)
        self.ids = RunIds(rng, execution_id)
        self.rng = rng
        self.behaviour = behaviour
        self.script = script
        self.scripted_agents = script.agent_addressed() if script is not None else set()
        self.trigger_context = trigger_context
        self.end = start_ms + horizon_ms
        self.push = push
        self.desks = desks
        self.held: dict[str, list[str]] = {}  # step id -> reviewers holding a slot for it
        self.events: list = []
        self.occurrence: dict[str, tuple[str, int]] = {}
        self.seen: dict[str, int] = {}
        self.script_errors: list[tuple[int, str]] = []
        self.ticks: set[int] = set()

    def start(self) -> None:
        """Queue the script's actions and dispatch the execution."""
        start_ms = self.clock.now()
        if self.script is not None:
            for index, action in enumerate(self.script.actions):
                self.push(start_ms + action.at_ms, self, action, index)
        transition = apply(
            self.plan, None, Dispatch(self.execution_id, trigger_context=self.trigger_context), self.clock, self.ids
        )
        self.state = transition.state
        self.react(transition)

    def handle(self, at: int, command, script_index: int) -> None:
        """Apply one input from the heap at virtual time ``at``."""
        self.clock.set(at)
        held = None
        if script_index >= 0:
            command = _script_command(command, self.occurrence)
            if isinstance(command, str):
                self.script_errors.append((script_index, command))
                return
        elif type(command) is Held:
            held, command = command, command.command
        elif type(command) is Tick:
            deadline = self.state.next_deadline()
            if deadline is None or deadline > at:
                # Nothing is due (the step whose deadline this was has ended): the engine would
                # fire nothing and log nothing, so the Tick is not applied at all.
                return
        try:
            transition = apply(self.plan, self.state, command, self.clock, self.ids)
        except ApiError as exc:
            # Late inputs (a decision for a step a quorum already cancelled, an agent that
            # answers after its timeout) are refused by the engine, exactly as the server would.
            if script_index >= 0:
                self.script_errors.append((script_index, f"{exc.code.value}: {exc.message}"))
        else:
            self.react(transition)
        if held is not None:
            self.desks.release(self, held.step_id, held.reviewer, at)

    def react(self, transition) -> None:
        state = transition.state
        now = self.clock.now()
        new_events = transition.events
        self.events.extend(new_events)
        behaviour = self.behaviour
        if self.script is not None:
            # Script actions address steps by (node, occurrence): number them as they appear.
            for event in new_events:
                if event.type == "step.scheduled":
                    node_id = event.data["nodeId"]
                    n = self.seen.get(node_id, 0) + 1
                    self.seen[node_id] = n
                    self.occurrence[event.step_id] = (node_id, n)
        if behaviour is not None:
            steps = state.steps
            for event in new_events:
                if event.type == "step.awaiting-approval":
                    self._schedule_waiting(steps[event.step_id], now)
            if self.held:
                self._release_ended(new_events, now)
        rng = self.rng
        for request in transition.agent_requests:
            if self.scripted_agents and self.occurrence[request.step_id] in self.scripted_agents:
                continue
            if behaviour is not None:
                fail_p, sample, outputs = behaviour.agents[request.node_id]
                at = now + sample(rng)
                if fail_p and rng.random() < fail_p:
                    command = AgentCompleted(
                        request.step_id, error={"code": "agent-error", "message": "simulated agent failure"}
                    )
                elif outputs is not None:
                    draw = rng.random()
                    command = AgentCompleted(
                        request.step_id, output=next((o for cum, o in outputs if draw <= cum), outputs[-1][1])
                    )
                else:
                    command = AgentCompleted(request.step_id, output=_default_output(request))
                self.push(at, self, command, -1)
            elif not request.config.get("external"):
                self.push(now, self, AgentCompleted(request.step_id, output=_default_output(request)), -1)
        deadline = state.next_deadline()
        if deadline is not None and deadline not in self.ticks:
            self.ticks.add(deadline)
            self.push(max(deadline, now), self, Tick(), -1)

    def _schedule_waiting(self, step, now: int) -> None:
        rng = self.rng
        node_id = step.node_id
        if step.node_type == "human":
            for reviewer, approve_p, respond_p, sample, calendar in self.behaviour.humans[node_id]:
                if respond_p < 1.0 and rng.random() >= respond_p:
                    continue
                decision = "approve" if rng.random() < approve_p else "reject"
                latency = sample(rng)
                command = RecordReviewerDecision(step.step_id, reviewer, decision)
                if self.desks is not None and reviewer in self.desks.capacity:
                    self.desks.request(self, reviewer, step.step_id, command, latency, calendar, now)
                elif calendar is not None:
                    self.push(calendar.advance(now, latency, self.end), self, command, -1)
                else:
                    self.push(now + latency, self, command, -1)
        else:
            expected, success_p, approve_p, sample = self.behaviour.resolutions[node_id]
            for k in range(1, expected + 1):
                ok = rng.random() < success_p
                if ok:
                    output = {"decision": "approve" if rng.random() < approve_p else "reject"}
                    resolution = RecordAgentResolution(step.step_id, f"sim-{k}", "success", output=output)
                else:
                    resolution = RecordAgentResolution(
                        step.step_id, f"sim-{k}", "failure", error_message="simulated resolution failure"
                    )
                self.push(now + sample(rng), self, resolution, -1)

    def _release_ended(self, new_events, now: int) -> None:
        """Reviewers stop working on a step when it ends without them (a quorum, an SLA) or
        when the execution ends: their slots free at once."""
        if self.state.status != "running":
            self.release_all(now)
            return
        for event in new_events:
            if event.type in _STEP_ENDS and event.step_id in self.held:
                for reviewer in list(self.held[event.step_id]):
                    self.desks.release(self, event.step_id, reviewer, now)

    def release_all(self, now: int) -> None:
        """Free every slot this run holds (it ended, or was stopped at its horizon)."""
        for step_id, reviewers in list(self.held.items()):
            for reviewer in list(reviewers):
                self.desks.release(self, step_id, reviewer, now)

    def log(self) -> RunLog:
        return RunLog(self.state, self.events, self.occurrence, self.script_errors)


def run_execution(
    plan,
    *,
    execution_id: str,
    start_ms: int,
    rng: random.Random,
    behaviour=None,
    script=None,
    trigger_context: dict | None = None,
    horizon_ms: int,
) -> RunLog:
    """Drive one execution to its end (or to ``start_ms + horizon_ms``) and return its log.

    Reviewer capacity, if the policy sets any, applies within this one execution."""
    heap: list = []
    order = itertools.count()
    heappush = heapq.heappush

    def push(at: int, run: Run, command, script_index: int) -> None:
        heappush(heap, (at, next(order), run, command, script_index))

    desks = None
    if behaviour is not None and behaviour.capacity:
        from toolkit.simulate.queues import Desks  # queues imports this module

        desks = Desks(behaviour.capacity)
    run = Run(
        plan,
        execution_id=execution_id,
        start_ms=start_ms,
        rng=rng,
        behaviour=behaviour,
        script=script,
        trigger_context=trigger_context,
        horizon_ms=horizon_ms,
        push=push,
        desks=desks,
    )
    run.start()
    end = run.end
    pop = heapq.heappop
    while heap:
        at, _, _, command, script_index = pop(heap)
        if at > end:
            break
        if run.state.status != "running":
            if script is None:
                break
            if script_index < 0:
                continue  # planned by the policy for an execution that has ended; script actions
                # still go to the engine, which refuses them (reported in errors)
        run.handle(at, command, script_index)
    return run.log()


def _default_output(request) -> dict:
    output = _DEFAULT_RUNNER.run(request)
    return output if output is not None else {"agentId": request.agent_id, "decision": "approve"}


def _script_command(action, occurrence: dict):
    """The engine command for a script action, or a message saying why there is none."""
    kind = action.kind
    if kind == "cancel_execution":
        return CancelExecution(reason=action.reason)
    step_id = next(
        (sid for sid, (node, n) in occurrence.items() if node == action.node and n == action.occurrence), None
    )
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
