"""Reject loop-backs: iterations, previousAttempts, restarts, exhaustion (semantics §5.6)."""

from __future__ import annotations

import pytest

from toolkit.engine.testing import G, Harness, ScriptedRunner, agent, definition, edge, group, human


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


LOOP_ID = "loop_review__to__draft"


def revision_flow(max_iterations=3, exhausted=True, extra_nodes=(), extra_edges=()):
    nodes = [agent("draft"), human("review", "ann", ("opt", False)), agent("publish"), agent("escalate"), *extra_nodes]
    edges = [
        edge("draft", "review", "approve"),
        edge("review", "publish", "approve"),
        edge("review", "draft", "reject", loop=max_iterations),
        *extra_edges,
    ]
    if exhausted:
        edges.append(edge("review", "escalate", "exhausted"))
    return definition(nodes, edges)


def drafts_runner():
    return ScriptedRunner({"draft": [{"decision": "approve", "text": f"v{i}"} for i in (1, 2, 3, 4)]})


def test_mandatory_rejection_restarts_the_loop_with_previous_attempts(run):
    h = run(revision_flow(), runner=drafts_runner(), start_ms=1_000)
    h.dispatch()
    review1 = h.sid("review")
    h.at(2_000)
    result = h.decide("review", "ann", "reject", "too long")
    assert result == {"recorded": True, "aggregatorStatus": "rejected", "resumeScheduled": True}
    draft2 = h.step("draft", 2)
    assert draft2.step_id == f"{review1}__to__draft"
    assert draft2.iteration == 2
    assert draft2.input == {
        "iteration": 2,
        "loopId": LOOP_ID,
        "previousAttempts": [
            {
                "iteration": 1,
                "authorOutput": {"decision": "approve", "text": "v1"},
                "rejectedBy": "ann",
                "rejectorMandatory": True,
                "rejectionReason": "too long",
                "rejectedAt": 2_000,
            }
        ],
    }
    started = h.of_type("loop.iteration-started")
    assert [(e.step_id, e.data) for e in started] == [
        (draft2.step_id, {"loopId": LOOP_ID, "iteration": 2, "triggeredBy": "rejection"})
    ]
    # order: the rejection completes, the loop starts, then the entry step
    types = [e.type for e in h.events if e.seq > h.of_type("step.completed")[1].seq - 1]
    assert types[:4] == ["step.completed", "loop.iteration-started", "step.scheduled", "step.started"]
    review2 = h.step("review", 2)
    assert (review2.step_id, review2.iteration) == (f"{draft2.step_id}__to__review", 2)
    assert h.state.loops[LOOP_ID].iteration == 2

    h.at(3_000)
    h.decide("review", "ann", "reject", "still long", occurrence=2)
    draft3 = h.step("draft", 3)
    attempts = draft3.input["previousAttempts"]
    assert [a["iteration"] for a in attempts] == [1, 2]  # oldest first
    assert attempts[1]["authorOutput"] == {"decision": "approve", "text": "v2"}
    assert attempts[1]["rejectionReason"] == "still long" and attempts[1]["rejectedAt"] == 3_000

    h.decide("review", "ann", "approve", occurrence=3)
    assert h.step("publish").status == "completed"
    assert h.state.status == "completed"
    assert h.state.steps_of("escalate") == []


def test_exhaustion_fires_the_exhausted_edge(run):
    h = run(revision_flow(max_iterations=2), runner=drafts_runner())
    h.dispatch()
    h.decide("review", "ann", "reject", "r1")
    h.decide("review", "ann", "reject", "r2", occurrence=2)
    review2 = h.sid("review", 2)
    exhausted = h.of_type("loop.exhausted")
    assert [(e.step_id, e.data) for e in exhausted] == [
        (review2, {"loopId": LOOP_ID, "iteration": 2, "lastRejectedBy": "ann", "lastRejectionReason": "r2"})
    ]
    escalate = h.step("escalate")
    assert escalate.step_id == f"{review2}__to__escalate"
    assert escalate.input["loopId"] == LOOP_ID and len(escalate.input["previousAttempts"]) == 2
    assert len(h.state.steps_of("draft")) == 2  # no third attempt
    assert h.state.loops[LOOP_ID].iteration == 2 and h.state.loops[LOOP_ID].exhausted
    assert h.state.status == "completed"


