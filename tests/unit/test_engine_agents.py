"""Agent steps: the runner, outputs, failures, timeouts, blocking resolutions (semantics §5.3, api-v2 §4.7)."""

from __future__ import annotations

import pytest

from toolkit.engine import (
    AgentCompleted,
    AgentFailure,
    AgentRequest,
    DefaultAgentRunner,
    Dispatch,
    ManualClock,
    Plan,
    RecordAgentResolution,
    SeededIds,
    apply,
    resume_key,
    run_agents,
)
from toolkit.engine.testing import HOLD, Harness, ScriptedRunner, agent, definition, edge, human
from toolkit.errors import ApiError, ErrorCode


@pytest.fixture(params=["live", "restore"])
def run(request):
    return lambda body, **kw: Harness(body, restore=request.param == "restore", **kw)


# ---------------------------------------------------------------- non-blocking agents


def test_default_runner_outputs():
    runner = DefaultAgentRunner()
    assert runner.run(AgentRequest("s", "n", "spell", {"agentId": "spell"}, {})) == {
        "agentId": "spell",
        "decision": "approve",
    }
    mock = {"decision": "reject", "notes": {"n": [1]}}
    out = runner.run(AgentRequest("s", "n", "spell", {"mockOutput": mock}, {}))
    assert out == mock and out is not mock and out["notes"] is not mock["notes"]
    assert runner.run(AgentRequest("s", "n", "spell", {"external": True, "mockOutput": mock}, {})) is None


def test_mock_output_is_the_step_output_and_routes(run):
    body = definition(
        [agent("score", mockOutput={"decision": "reject", "score": 0.2}), agent("ok"), agent("no")],
        [edge("score", "ok", "approve"), edge("score", "no", "reject")],
    )
    h = run(body)
    h.dispatch()
    assert h.step("score").output == {"decision": "reject", "score": 0.2}
    assert h.statuses() == [("score", "completed"), ("no", "completed")]
    assert h.state.status == "completed"


def test_require_non_empty_output_fails_on_empty(run):
    body = definition(
        [agent("a", requireNonEmptyOutput=True, mockOutput={}), agent("after")], [edge("a", "after", "always")]
    )
    h = run(body)
    h.dispatch()
    step = h.step("a")
    assert step.status == "failed"
    assert step.error == {"code": "empty-output", "message": "agent a returned an empty output"}
    failed = h.of_type("step.failed")[0]
    assert failed.data == {"error": step.error}
    # always fires on failure, which handles the outcome
    assert h.statuses() == [("a", "failed"), ("after", "completed")]
    assert h.state.status == "completed"


def test_runner_failure_fails_the_step_and_the_execution(run):
    runner = ScriptedRunner({"a": AgentFailure("upstream-500", "model unavailable")})
    h = run(definition([agent("a"), agent("b")], [edge("a", "b", "approve")]), runner=runner)
    h.dispatch()
    assert h.step("a").error == {"code": "upstream-500", "message": "model unavailable"}
    assert h.state.status == "failed" and h.state.failure_reason == "step-failed:a"
    assert h.types() == ["execution.dispatched", "step.failed", "execution.failed"]


def test_external_agent_stays_running_until_resolved(run):
    h = run(definition([agent("ext", external=True), agent("b")], [edge("ext", "b", "approve")]))
    h.dispatch()
    assert h.step("ext").status == "running"
    assert h.state.status == "running"
    h.resolve("ext", "force-complete", "integration", output={"decision": "approve", "ticket": 7})
    assert h.step("ext").output == {"decision": "approve", "ticket": 7}
    assert h.statuses() == [("ext", "completed"), ("b", "completed")]


