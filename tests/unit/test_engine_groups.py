"""Parallel groups: waitAll, cancelOnQuorum, joinOnQuorum, requiredNodeIds (semantics §5.4, §5.5)."""

from __future__ import annotations

import pytest

from toolkit.engine.testing import G, Harness, agent, definition, edge, group, human


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


def member_ids(h, *nodes):
    return [h.sid(n) for n in nodes]


# ---------------------------------------------------------------- joinOnQuorum

JOIN = definition(
    [
        agent("draft", mockOutput={"decision": "approve", "text": "v1"}),
        human("legal", "ann"),
        human("brand", "bob"),
        agent("publish"),
    ],
    [
        edge("draft", G("board"), "approve"),
        edge("legal", "publish", "approve"),
        edge("brand", "publish", "approve"),
        edge(G("board"), "draft", "reject", loop=3),
    ],
    [group("board", ["legal", "brand"], "joinOnQuorum")],
)


def test_join_on_quorum_creates_one_successor_with_group_output(run):
    h = run(JOIN)
    h.dispatch()
    draft = h.sid("draft")
    assert member_ids(h, "legal", "brand") == [f"{draft}__to__legal", f"{draft}__to__brand"]
    h.decide("legal", "ann", "approve")
    assert h.state.steps_of("publish") == []  # members never fan out on their own edges
    h.decide("brand", "bob", "approve")
    publish = h.step("publish")
    assert publish.step_id == "group_board__to__publish"
    assert publish.input == {
        "decision": "approve",
        "groupId": "board",
        "groupOutputs": {"legal": h.step("legal").output, "brand": h.step("brand").output},
        "quorum": 2,
        "totalApproved": 2,
        "expectedSteps": 2,
    }
    assert len(h.state.steps_of("publish")) == 1  # one step per distinct target
    quorum = h.of_type("group.quorum-met")
    assert [(e.step_id, e.data) for e in quorum] == [
        (h.sid("brand"), {"groupId": "board", "total": 2, "quorum": 2, "completedTotal": 2, "expectedSteps": 2})
    ]
    assert h.state.status == "completed"
    tail = [e.type for e in h.events if e.seq > quorum[0].seq][:3]
    assert tail == ["parallel-group.completed", "step.scheduled", "step.started"]


def test_join_quorum_cancels_the_rest_and_omits_them_from_group_outputs(run):
    body = definition(
        [agent("prep"), human("a", "u1"), human("b", "u2"), human("c", "u3"), agent("next")],
        [
            edge("prep", G("g"), "approve"),
            edge("a", "next", "approve"),
            edge("b", "next", "approve"),
            edge("c", "next", "approve"),
            edge(G("g"), "prep", "reject", loop=2),
        ],
        [group("g", ["a", "b", "c"], "joinOnQuorum", quorum=2)],
    )
    h = run(body)
    h.dispatch()
    h.decide("a", "u1", "approve")
    h.decide("c", "u3", "approve")
    assert h.statuses() == [
        ("prep", "completed"),
        ("a", "completed"),
        ("b", "cancelled"),
        ("c", "completed"),
        ("next", "completed"),
    ]
    cancelled = h.of_type("step.cancelled")
    assert [(e.step_id, e.data) for e in cancelled] == [
        (h.sid("b"), {"actorId": "system:group-quorum", "reason": "group-quorum-met"})
    ]
    assert sorted(h.step("next").input["groupOutputs"]) == ["a", "c"]
    assert h.of_type("group.quorum-met")[0].data == {
        "groupId": "g",
        "total": 2,
        "quorum": 2,
        "completedTotal": 2,
        "expectedSteps": 3,
    }
    assert h.state.status == "completed"