def test_exhaustion_without_route_fails_at_once(run):
    body = revision_flow(
        max_iterations=1,
        exhausted=False,
        extra_nodes=[human("side", "sid"), agent("side-fix")],
        extra_edges=[edge("side", "side-fix", "reject")],
    )
    h = run(body)
    h.dispatch()
    h.decide("review", "ann", "reject", "no")
    assert h.state.status == "failed"
    assert h.state.failure_reason == f"loop-exhausted:{LOOP_ID}"
    assert h.types()[-4:] == ["step.completed", "loop.exhausted", "step.cancelled", "execution.failed"]
    cancelled = h.of_type("step.cancelled")[0]
    assert (cancelled.step_id, cancelled.data) == (
        h.sid("side"),
        {"actorId": "system:loop-exhausted", "reason": "loop-exhausted"},
    )
    assert h.events[-1].data == {"failureReason": f"loop-exhausted:{LOOP_ID}"}


def test_restart_cancels_in_flight_body_steps(run):
    # draft fans out to review directly and through `check`, so a check step is in flight
    body = revision_flow(
        extra_nodes=[human("check", "chk"), agent("check-fix")],
        extra_edges=[
            edge("draft", "check", "approve"),
            edge("check", "review", "approve"),
            edge("check", "check-fix", "reject"),
        ],
    )
    h = run(body, runner=drafts_runner())
    h.dispatch()
    check1 = h.sid("check")
    assert h.step("check").status == "waiting"
    h.decide("review", "ann", "reject", "redo")
    cancelled = h.of_type("step.cancelled")
    assert [(e.step_id, e.data) for e in cancelled] == [
        (check1, {"actorId": "system:loop-restart", "reason": "loop-restart"})
    ]
    assert cancelled[0].seq < h.of_type("loop.iteration-started")[0].seq
    assert h.step("check", 2).status == "waiting" and h.step("check", 2).iteration == 2


def test_force_reject_does_not_iterate_the_loop(run):
    body = revision_flow(extra_nodes=[agent("notify")], extra_edges=[edge("review", "notify", "reject")])
    h = run(body)
    h.dispatch()
    h.resolve("review", "force-reject", "ops", reason="stop")
    assert h.of_type("loop.iteration-started") == [] and h.of_type("loop.exhausted") == []
    assert "rejectorMandatory" not in h.step("review").output
    assert h.step("notify").status == "completed"  # the forward reject edge fires instead
    assert h.state.status == "completed"


def test_reviewer_reject_action_does_not_iterate_the_loop(run):
    h = run(revision_flow())
    h.dispatch()
    h.resolve("review", "reviewer-reject", "ann")
    assert h.of_type("loop.iteration-started") == []
    assert h.state.status == "failed" and h.state.failure_reason == "step-rejected:review"


# Caller output keys pass through Resolve Step (§5.9), so its output may *claim* a mandatory
# rejector; the loop must still not fire: only Record Reviewer Decision makes one (§5.6).
CLAIMS_MANDATORY = {"rejectedBy": "ann", "rejectorMandatory": True, "rejectionReason": "claimed"}


@pytest.mark.parametrize(
    ("action", "output"),
    [
        ("force-reject", CLAIMS_MANDATORY),
        ("reviewer-reject", CLAIMS_MANDATORY),
        ("force-complete", {"decision": "reject", **CLAIMS_MANDATORY}),
    ],
)
def test_a_resolved_reject_never_loops_back_even_when_its_output_claims_a_mandatory_rejector(run, action, output):
    body = revision_flow(extra_nodes=[agent("notify")], extra_edges=[edge("review", "notify", "reject")])
    h = run(body)
    h.dispatch()
    h.resolve("review", action, "ann", output=dict(output))
    review = h.step("review")
    assert review.output["decision"] == "reject" and review.output["rejectorMandatory"] is True  # passed through
    assert h.of_type("loop.iteration-started") == [] and h.of_type("loop.exhausted") == []
    assert len(h.state.steps_of("draft")) == 1 and len(h.state.steps_of("review")) == 1  # nothing re-opened
    assert h.state.loops[LOOP_ID].iteration == 1
    assert h.step("notify").status == "completed"  # the forward reject edge fires instead
    assert h.state.steps_of("escalate") == []
    assert h.state.status == "completed"


