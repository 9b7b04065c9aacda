"""SLA breaches, deadlines, and how an execution ends (semantics §5.3 SLA, §5.8)."""

from __future__ import annotations

import pytest

from toolkit.engine import AgentFailure
from toolkit.engine.testing import HOLD, Harness, ScriptedRunner, agent, definition, edge, human
from toolkit.errors import ApiError, ErrorCode

STATUS_IS_BREACHED = '{"op": "eq", "args": [{"var": "step.status"}, "breached"]}'
OUTPUT_FLAG = '{"op": "eq", "args": [{"var": "output.flag"}, null]}'


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


SLA = definition(
    [
        human("legal", "alice", sla_ms=1_000),
        agent("sign"),
        agent("changes"),
        agent("notify"),
        agent("page"),
        agent("flagged"),
    ],
    [
        edge("legal", "sign", "approve"),
        edge("legal", "changes", "reject"),
        edge("legal", "notify", "always"),
        edge("legal", "page", "custom", when=STATUS_IS_BREACHED),
        edge("legal", "flagged", "custom", when=OUTPUT_FLAG),
    ],
)


def test_breach_routes_through_always_and_status_edges_only(run):
    h = run(SLA, start_ms=1_000)
    h.dispatch()
    assert h.state.next_deadline() == 2_000
    assert h.tick(1_999) == {"fired": 0}
    assert h.tick(2_000) == {"fired": 1}
    legal = h.step("legal")
    assert (legal.status, legal.completed_at) == ("breached", 2_000)
    assert legal.error == {"code": "sla-exceeded", "message": "step exceeded its SLA of 1000 ms"}
    breached = h.of_type("step.breached")
    assert [(e.step_id, e.data, e.timestamp) for e in breached] == [
        (legal.step_id, {"reason": "sla-exceeded", "slaMs": 1_000}, 2_000)
    ]
    # `flagged` would be true over the (empty) output but does not read the status
    assert h.statuses() == [("legal", "breached"), ("notify", "completed"), ("page", "completed")]
    assert h.step("notify").step_id == f"{legal.step_id}__to__notify"
    assert h.state.status == "completed"
    assert h.state.next_deadline() is None


def test_unrouted_breach_fails_the_execution(run):
    h = run(
        definition(
            [human("legal", "alice", sla_ms=500), agent("sign"), agent("changes")],
            [edge("legal", "sign", "approve"), edge("legal", "changes", "reject")],
        )
    )
    h.dispatch()
    h.tick(10_000)
    assert h.state.status == "failed"
    assert h.state.failure_reason == "step-breached:legal"
    assert h.types()[-2:] == ["step.breached", "execution.failed"]
    with pytest.raises(ApiError) as err:
        h.decide("legal", "alice", "approve")
    assert err.value.code == ErrorCode.FAILED_PRECONDITION


def test_decision_before_the_deadline_clears_it(run):
    h = run(SLA, start_ms=0)
    h.dispatch()
    h.at(999)
    h.decide("legal", "alice", "approve")
    assert h.state.next_deadline() is None
    assert h.tick(5_000) == {"fired": 0}
    assert [n for n, _ in h.statuses()] == ["legal", "sign", "notify", "flagged"]


def test_tick_fires_every_due_deadline_in_order(run):
    body = definition(
        [
            human("a", "u1", sla_ms=300),
            human("b", "u2", sla_ms=100),
            agent("c", sla_ms=200, agentMaxRuntimeMs=200),
            agent("after"),
        ],
        [edge("a", "after", "always"), edge("b", "after", "always"), edge("c", "after", "always")],
    )
    h = run(body, runner=ScriptedRunner({"c": HOLD}), start_ms=0)
    h.dispatch()
    assert h.state.next_deadline() == 100
    assert h.tick(1_000) == {"fired": 3}
    terminal = [(e.type, e.step_id) for e in h.events if e.type in ("step.breached", "step.failed")]
    # b (100), then c: its SLA and its agent timeout are both due at 200 — the SLA wins — then a (300)
    assert terminal == [("step.breached", h.sid("b")), ("step.breached", h.sid("c")), ("step.breached", h.sid("a"))]
    assert h.state.status == "completed"


def test_agent_timeout_and_sla_next_deadline(run):
    h = run(
        definition([agent("slow", sla_ms=9_000, agentMaxRuntimeMs=4_000)], []),
        runner=ScriptedRunner({"slow": HOLD}),
        start_ms=0,
    )
    h.dispatch()
    assert h.state.next_deadline() == 4_000
    h.tick(4_000)
    assert h.step("slow").error["code"] == "agent-timeout"
    assert h.state.failure_reason == "step-failed:slow"