def test_join_reject_without_mandatory_rejection_ends_completed(run):
    """Semantics §5.8: a quorum group's members are never unhandled (the group owns their
    routing), so a reject the loop does not take ends the execution quietly."""
    body = definition(
        [agent("prep"), human("a", "u1", ("opt", False)), human("b", "u2"), agent("next")],
        [
            edge("prep", G("g"), "approve"),
            edge("a", "next", "approve"),
            edge("b", "next", "approve"),
            edge(G("g"), "prep", "reject", loop=2),
        ],
        [group("g", ["a", "b"], "joinOnQuorum")],
    )
    h = run(body)
    h.dispatch()
    h.decide("a", "opt", "reject", "meh")  # an optional reviewer: not a mandatory rejection
    h.decide("b", "u2", "approve")
    assert h.of_type("loop.iteration-started") == []
    completed = h.of_type("parallel-group.completed")[0]
    assert completed.data == {
        "groupId": "g",
        "decision": "reject",
        "totalApproved": 1,
        "completedTotal": 2,
        "expectedSteps": 2,
    }
    assert h.state.status == "completed"
    assert h.state.failure_reason is None


# ---------------------------------------------------------------- cancelOnQuorum

CANCEL = definition(
    [
        agent("prep"),
        human("sec", "frank"),
        human("fin", "erin"),
        human("proc", "grace"),
        agent("po"),
        agent("sec-fix"),
        agent("fin-fix"),
        agent("proc-fix"),
    ],
    [
        edge("prep", G("buy"), "approve"),
        edge(G("buy"), "po", "approve"),
        edge("sec", "sec-fix", "reject"),
        edge("fin", "fin-fix", "reject"),
        edge("proc", "proc-fix", "reject"),
    ],
    [group("buy", ["sec", "fin", "proc"], "cancelOnQuorum", quorum=2)],
)


def test_cancel_on_quorum_cancels_the_others_and_fires_once(run):
    h = run(CANCEL)
    h.dispatch()
    h.decide("sec", "frank", "approve")
    seq = h.state.last_seq
    h.decide("proc", "grace", "approve")
    proc, fin = h.sid("proc"), h.sid("fin")
    after = [(e.type, e.step_id, e.data) for e in h.events if e.seq > seq and e.type != "step.response-recorded"]
    assert after[:5] == [
        ("step.resumed", proc, {"aggregatorStatus": "resolved"}),
        ("step.completed", proc, {"nodeType": "human", "decision": "approve", "aggregatorStatus": "resolved"}),
        (
            "group.quorum-met",
            proc,
            {"groupId": "buy", "total": 2, "quorum": 2, "completedTotal": 2, "expectedSteps": 3},
        ),
        ("step.cancelled", fin, {"actorId": "system:group-quorum", "reason": "group-quorum-met"}),
        (
            "parallel-group.completed",
            proc,
            {"groupId": "buy", "decision": "approve", "totalApproved": 2, "completedTotal": 3, "expectedSteps": 3},
        ),
    ]
    assert h.step("po").step_id == "group_buy__to__po"
    assert h.step("po").input["decision"] == "approve"
    assert len(h.state.steps_of("po")) == 1
    assert h.state.status == "completed"


def test_cancel_on_quorum_members_fan_out_on_their_own_edges(run):
    h = run(CANCEL)
    h.dispatch()
    h.decide("fin", "erin", "reject", "over budget")
    assert h.step("fin-fix").step_id == f"{h.sid('fin')}__to__fin-fix"
    h.decide("sec", "frank", "approve")
    h.decide("proc", "grace", "approve")
    assert [n for n, _ in h.statuses()] == ["prep", "sec", "fin", "proc", "fin-fix", "po"]
    assert h.state.status == "completed"


def test_cancel_on_quorum_without_quorum_routes_only_member_edges(run):
    h = run(CANCEL)
    h.dispatch()
    h.decide("sec", "frank", "reject")
    h.decide("fin", "erin", "reject")
    h.decide("proc", "grace", "approve")
    assert h.of_type("group.quorum-met") == []
    assert h.of_type("parallel-group.completed")[0].data["decision"] == "reject"
    assert h.state.steps_of("po") == []
    assert h.state.status == "completed"  # both rejections were routed by their own edges