def test_a_resolved_reject_at_the_last_iteration_does_not_exhaust_the_loop(run):
    # With a mandatory rejector this would fail the execution with loop-exhausted (no route).
    h = run(revision_flow(max_iterations=1, exhausted=False))
    h.dispatch()
    h.resolve("review", "force-reject", "ops", output=dict(CLAIMS_MANDATORY))
    assert h.of_type("loop.exhausted") == []
    assert h.state.status == "failed" and h.state.failure_reason == "step-rejected:review"


def test_optional_reviewer_rejection_fires_forward_reject_edges(run):
    body = revision_flow(extra_nodes=[agent("notify")], extra_edges=[edge("review", "notify", "reject")])
    h = run(body)
    h.dispatch()
    h.decide("review", "opt", "reject", "nit")
    assert h.step("review").output["rejectorMandatory"] is False
    assert h.of_type("loop.iteration-started") == []
    assert h.step("notify").status == "completed"


def test_a_looping_rejection_fires_no_forward_edges_of_the_source(run):
    body = revision_flow(extra_nodes=[agent("log")], extra_edges=[edge("review", "log", "always")])
    h = run(body)
    h.dispatch()
    h.decide("review", "ann", "reject")
    assert h.state.steps_of("log") == []
    h.decide("review", "ann", "approve", occurrence=2)
    assert h.step("log").status == "completed"


def test_agent_rejection_iterates_a_self_loop(run):
    answers = [{"decision": "reject", "reason": f"score {s}"} for s in (1, 2)] + [{"decision": "approve"}]
    body = definition(
        [agent("check"), agent("done")], [edge("check", "check", "reject", loop=3), edge("check", "done", "approve")]
    )
    h = run(body, runner=ScriptedRunner({"check": answers}))
    h.dispatch()
    checks = h.state.steps_of("check")
    assert [s.iteration for s in checks] == [1, 2, 3]
    assert checks[1].step_id == f"{checks[0].step_id}__to__check"
    assert checks[2].input["previousAttempts"] == [
        {
            "iteration": 1,
            "authorOutput": answers[0],
            "rejectedBy": "check",
            "rejectorMandatory": True,
            "rejectionReason": "score 1",
            "rejectedAt": 1_000,
        },
        {
            "iteration": 2,
            "authorOutput": answers[1],
            "rejectedBy": "check",
            "rejectorMandatory": True,
            "rejectionReason": "score 2",
            "rejectedAt": 1_000,
        },
    ]
    assert h.state.status == "completed"


def test_agent_rejection_exhausts_a_self_loop(run):
    body = definition(
        [agent("check", mockOutput={"decision": "reject"}), agent("done")],
        [edge("check", "check", "reject", loop=2), edge("check", "done", "approve")],
    )
    h = run(body)
    h.dispatch()
    assert len(h.state.steps_of("check")) == 2
    assert h.state.failure_reason == "loop-exhausted:loop_check__to__check"


# ---------------------------------------------------------------- a joinOnQuorum group as loop source

GROUP_LOOP = definition(
    [agent("draft"), human("legal", "ann"), human("brand", "bob"), agent("publish"), agent("escalate")],
    [
        edge("draft", G("board"), "approve"),
        edge("legal", "publish", "approve"),
        edge("brand", "publish", "approve"),
        edge(G("board"), "draft", "reject", loop=2),
        edge(G("board"), "escalate", "exhausted"),
    ],
    [group("board", ["legal", "brand"], "joinOnQuorum")],
)


def test_group_rejection_restarts_with_group_ids_and_a_fresh_instance(run):
    h = run(GROUP_LOOP)
    h.dispatch()
    h.decide("brand", "bob", "approve")
    h.decide("legal", "ann", "reject", "claims")
    draft2 = h.step("draft", 2)
    assert draft2.step_id == "group_board__to__draft__i2"
    assert draft2.input["iteration"] == 2 and draft2.input["groupId"] == "board"
    assert draft2.input["decision"] == "reject"
    assert draft2.input["previousAttempts"][0]["rejectedBy"] == "ann"
    assert draft2.input["previousAttempts"][0]["rejectionReason"] == "claims"
    assert h.of_type("loop.iteration-started")[0].step_id == draft2.step_id
    assert h.sid("legal", 2) == "group_board__to__draft__i2__to__legal"
    assert h.step("legal", 2).instance_id == "board:2:1"
    h.decide("legal", "ann", "approve", occurrence=2)
    h.decide("brand", "bob", "approve", occurrence=2)
    assert h.step("publish").step_id == "group_board__to__publish"
    assert h.state.status == "completed"