def test_blocking_agent_breach(run):
    body = definition(
        [agent("panel", sla_ms=50, blocking=True, resolutionPolicy="allResolved"), agent("x")],
        [edge("panel", "x", "always")],
    )
    h = run(body, start_ms=0)
    h.dispatch()
    h.tick(50)
    assert h.step("panel").status == "breached"
    with pytest.raises(ApiError):
        h.resolution("panel", "late", "success")
    assert h.state.status == "completed"


# ---------------------------------------------------------------- end of an execution


def test_execution_completes_when_nothing_is_active(run):
    h = run(definition([agent("a"), agent("b")], [edge("a", "b", "approve")]), start_ms=77)
    h.dispatch()
    assert h.state.status == "completed" and h.state.completed_at == 77
    assert (h.events[-1].type, h.events[-1].step_id, h.events[-1].data) == ("execution.completed", None, {})
    assert h.state.view()["failureReason"] is None


def test_failure_waits_for_active_steps_and_reports_the_first_unhandled(run):
    runner = ScriptedRunner({"a": AgentFailure("x", "a broke"), "b": AgentFailure("y", "b broke")})
    body = definition([agent("a"), agent("b"), human("r", "ann"), agent("z")], [edge("r", "z", "reject")])
    h = run(body, runner=runner)
    h.dispatch()
    assert [s for _, s in h.statuses()] == ["failed", "failed", "waiting"]
    assert h.state.status == "running"  # r is still waiting
    h.decide("r", "ann", "approve")
    assert h.state.status == "failed"
    assert h.state.failure_reason == "step-failed:a"
    assert h.events[-1].data == {"failureReason": "step-failed:a"}


def test_a_routed_failure_is_handled(run):
    body = definition([agent("a"), agent("recover")], [edge("a", "recover", "always")])
    h = run(body, runner=ScriptedRunner({"a": AgentFailure("x", "broke")}))
    h.dispatch()
    assert h.state.status == "completed"


def test_custom_edge_on_failed_step_routes_it(run):
    body = definition(
        [agent("a"), agent("recover")],
        [edge("a", "recover", "custom", when='{"op": "eq", "args": [{"var": "step.status"}, "failed"]}')],
    )
    h = run(body, runner=ScriptedRunner({"a": AgentFailure("x", "broke")}))
    h.dispatch()
    assert h.step("recover").status == "completed"
    assert h.state.status == "completed"


def test_custom_edges_see_execution_input_and_iteration(run):
    when = (
        '{"op": "and", "args": [{"op": "eq", "args": [{"var": "execution.input.tier"}, "gold"]}, '
        '{"op": "eq", "args": [{"var": "step.iteration"}, 1]}, '
        '{"op": "eq", "args": [{"var": "step.nodeType"}, "agent"]}]}'
    )
    body = definition([agent("a"), agent("vip")], [edge("a", "vip", "custom", when=when)])
    h = run(body)
    h.dispatch({"tier": "gold"})
    assert h.step("vip").status == "completed"
    h2 = run(body)
    h2.dispatch({"tier": "silver"})
    assert h2.state.steps_of("vip") == [] and h2.state.status == "completed"


def test_an_execution_that_multiplies_its_steps_is_stopped_at_the_step_limit():
    """Layers of fully connected pairs double the steps per layer (no implicit join): the
    engine fails such an execution at MAX_STEPS instead of creating 2^n steps."""
    from toolkit.engine import DefaultAgentRunner, Dispatch, ManualClock, Plan, SeededIds, apply, run_agents
    from toolkit.engine.routing import MAX_STEPS

    layers = 16  # 2^17 - 1 steps without the limit
    nodes = [{"nodeId": "root", "type": "agent", "config": {"agentId": "a"}}] + [
        {"nodeId": f"n{i}-{k}", "type": "agent", "config": {"agentId": "a"}} for i in range(layers) for k in range(2)
    ]
    edges = [{"from": "root", "to": f"n0-{k}"} for k in range(2)] + [
        {"from": f"n{i}-{a}", "to": f"n{i + 1}-{b}"} for i in range(layers - 1) for a in range(2) for b in range(2)
    ]
    plan = Plan.from_definition({"definitionId": "fan-in", "name": "x", "nodes": nodes, "edges": edges})
    clock, ids = ManualClock(0), SeededIds(0)
    t = apply(plan, None, Dispatch("ex_1"), clock, ids)
    extra = run_agents(plan, t.state, t, clock, ids, DefaultAgentRunner())
    state = t.state
    assert state.status == "failed"
    assert state.failure_reason == f"step-limit-exceeded:{MAX_STEPS}"
    assert MAX_STEPS <= len(state.steps) < MAX_STEPS + 10
    assert not state.active
    last = (extra[-1] if extra else t).events[-1]
    assert (last.type, last.data) == ("execution.failed", {"failureReason": f"step-limit-exceeded:{MAX_STEPS}"})