def test_agent_timeout_on_tick(run):
    h = run(
        definition([agent("slow", agentMaxRuntimeMs=5_000), agent("after")], [edge("slow", "after", "always")]),
        runner=ScriptedRunner({"slow": HOLD}),
        start_ms=1_000,
    )
    h.dispatch()
    assert h.state.next_deadline() == 6_000
    assert h.tick(5_999) == {"fired": 0}
    assert h.step("slow").status == "running"
    assert h.tick(6_000) == {"fired": 1}
    step = h.step("slow")
    assert step.status == "failed" and step.completed_at == 6_000
    assert step.error == {"code": "agent-timeout", "message": "agent slow ran longer than 5000 ms"}
    assert h.statuses() == [("slow", "failed"), ("after", "completed")]
    assert h.state.next_deadline() is None


def test_agent_completed_command_and_its_errors(run):
    h = run(
        definition([agent("a"), human("r", "ann"), agent("x")], [edge("a", "r", "approve"), edge("r", "x", "reject")]),
        runner=ScriptedRunner({"a": HOLD}),
    )
    h.dispatch()
    with pytest.raises(ApiError) as err:
        h.send(AgentCompleted("missing", {}))
    assert err.value.code == ErrorCode.NOT_FOUND
    with pytest.raises(ApiError) as err:
        h.send(AgentCompleted(h.sid("a"), ["not", "an", "object"]))
    assert err.value.code == ErrorCode.INVALID_ARGUMENT
    result = h.agent_done("a", {"decision": "approve"})
    assert result == {"completed": True, "stepId": h.sid("a"), "status": "completed"}
    with pytest.raises(ApiError) as err:
        h.agent_done("a", {"decision": "approve"})  # already completed
    assert err.value.code == ErrorCode.FAILED_PRECONDITION
    with pytest.raises(ApiError) as err:
        h.agent_done("r", {})  # a human step
    assert err.value.code == ErrorCode.FAILED_PRECONDITION


def test_agent_completed_with_error(run):
    h = run(definition([agent("a")], []), runner=ScriptedRunner({"a": HOLD}))
    h.dispatch()
    h.agent_done("a", error={"code": "bad-input", "message": "no text"})
    assert h.step("a").status == "failed"
    assert h.of_type("step.failed")[0].data == {"error": {"code": "bad-input", "message": "no text"}}
    assert h.state.failure_reason == "step-failed:a"


def test_run_agents_follows_chains_and_returns_transitions():
    body = definition(
        [agent("a"), agent("b"), agent("c", external=True)], [edge("a", "b", "approve"), edge("b", "c", "approve")]
    )
    plan = Plan.from_definition(body)
    clock, ids = ManualClock(0), SeededIds(0)
    first = apply(plan, None, Dispatch("ex_1"), clock, ids)
    assert [r.node_id for r in first.agent_requests] == ["a"]
    request = first.agent_requests[0]
    assert (request.agent_id, request.config["agentId"], request.input) == ("a", "a", {})
    extra = run_agents(plan, first.state, first, clock, ids)
    assert [t.result["stepId"] for t in extra] == [
        first.state.steps_of("a")[0].step_id,
        first.state.steps_of("b")[0].step_id,
    ]
    assert first.state.steps_of("c")[0].status == "running"  # external
    assert extra[-1].agent_requests[0].node_id == "c"


def test_run_agents_skips_steps_that_ended_meanwhile():
    plan = Plan.from_definition(definition([agent("a"), agent("b")], []))
    clock, ids = ManualClock(0), SeededIds(0)
    first = apply(plan, None, Dispatch("ex_1"), clock, ids)
    state = first.state
    calls = []

    class FailFirst:
        def run(self, request):
            calls.append(request.node_id)
            raise AgentFailure("boom", "x")

    # Fail a; b still runs. Then nothing is left to run.
    extra = run_agents(plan, state, first, clock, ids, FailFirst())
    assert calls == ["a", "b"] and len(extra) == 2
    assert state.status == "failed" and state.failure_reason == "step-failed:a"
    assert run_agents(plan, state, first, clock, ids, FailFirst()) == []


# ---------------------------------------------------------------- blocking agents


