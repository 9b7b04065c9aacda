"""Dispatch, step ids, step input, events and state persistence (semantics §5.1, §5.2, §6)."""

from __future__ import annotations

import hashlib
import json
import random

import pytest

from toolkit.engine import (
    EXTERNAL_TYPES,
    INTERNAL_TYPES,
    AgentCompleted,
    CancelExecution,
    CancelStep,
    Dispatch,
    Event,
    ExecutionState,
    ManualClock,
    Plan,
    RecordAgentResolution,
    RecordReviewerDecision,
    ResolveStep,
    SeededIds,
    Tick,
    apply,
    external_view,
    resume_key,
    suppress_duplicate_dispatch,
)
from toolkit.engine.testing import G, Harness, agent, definition, edge, group, human, webhook
from toolkit.errors import ApiError, ErrorCode


@pytest.fixture(params=["live", "restore"])
def run(request):
    """Every scenario runs twice: live, and persisted through JSON between every two commands
    while a live twin checks the event logs stay identical."""
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


def rand6s(seed: int, n: int) -> list[str]:
    ids = SeededIds(seed)
    return [ids.rand6() for _ in range(n)]


CHAIN = definition(
    [agent("a"), human("b", "ann"), webhook("c")],
    [edge("a", "b", "approve"), edge("b", "c", "always")],
)


def test_dispatch_creates_root_steps_with_deterministic_ids(run):
    h = run(CHAIN, start_ms=5_000, seed=3)
    result = h.dispatch()
    root = f"step_a_5000_{rand6s(3, 1)[0]}"
    assert result == {"executionId": "ex_test", "correlationId": "ex_test", "deduplicated": False}
    first = h.events[0]
    assert (first.seq, first.type, first.step_id) == (1, "execution.dispatched", None)
    assert first.data == {"definitionId": "test-flow", "definitionVersion": 1, "rootStepIds": [root]}
    assert [s.step_id for s in h.state.steps.values()] == [root, f"{root}__to__b"]
    assert h.statuses() == [("a", "completed"), ("b", "waiting")]


def test_dispatch_event_log_in_order(run):
    h = run(CHAIN)
    h.dispatch()
    a, b = h.sid("a"), h.sid("b")
    assert [(e.seq, e.type, e.step_id) for e in h.events] == [
        (1, "execution.dispatched", None),
        (2, "step.scheduled", a),
        (3, "step.started", a),
        (4, "step.completed", a),
        (5, "step.scheduled", b),
        (6, "step.started", b),
        (7, "step.awaiting-approval", b),
    ]
    assert h.events[1].data == {"nodeId": "a", "nodeType": "agent", "groupId": None, "iteration": 1}
    assert h.events[2].data == {"nodeId": "a", "nodeType": "agent"}
    assert h.events[3].data == {"agentId": "a"}
    assert h.events[6].data == {"waitingForReviewers": 1, "mandatoryCount": 1, "resumeKey": resume_key("ex_test", b)}


def test_every_event_carries_ids_timestamp_and_correlation(run):
    h = run(CHAIN, start_ms=42)
    h.dispatch(correlation_id="order-7")
    for e in h.events:
        assert e.to_json() == {
            "eventId": f"evt_ex_test_{e.seq}",
            "seq": e.seq,
            "type": e.type,
            "stepId": e.step_id,
            "timestamp": 42,
            "correlationId": "order-7",
            "data": e.data,
        }
    assert h.state.correlation_id == "order-7"


def test_several_roots_and_a_root_group(run):
    body = definition(
        [human("x", "ann"), human("m1", "bob"), human("m2", "cy"), human("y", "dee")],
        [edge("x", "y", "reject"), edge(G("g"), "y", "reject")],
        [group("g", ["m1", "m2"])],
    )
    h = run(body, start_ms=7, seed=11)
    h.dispatch()
    r = rand6s(11, 3)
    assert h.events[0].data["rootStepIds"] == [f"step_x_7_{r[0]}", f"step_m1_7_{r[1]}", f"step_m2_7_{r[2]}"]
    m1, m2 = h.step("m1"), h.step("m2")
    assert m1.group_id == m2.group_id == "g"
    assert m1.instance_id == m2.instance_id == "g:1:1"
    assert h.state.groups["g:1:1"].member_step_ids == [m1.step_id, m2.step_id]