def test_cancel_on_quorum_member_rejection_is_the_groups_to_route(run):
    body = definition(
        [human("a", "u1"), human("b", "u2"), human("c", "u3"), agent("po")],
        [edge(G("g"), "po", "approve")],
        [group("g", ["a", "b", "c"], "cancelOnQuorum", quorum=2)],
    )
    h = run(body)
    h.dispatch()
    h.decide("b", "u2", "reject")
    h.decide("a", "u1", "reject")
    assert h.state.status == "running"  # c is still waiting
    h.decide("c", "u3", "approve")
    assert h.state.status == "completed"  # members of quorum groups are never unhandled (§5.8)
    assert h.state.failure_reason is None


def test_cancel_on_quorum_outvoted_rejection_is_handled(run):
    body = definition(
        [human("a", "u1"), human("b", "u2"), human("c", "u3"), agent("po")],
        [edge(G("g"), "po", "approve")],
        [group("g", ["a", "b", "c"], "cancelOnQuorum", quorum=2)],
    )
    h = run(body)
    h.dispatch()
    h.decide("b", "u2", "reject")
    h.decide("a", "u1", "approve")
    h.decide("c", "u3", "approve")
    assert h.state.status == "completed"


# ---------------------------------------------------------------- waitAll

WAIT = definition(
    [human("qa", "q"), human("eng", "e"), agent("ship"), agent("rework"), agent("note")],
    [edge(G("signoff"), "ship", "approve"), edge(G("signoff"), "rework", "reject"), edge("qa", "note", "approve")],
    [group("signoff", ["qa", "eng"])],
)


def test_wait_all_unanimity_approves_as_edge_source(run):
    h = run(WAIT)
    h.dispatch()
    h.decide("qa", "q", "approve")
    assert h.step("note").status == "completed"  # members fan out on their own edges at once
    assert h.of_type("group.quorum-met") == []
    h.decide("eng", "e", "approve")
    assert h.of_type("group.quorum-met")[0].data == {
        "groupId": "signoff",
        "total": 2,
        "quorum": 2,
        "completedTotal": 2,
        "expectedSteps": 2,
    }
    ship = h.step("ship")
    assert ship.step_id == "group_signoff__to__ship"
    assert ship.input["decision"] == "approve" and ship.input["totalApproved"] == 2
    assert h.state.steps_of("rework") == []
    assert h.state.status == "completed"


def test_wait_all_rejects_only_when_every_member_is_terminal(run):
    h = run(WAIT)
    h.dispatch()
    h.decide("qa", "q", "reject", "flaky tests")
    assert h.state.steps_of("rework") == [] and h.step("eng").status == "waiting"
    h.decide("eng", "e", "approve")
    rework = h.step("rework")
    assert rework.step_id == "group_signoff__to__rework"
    assert rework.input["decision"] == "reject"
    assert rework.input["groupOutputs"]["qa"]["rejectionReason"] == "flaky tests"
    assert h.state.steps_of("ship") == []
    assert h.of_type("group.quorum-met") == []
    assert h.state.status == "completed"  # qa's rejection is routed by the group's reject edge


def test_wait_all_member_rejection_unrouted_without_group_edges(run):
    body = definition(
        [human("qa", "q"), human("eng", "e"), agent("ship")],
        [edge(G("s"), "ship", "approve")],
        [group("s", ["qa", "eng"])],
    )
    h = run(body)
    h.dispatch()
    h.decide("eng", "e", "approve")
    h.decide("qa", "q", "reject")
    assert h.state.status == "failed" and h.state.failure_reason == "step-rejected:qa"


def test_wait_all_custom_group_edge_reads_group_output(run):
    body = definition(
        [human("a", "u1"), human("b", "u2"), agent("most")],
        [edge(G("g"), "most", "custom", when='{"op": "gte", "args": [{"var": "output.totalApproved"}, 1]}')],
        [group("g", ["a", "b"])],
    )
    h = run(body)
    h.dispatch()
    h.decide("a", "u1", "reject")
    h.decide("b", "u2", "approve")
    assert h.step("most").input["totalApproved"] == 1
    assert h.state.status == "completed"


# ---------------------------------------------------------------- requiredNodeIds

REQUIRED = definition(
    [human("legal", "l"), human("privacy", "p"), human("dpia", "d"), agent("sign")],
    [edge(G("g"), "sign", "approve")],
    [group("g", ["legal", "privacy", "dpia"], "cancelOnQuorum", quorum=2, required=["legal"])],
)