def blocking(node_id="panel", kind="allResolved", expected=2, min_count=None, **extra):
    policy = {"kind": kind} if min_count is None else {"kind": kind, "minCount": min_count}
    return agent(node_id, blocking=True, resolutionPolicy=policy, expectedResolutions=expected, **extra)


PANEL = lambda **kw: definition(
    [blocking(**kw), agent("ok"), agent("no")],  # noqa: E731
    [
        edge("panel", "ok", "approve"),
        edge("panel", "no", "reject"),
        edge("panel", "no", "custom", when='{"op": "eq", "args": [{"var": "step.status"}, "failed"]}'),
    ],
)


def test_blocking_agent_waits_with_awaiting_approval(run):
    h = run(PANEL(kind="minResolved", expected=3, min_count=2))
    h.dispatch()
    step = h.step("panel")
    assert step.status == "waiting"
    assert h.of_type("step.awaiting-approval")[0].data == {
        "waitingForReviewers": 2,
        "mandatoryCount": 2,
        "resumeKey": resume_key("ex_test", step.step_id),
    }
    assert h.state.next_deadline() is None  # no agent timeout while waiting for resolutions


def test_all_resolved_completes_after_expected_successes(run):
    h = run(PANEL(expected=2), start_ms=10)
    h.dispatch()
    assert h.resolution("panel", "r1", "success", {"decision": "approve", "n": 1}) == {
        "recorded": True,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
    }
    h.at(20)
    assert h.resolution("panel", "r2", "success", {"decision": "approve"}) == {
        "recorded": True,
        "aggregatorStatus": "resolved",
        "resumeScheduled": True,
    }
    step = h.step("panel")
    assert step.output == {
        "decision": "approve",
        "resolutions": [
            {
                "resolutionId": "r1",
                "status": "success",
                "output": {"decision": "approve", "n": 1},
                "errorMessage": None,
                "recordedAt": 10,
            },
            {
                "resolutionId": "r2",
                "status": "success",
                "output": {"decision": "approve"},
                "errorMessage": None,
                "recordedAt": 20,
            },
        ],
        "successCount": 2,
        "failureCount": 0,
    }
    tail = [(e.type, e.data) for e in h.events if e.step_id == step.step_id][-4:]
    assert tail == [
        ("step.response-recorded", {"resolutionId": "r1", "status": "success"}),
        ("step.response-recorded", {"resolutionId": "r2", "status": "success"}),
        ("step.resumed", {"aggregatorStatus": "resolved"}),
        ("step.completed", {"nodeType": "agent", "decision": "approve", "aggregatorStatus": "resolved"}),
    ]
    assert h.statuses() == [("panel", "completed"), ("ok", "completed")]


def test_min_resolved_tolerates_failures_until_unreachable(run):
    h = run(PANEL(kind="minResolved", expected=3, min_count=2))
    h.dispatch()
    h.resolution("panel", "r1", "failure", error_message="timeout")
    assert h.step("panel").status == "waiting"
    h.resolution("panel", "r2", "success", {"decision": "approve"})
    assert h.resolution("panel", "r3", "success", {"decision": "approve"})["aggregatorStatus"] == "resolved"
    out = h.step("panel").output
    assert (out["decision"], out["successCount"], out["failureCount"]) == ("approve", 2, 1)


def test_min_resolved_fails_as_soon_as_unreachable(run):
    h = run(PANEL(kind="minResolved", expected=3, min_count=2))
    h.dispatch()
    h.resolution("panel", "r1", "failure", error_message="e1")
    assert h.resolution("panel", "r2", "failure", error_message="e2") == {
        "recorded": True,
        "aggregatorStatus": "failed",
        "resumeScheduled": True,
    }
    step = h.step("panel")
    assert step.status == "failed"
    assert step.error["code"] == "resolution-threshold-unreachable"
    assert (step.output["successCount"], step.output["failureCount"]) == (0, 2)
    assert h.of_type("step.resumed")[-1].data == {"aggregatorStatus": "failed"}
    # the custom edge reading step.status routes the failure
    assert h.statuses() == [("panel", "failed"), ("no", "completed")]
    assert h.state.status == "completed"