def test_second_edge_to_same_child_gets_edge_index_suffix(run):
    body = definition(
        [agent("a"), webhook("b")],
        [
            edge("a", "b", "approve"),
            edge("a", "b", "always"),
            edge("a", "b", "custom", when='{"op": "eq", "args": [{"var": "output.decision"}, "approve"]}'),
        ],
    )
    h = run(body)
    h.dispatch()
    a = h.sid("a")
    assert [s.step_id for s in h.state.steps_of("b")] == [f"{a}__to__b", f"{a}__to__b__e1", f"{a}__to__b__e2"]
    assert h.state.status == "completed"


def test_step_ids_longer_than_200_chars_are_hashed(run):
    long_node = "n" * 60
    nodes = [agent("a")] + [agent(f"{long_node}{i}") for i in range(4)]
    edges = [edge("a", f"{long_node}0", "approve")] + [
        edge(f"{long_node}{i}", f"{long_node}{i + 1}", "approve") for i in range(3)
    ]
    h = run(definition(nodes, edges))
    h.dispatch()
    ids = [s.step_id for s in h.state.steps.values()]
    root = ids[0]
    assert ids[1] == f"{root}__to__{long_node}0"
    assert ids[2] == f"{ids[1]}__to__{long_node}1"
    unhashed = f"{ids[2]}__to__{long_node}2"
    assert len(unhashed) > 200
    expected = f"step_{long_node}2_{hashlib.sha256(unhashed.encode()).hexdigest()[:20]}"
    assert ids[3] == expected
    # The next child builds on the (short) hashed parent id again.
    assert ids[4] == f"{expected}__to__{long_node}3"
    assert all(len(i) <= 200 for i in ids)


def test_step_input_is_empty_for_plain_steps(run):
    h = run(CHAIN)
    h.dispatch({"ticket": "T-1"})
    assert h.step("a").input == {} and h.step("b").input == {}
    assert h.state.input == {"ticket": "T-1"}


def test_webhook_step_is_skipped_and_always_edges_fire(run):
    body = definition(
        [webhook("hook"), agent("after"), agent("never")],
        [edge("hook", "after", "always"), edge("hook", "never", "approve")],
    )
    h = run(body)
    h.dispatch()
    hook = h.step("hook")
    assert hook.status == "skipped"
    assert hook.output == {"deferred": True, "reason": "webhook-runtime-deferred"}
    completed = h.of_type("step.completed")[0]
    assert completed.step_id == hook.step_id
    assert completed.data == {"nodeType": "webhook", "status": "skipped"}
    assert h.statuses() == [("hook", "skipped"), ("after", "completed")]
    assert h.state.status == "completed"
    assert h.types() == ["execution.dispatched", "step.completed", "step.completed", "execution.completed"]


