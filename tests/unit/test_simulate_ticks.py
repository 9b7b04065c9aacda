"""The driver skips a Tick that has nothing due (its deadline's step already ended): runs with
SLA breaches and agent timeouts must log exactly what they log when every Tick is applied."""

from __future__ import annotations

import heapq
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit import examples
from toolkit.engine import Tick, apply
from toolkit.simulate import EPOCH_MS, run_rng, to_plan
from toolkit.simulate.behaviour import ResolvedPolicy
from toolkit.simulate.driver import Run, run_execution
from toolkit.simulate.policy import Policy

HOUR = 3_600_000


def reference_events(plan, behaviour, k: int) -> list:
    """The reference: every Tick goes to the engine, due or not (where the driver's ``handle``
    skips a Tick that nothing is due at)."""
    heap, order = [], itertools.count()

    def push(at, run, command, script_index):
        heapq.heappush(heap, (at, next(order), run, command, script_index))

    run = Run(
        plan,
        execution_id=f"sim-1-{k}",
        start_ms=EPOCH_MS,
        rng=run_rng(1, k),
        behaviour=behaviour,
        script=None,
        trigger_context=None,
        horizon_ms=behaviour.horizon_ms,
        push=push,
    )
    run.start()
    while heap:
        at, _, _, command, script_index = heapq.heappop(heap)
        if at > run.end or run.state.status != "running":
            break
        if type(command) is Tick:
            run.clock.set(at)
            run.react(apply(run.plan, run.state, command, run.clock, run.ids))
        else:
            run.handle(at, command, script_index)
    return [e.to_json() for e in run.events]


@settings(max_examples=15, deadline=None)
@given(
    example=st.sampled_from(["sla-escalation", "translation-retry"]),
    review_hours=st.sampled_from([1, 24, 60]),
    agent_minutes=st.sampled_from([1, 10, 60]),
)
def test_skipped_ticks_change_nothing(example, review_hours, agent_minutes):
    # Latencies around the SLA (48 h) and the agents' runtime limit (10 min), so deadlines both pass
    # (breaches, timeouts) and fall after their step ended (the skipped Ticks).
    plan = to_plan(examples.load(example))
    behaviour = ResolvedPolicy(
        Policy.load(
            {
                "reviewers": {"*": {"approve": 0.6, "latencyMs": {"exponential": review_hours * HOUR}}},
                "agents": {"*": {"latencyMs": {"exponential": agent_minutes * 60_000}}},
            }
        ),
        plan,
    )
    seen = set()
    for k in range(40):
        log = run_execution(
            plan,
            execution_id=f"sim-1-{k}",
            start_ms=EPOCH_MS,
            rng=run_rng(1, k),
            behaviour=behaviour,
            horizon_ms=behaviour.horizon_ms,
        )
        events = [e.to_json() for e in log.events]
        assert events == reference_events(plan, behaviour, k)
        seen.update(e["type"] for e in events)
    if example == "sla-escalation" and review_hours == 60 and agent_minutes == 1:
        assert "step.breached" in seen
    if agent_minutes == 60:
        assert "step.failed" in seen  # agent timeouts (10 minutes)