def test_all_resolved_fails_on_first_failure(run):
    h = run(PANEL(expected=2))
    h.dispatch()
    assert h.resolution("panel", "r1", "failure", error_message="bad")["aggregatorStatus"] == "failed"


def test_agent_reject_sets_rejector_fields(run):
    h = run(PANEL(expected=2))
    h.dispatch()
    h.resolution("panel", "r1", "success", {"decision": "reject", "reason": "unsafe"})
    h.resolution("panel", "r2", "success", {"decision": "approve"})
    out = h.step("panel").output
    assert (out["decision"], out["rejectedBy"], out["rejectorMandatory"], out["rejectionReason"]) == (
        "reject",
        "panel",
        True,
        "unsafe",
    )
    assert h.of_type("step.completed")[0].data == {
        "nodeType": "agent",
        "decision": "reject",
        "aggregatorStatus": "resolved",
    }
    assert h.statuses() == [("panel", "completed"), ("no", "completed")]


def test_agent_reject_without_reason_has_null_reason(run):
    h = run(PANEL(expected=1))
    h.dispatch()
    h.resolution("panel", "r1", "success", {"decision": "reject"})
    assert h.step("panel").output["rejectionReason"] is None


def test_resolution_replays(run):
    h = run(PANEL(expected=2))
    h.dispatch()
    h.resolution("panel", "r1", "success", {"decision": "approve"})
    seq = h.state.last_seq
    assert h.resolution("panel", "r1", "failure", error_message="x") == {
        "recorded": False,
        "aggregatorStatus": "pending",
        "resumeScheduled": False,
    }
    assert h.state.last_seq == seq
    h.resolution("panel", "r2", "success", {"decision": "approve"})
    # after the step (and execution) ended: a replay answers, a new id is refused
    assert h.resolution("panel", "r2", "success") == {
        "recorded": False,
        "aggregatorStatus": "resolved",
        "resumeScheduled": False,
    }
    with pytest.raises(ApiError) as err:
        h.resolution("panel", "r3", "success")
    assert err.value.code == ErrorCode.FAILED_PRECONDITION


def test_resolution_errors(run):
    h = run(
        definition(
            [blocking(), agent("plain", external=True), human("r", "ann"), agent("x")], [edge("r", "x", "reject")]
        )
    )
    h.dispatch()
    sid = h.sid("panel")
    for cmd, code in [
        (RecordAgentResolution("missing", "r1", "success"), ErrorCode.NOT_FOUND),
        (RecordAgentResolution(sid, "r1", "done"), ErrorCode.INVALID_ARGUMENT),
        (RecordAgentResolution(sid, "r1", "failure"), ErrorCode.INVALID_ARGUMENT),
        (RecordAgentResolution(sid, "", "success"), ErrorCode.INVALID_ARGUMENT),
        (RecordAgentResolution(sid, "r1", "success", output="x"), ErrorCode.INVALID_ARGUMENT),
        (RecordAgentResolution(h.sid("plain"), "r1", "success"), ErrorCode.FAILED_PRECONDITION),
        (RecordAgentResolution(h.sid("r"), "r1", "success"), ErrorCode.FAILED_PRECONDITION),
    ]:
        with pytest.raises(ApiError) as err:
            h.send(cmd)
        assert err.value.code == code, cmd
    h.cancel_step("panel")
    with pytest.raises(ApiError) as err:
        h.resolution("panel", "r9", "success")
    assert err.value.code == ErrorCode.FAILED_PRECONDITION


def test_cancelled_blocking_step_reports_cancelled_on_replay(run):
    h = run(PANEL(expected=2))
    h.dispatch()
    h.resolution("panel", "r1", "success", {"decision": "approve"})
    h.cancel_step("panel", "ops", "obsolete")
    assert h.resolution("panel", "r1", "success")["aggregatorStatus"] == "cancelled"