def test_seq_strictly_increases_across_commands(run):
    h = run(CHAIN)
    h.dispatch()
    h.decide("b", "ann", "approve")
    seqs = [e.seq for e in h.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert h.state.last_seq == seqs[-1]


def test_views(run):
    h = run(CHAIN, start_ms=100)
    h.dispatch({"k": 1}, idempotency_key="idem-1")
    view = h.state.view()
    assert view == {
        "executionId": "ex_test",
        "status": "running",
        "startedAt": 100,
        "completedAt": None,
        "cancelledAt": None,
        "definitionId": "test-flow",
        "definitionVersion": 1,
        "correlationId": "ex_test",
        "idempotencyKey": "idem-1",
        "failureReason": None,
        "steps": [h.step("a").view(), h.step("b").view()],
    }
    assert h.step("a").view() == {
        "stepId": h.sid("a"),
        "nodeId": "a",
        "nodeType": "agent",
        "status": "completed",
        "groupId": None,
        "startedAt": 100,
        "completedAt": 100,
        "output": {"agentId": "a", "decision": "approve"},
        "error": None,
        "input": {},
        "iteration": 1,
        "reviewerIds": [],
    }
    b = h.step("b").view()
    assert (b["status"], b["output"], b["reviewerIds"], b["completedAt"]) == ("waiting", {}, ["ann"], None)


def test_plan_version_is_pinned():
    h = Harness(CHAIN, version=4)
    h.dispatch()
    assert h.events[0].data["definitionVersion"] == 4
    assert h.state.definition_version == 4


def test_state_round_trip_is_exact_and_copy_is_independent():
    h = Harness(CHAIN)
    h.dispatch({"nested": {"a": [1, 2]}})
    state = h.state
    text = json.dumps(state.to_dict(), sort_keys=True)
    again = ExecutionState.from_dict(json.loads(text))
    assert json.dumps(again.to_dict(), sort_keys=True) == text
    assert list(again.active) == list(state.active)
    clone = state.copy()
    clone.steps[h.sid("b")].responses["x"] = {"decision": "approve"}
    assert "x" not in state.steps[h.sid("b")].responses


def test_unknown_state_format_is_refused():
    h = Harness(CHAIN)
    h.dispatch()
    d = h.state.to_dict()
    d["format"] = 99
    with pytest.raises(ValueError):
        ExecutionState.from_dict(d)


def test_dispatch_errors():
    plan = Plan.from_definition(CHAIN)
    clock, ids = ManualClock(0), SeededIds(0)
    state = apply(plan, None, Dispatch("ex_1"), clock, ids).state
    with pytest.raises(ApiError) as err:
        apply(plan, state, Dispatch("ex_1"), clock, ids)
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        apply(plan, None, Dispatch(""), clock, ids)
    assert err.value.code == ErrorCode.INVALID_ARGUMENT
    with pytest.raises(ApiError) as err:
        apply(plan, None, Dispatch("ex_2", trigger_context=[1]), clock, ids)
    assert err.value.code == ErrorCode.INVALID_ARGUMENT
    for command in (
        Tick(),
        CancelExecution(),
        CancelStep("s", "ops"),
        ResolveStep("s", "force-fail", "ops"),
        RecordReviewerDecision("s", "ann", "approve"),
        RecordAgentResolution("s", "r", "success"),
        AgentCompleted("s", {}),
    ):
        with pytest.raises(ApiError) as err:
            apply(plan, None, command, clock, ids)  # no such execution
        assert err.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(TypeError):
        apply(plan, state, object(), clock, ids)


def test_suppress_duplicate_dispatch_logs_internal_event():
    h = Harness(CHAIN)
    h.dispatch(idempotency_key="k1", correlation_id="c1")
    last = h.state.last_seq
    t = suppress_duplicate_dispatch(h.state, ManualClock(9_999))
    assert t.result == {"executionId": "ex_test", "correlationId": "c1", "deduplicated": True}
    assert [(e.seq, e.type, e.step_id, e.timestamp, e.data) for e in t.events] == [
        (last + 1, "idempotency.suppressed", None, 9_999, {"idempotencyKey": "k1"})
    ]
    assert external_view(t.events) == []


def test_event_type_sets_are_exactly_api_section_6():
    assert EXTERNAL_TYPES == {
        "execution.dispatched",
        "execution.completed",
        "execution.failed",
        "execution.cancelled",
        "step.awaiting-approval",
        "step.completed",
        "step.failed",
        "step.breached",
        "step.cancelled",
        "group.quorum-met",
        "loop.iteration-started",
        "loop.exhausted",
    }
    assert INTERNAL_TYPES == {
        "step.scheduled",
        "step.started",
        "step.retried",
        "step.resumed",
        "step.response-recorded",
        "step.overridden",
        "parallel-group.completed",
        "idempotency.suppressed",
    }
    assert not EXTERNAL_TYPES & INTERNAL_TYPES


def test_external_view_keeps_seq_with_gaps(run):
    h = run(CHAIN)
    h.dispatch()
    ext = external_view(h.events)
    assert [e.seq for e in ext] == [1, 4, 7]
    assert all(isinstance(e, Event) for e in ext)


def test_ids_never_use_global_randomness():
    random.seed(1)
    a = Harness(CHAIN, seed=5)
    a.dispatch()
    random.seed(2)
    random.random()
    b = Harness(CHAIN, seed=5)
    b.dispatch()
    assert a.log() == b.log()


def test_seeded_ids_and_manual_clock():
    ids = SeededIds(3)
    r = ids.rand6()
    assert len(r) == 6 and all(c in "0123456789abcdef" for c in r)
    x, y = SeededIds(8), SeededIds(8)
    assert [x.rand6(), x.execution_id()] == [y.rand6(), y.execution_id()]
    clock = ManualClock(10)
    clock.advance(5)
    assert clock.now() == 15
    clock.set(3)
    assert clock.now() == 3


def test_plan_refuses_dangling_references():
    with pytest.raises(ValueError, match="unknown node 'ghost'"):
        Plan.from_definition(definition([agent("a")], [edge("a", "ghost")]))
    with pytest.raises(ValueError, match="unknown member"):
        Plan.from_definition(definition([agent("a")], [], [group("g", ["a", "ghost"])]))
    with pytest.raises(ValueError, match="no config"):
        Plan.from_definition(definition([{"nodeId": "a", "type": "agent"}], []))


def test_plan_precomputes_lookups():
    body = definition(
        [agent("draft"), human("m1", "u1"), human("m2", "u2"), agent("pub"), agent("esc")],
        [
            edge("draft", G("g"), "approve"),
            edge("m1", "pub", "approve"),
            edge("m2", "pub", "always"),
            edge(G("g"), "draft", "reject", loop=2),
            edge(G("g"), "esc", "exhausted"),
        ],
        [group("g", ["m1", "m2"], "joinOnQuorum")],
    )
    plan = Plan.from_definition(body, version=3)
    assert plan.roots == [("node", "draft")]
    loop = plan.loops["loop_g__to__draft"]
    assert (loop.source_kind, loop.source_ref, loop.entry_node, loop.max_iterations) == ("group", "g", "draft", 2)
    assert loop.body == {"draft", "m1", "m2"}
    assert loop.exhausted_edge.target_ref == "esc" and loop.edge_index == 3
    assert plan.groups["g"].loop_back is loop
    assert [e.index for e in plan.groups["g"].member_successor_edges] == [1, 2]
    assert plan.nodes["m1"].in_join_group and plan.nodes["m1"].loop_id == "loop_g__to__draft"
    assert plan.nodes["pub"].loop_id is None
    assert [e.role for e in plan.group_edges["g"]] == ["exhausted"]  # loop-backs are not forward edges


def test_commands_need_the_plan_of_the_pinned_version():
    h = Harness(CHAIN, version=1)
    h.dispatch()
    other = Plan.from_definition(CHAIN, version=2)
    with pytest.raises(ValueError, match="v1, not test-flow v2"):
        apply(other, h.state, Tick(), ManualClock(0), SeededIds(0))


def test_two_parents_reaching_one_node_create_two_steps(run):
    body = definition([agent("a"), agent("b"), webhook("c")], [edge("a", "c", "approve"), edge("b", "c", "approve")])
    h = run(body)
    h.dispatch()
    a, b = h.sid("a"), h.sid("b")
    assert [s.step_id for s in h.state.steps_of("c")] == [f"{a}__to__c", f"{b}__to__c"]  # no implicit join