def test_a_resolved_member_reject_is_not_the_groups_mandatory_rejector(run):
    # legal is force-rejected first with output claiming a mandatory rejector; brand's mandatory
    # reviewer rejects after. The first *mandatory* rejection in completion order is brand's.
    h = run(GROUP_LOOP)
    h.dispatch()
    h.resolve("legal", "force-reject", "ops", output=dict(CLAIMS_MANDATORY))
    h.decide("brand", "bob", "reject", "tone")
    attempt = h.step("draft", 2).input["previousAttempts"][0]
    assert (attempt["rejectedBy"], attempt["rejectionReason"]) == ("bob", "tone")


def test_a_group_whose_only_mandatory_looking_reject_was_resolved_does_not_loop_back(run):
    body = definition(
        [agent("draft"), human("legal", "ann"), human("brand", "cat", ("bob", False)), agent("publish")],
        [
            edge("draft", G("board"), "approve"),
            edge("legal", "publish", "approve"),
            edge("brand", "publish", "approve"),
            edge(G("board"), "draft", "reject", loop=2),
        ],
        [group("board", ["legal", "brand"], "joinOnQuorum")],
    )
    h = run(body)
    h.dispatch()
    h.resolve("legal", "force-reject", "ops", output=dict(CLAIMS_MANDATORY))
    h.decide("brand", "bob", "reject", "optional nit")
    assert h.of_type("loop.iteration-started") == [] and h.of_type("loop.exhausted") == []
    assert len(h.state.steps_of("draft")) == 1 and len(h.state.steps_of("legal")) == 1
    assert h.state.status == "completed"  # a joinOnQuorum reject with no loop-back routes nothing


def test_group_loop_exhaustion_routes_from_the_group(run):
    h = run(GROUP_LOOP)
    h.dispatch()
    for occurrence in (1, 2):
        h.decide("legal", "ann", "reject", f"r{occurrence}", occurrence=occurrence)
        h.decide("brand", "bob", "reject", occurrence=occurrence)
    exhausted = h.of_type("loop.exhausted")[0]
    assert exhausted.step_id is None
    assert exhausted.data == {
        "loopId": "loop_board__to__draft",
        "iteration": 2,
        "lastRejectedBy": "ann",
        "lastRejectionReason": "r2",
    }
    escalate = h.step("escalate")
    assert escalate.step_id == "group_board__to__escalate"
    assert escalate.input["groupId"] == "board" and len(escalate.input["previousAttempts"]) == 2
    assert h.state.status == "completed"


def test_group_fired_edges_inside_a_loop_body_carry_the_iteration(run):
    body = definition(
        [agent("draft"), human("a", "u1"), human("b", "u2"), human("final", "boss"), agent("done"), agent("redo")],
        [
            edge("draft", G("g"), "approve"),
            edge(G("g"), "final", "approve"),
            edge(G("g"), "redo", "reject"),
            edge("final", "done", "approve"),
            edge("final", "draft", "reject", loop=3),
        ],
        [group("g", ["a", "b"])],
    )
    h = run(body)
    h.dispatch()
    h.decide("a", "u1", "approve")
    h.decide("b", "u2", "approve")
    assert h.sid("final") == "group_g__to__final"
    h.decide("final", "boss", "reject", "again")
    assert sorted(h.state.groups) == ["g:1:1", "g:2:1"]
    h.decide("a", "u1", "approve", occurrence=2)
    h.decide("b", "u2", "approve", occurrence=2)
    final2 = h.step("final", 2)
    assert (final2.step_id, final2.iteration) == ("group_g__to__final__i2", 2)
    h.decide("final", "boss", "approve", occurrence=2)
    assert h.state.status == "completed"