def test_required_member_must_approve_for_quorum(run):
    h = run(REQUIRED)
    h.dispatch()
    h.decide("privacy", "p", "approve")
    h.decide("dpia", "d", "approve")
    assert h.of_type("group.quorum-met") == []
    assert h.step("legal").status == "waiting"
    h.decide("legal", "l", "approve")
    assert h.of_type("group.quorum-met")[0].data == {
        "groupId": "g",
        "total": 3,
        "quorum": 2,
        "completedTotal": 3,
        "expectedSteps": 3,
    }
    assert h.step("sign").input["totalApproved"] == 3
    assert h.state.status == "completed"


def test_required_member_meets_quorum_with_one_other(run):
    h = run(REQUIRED)
    h.dispatch()
    h.decide("legal", "l", "approve")
    h.decide("dpia", "d", "approve")
    assert h.step("privacy").status == "cancelled"
    assert h.step("sign").status == "completed"


# ---------------------------------------------------------------- instances


def test_each_firing_into_a_group_is_a_new_instance(run):
    body = definition(
        [agent("p1"), agent("p2"), agent("m1"), agent("m2"), agent("done")],
        [edge("p1", G("g"), "approve"), edge("p2", G("g"), "approve"), edge(G("g"), "done", "always")],
        [group("g", ["m1", "m2"])],
    )
    h = run(body)
    h.dispatch()
    assert sorted(h.state.groups) == ["g:1:1", "g:1:2"]
    assert [s.step_id for s in h.state.steps_of("done")] == ["group_g__to__done", "group_g__to__done__g2"]
    assert [s.instance_id for s in h.state.steps_of("m1")] == ["g:1:1", "g:1:2"]
    assert h.state.status == "completed"


def test_cancelling_a_member_counts_toward_group_completion(run):
    h = run(WAIT)
    h.dispatch()
    h.decide("qa", "q", "approve")
    h.cancel_step("eng", "ops", "left the company")
    assert h.of_type("parallel-group.completed")[0].data["decision"] == "reject"
    assert h.step("rework").status == "completed"
    assert h.state.status == "completed"


def test_wait_all_approves_only_when_every_member_approved_whatever_its_quorum(run):
    # semantics §5.5: waitAll approves "when every member approved"; a quorum below the
    # member count does not make a majority enough
    body = definition(
        [human("qa", "q"), human("eng", "e"), human("ops", "o"), agent("ship"), agent("rework")],
        [edge(G("signoff"), "ship", "approve"), edge(G("signoff"), "rework", "reject")],
        [group("signoff", ["qa", "eng", "ops"], "waitAll", quorum=1)],
    )
    h = run(body)
    h.dispatch()
    h.decide("qa", "q", "approve")
    h.decide("eng", "e", "approve")
    assert h.state.steps_of("ship") == [] and h.state.steps_of("rework") == []
    h.decide("ops", "o", "reject")
    assert h.state.steps_of("ship") == []
    assert h.step("rework").input["decision"] == "reject"


@pytest.mark.parametrize("policy", ["cancelOnQuorum", "joinOnQuorum"])
def test_quorum_fires_the_groups_custom_edge_once(run, policy):
    # semantics §5.5: on quorum, the group-source approve/always/custom edges fire once
    body = definition(
        [human("a", "u1"), human("b", "u2"), human("c", "u3"), agent("most")],
        [edge(G("g"), "most", "custom", when='{"op": "gte", "args": [{"var": "output.totalApproved"}, 2]}')],
        [group("g", ["a", "b", "c"], policy, quorum=2)],
    )
    h = run(body)
    h.dispatch()
    h.decide("a", "u1", "approve")
    assert h.state.steps_of("most") == []
    h.decide("b", "u2", "approve")
    (most,) = h.state.steps_of("most")
    assert most.step_id == "group_g__to__most" and most.input["totalApproved"] == 2
    assert h.step("c").status == "cancelled"  # quorum met: the member still waiting is withdrawn
    assert len(h.state.steps_of("most")) == 1
