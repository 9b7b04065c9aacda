"""Replay (toolkit.analytics.replay): executions recorded by a real server store replay to the
very same event log, and replaying them against another definition version diffs outcomes."""

from __future__ import annotations

import copy
import json

import pytest
from test_analytics_support import LOOP, SCRIPTS, ServerRecorder

from toolkit import examples
from toolkit.analytics import (
    Mirror,
    ReplayError,
    attach,
    diff,
    open_db,
    open_mirror,
    recorded_events,
    replay,
    replay_all,
    replay_execution,
)
from toolkit.cli import main
from toolkit.jsonio import dumps
from toolkit.simulate import simulate

LOOP_EXHAUSTED = "loop-exhausted:loop_review-board__to__draft"

# Two parallel branches, one with an SLA: a decision on the other branch that arrives after the
# deadline (before the timer fired) makes the server log a catch-up Tick and the decision,
# both at the decision's time.
BRANCHES = {
    "definitionId": "two-branches",
    "name": "A timed check next to an audit",
    "nodes": [
        {"nodeId": "intake", "type": "agent", "config": {"agentId": "intake"}},
        {
            "nodeId": "check",
            "type": "human",
            "slaMs": 60_000,
            "config": {"reviewers": [{"userId": "cat", "mandatory": True}]},
        },
        {"nodeId": "audit", "type": "human", "config": {"reviewers": [{"userId": "dan", "mandatory": True}]}},
        {"nodeId": "page", "type": "agent", "config": {"agentId": "pager"}},
        {"nodeId": "done", "type": "agent", "config": {"agentId": "closer"}},
        {"nodeId": "fix", "type": "agent", "config": {"agentId": "fixer"}},
    ],
    "edges": [
        {"from": "intake", "to": "check", "on": "approve"},
        {"from": "intake", "to": "audit", "on": "approve"},
        {
            "from": "check",
            "to": "page",
            "on": "custom",
            "when": '{"op": "eq", "args": [{"var": "step.status"}, "breached"]}',
        },
        {"from": "check", "to": "done", "on": "approve"},
        {"from": "check", "to": "fix", "on": "reject"},
        {"from": "audit", "to": "done", "on": "approve"},
        {"from": "audit", "to": "fix", "on": "reject"},
    ],
}


def record_everything(path) -> dict[str, str]:
    """Executions covering every command kind, recorded by a server store; returns name -> id."""
    rec = ServerRecorder(path)
    for name in ("parallel-review", "sla-escalation", "blocking-agent-quorum"):
        rec.define(examples.load(name))
    rec.define(BRANCHES)
    ids = {}
    # parallel review, two rounds: brand rejects round 1, both approve round 2
    rec.at(0)
    ids["two-rounds"] = e = rec.dispatch(
        "parallel-review", correlationId="campaign-7", idempotencyKey="k-7", triggerContext={"channel": "web"}
    )
    rec.at(60_000).decide(e, "legal-review", "alice@legal", "approve")
    rec.at(120_000).decide(e, "brand-review", "bob@brand", "reject", reason="off-brand")
    rec.at(200_000).decide(e, "legal-review", "alice@legal", "approve", occurrence=2)
    rec.at(260_000).decide(e, "brand-review", "bob@brand", "approve", occurrence=2)
    # the same idempotency key again: answered from the first dispatch, logged as SuppressedDispatch
    rec.at(270_000)
    assert rec.dispatch("parallel-review", idempotencyKey="k-7") == e
    # one round, both approve
    rec.at(1_000)
    ids["one-round"] = e = rec.dispatch("parallel-review")
    rec.at(31_000).decide(e, "brand-review", "bob@brand", "approve")
    rec.at(61_000).decide(e, "legal-review", "alice@legal", "approve")
    # overrides: legal force-approved, brand cancelled by an operator
    rec.at(2_000)
    ids["overrides"] = e = rec.dispatch("parallel-review")
    rec.at(5_000).resolve(e, "legal-review", "force-approve", "ops@example", reason="urgent")
    rec.at(7_000).cancel_step(e, "brand-review", "ops@example")
    # withdrawn
    rec.at(3_000)
    ids["cancelled"] = e = rec.dispatch("parallel-review")
    rec.at(33_000).cancel(e, reason="withdrawn")
    # SLA: the optional reviewer answers, the timer fires 250 ms late, the pager runs inline
    rec.at(4_000)
    ids["breach"] = e = rec.dispatch("sla-escalation")
    rec.at(3_604_000).decide(e, "legal-review", "paula@legal", "approve")
    rec.at(4_000 + 172_800_000 + 250).tick(e)
    # a decision after the deadline, before the timer fired: catch-up Tick + decision
    rec.at(5_000)
    ids["catch-up"] = e = rec.dispatch("two-branches")
    rec.at(95_000).decide(e, "audit", "dan", "approve")
    # a blocking agent panel: two resolutions (one repeated), then the quorum publishes
    rec.at(6_000)
    ids["panel"] = e = rec.dispatch("blocking-agent-quorum")
    rec.at(16_000).resolution(e, "safety-panel", "r1", "success", output={"decision": "approve"})
    rec.at(17_000).resolution(e, "safety-panel", "r1", "success", output={"decision": "approve"})  # a replay: no-op
    rec.at(26_000).resolution(e, "safety-panel", "r2", "success", output={"decision": "approve"})
    rec.close()
    return ids


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("replay") / "server.duckdb"
    ids = record_everything(path)
    return path, ids


def stored_state(con, execution_id: str) -> dict:
    return json.loads(
        con.execute("SELECT state FROM executions WHERE execution_id = ?", [execution_id]).fetchall()[0][0]
    )


def test_the_recording_covers_every_command_kind(recorded):
    path, _ = recorded
    con = open_db(path)
    kinds = {k for (k,) in con.execute("SELECT DISTINCT kind FROM commands").fetchall()}
    con.close()
    assert kinds == {
        "Dispatch",
        "SuppressedDispatch",
        "RecordReviewerDecision",
        "ResolveStep",
        "CancelStep",
        "CancelExecution",
        "Tick",
        "RecordAgentResolution",
    }


def test_replay_against_the_same_version_reproduces_the_log_exactly(recorded):
    path, ids = recorded
    con = open_db(path)
    for name, execution_id in ids.items():
        state, events = replay_execution(con, execution_id)
        recorded_log = recorded_events(con, execution_id)
        assert events == recorded_log, name  # type, seq, step id, timestamp, data, event id, correlation id
        stored = con.execute(
            "SELECT seq, data FROM events WHERE execution_id = ? ORDER BY seq", [execution_id]
        ).fetchall()
        assert [(e.seq, dumps(e.data)) for e in events] == stored, name  # byte for byte
        assert json.loads(dumps(state.to_dict())) == stored_state(con, execution_id), name
    # spot checks that the scenarios did what they say
    catch_up = con.execute(
        "SELECT kind, applied_at FROM commands WHERE execution_id = ? ORDER BY version", [ids["catch-up"]]
    ).fetchall()
    assert [k for k, _ in catch_up] == ["Dispatch", "Tick", "RecordReviewerDecision"]
    assert catch_up[1][1] == catch_up[2][1]
    statuses = dict(con.execute("SELECT execution_id, status FROM executions").fetchall())
    assert statuses[ids["two-rounds"]] == "completed" and statuses[ids["cancelled"]] == "cancelled"
    con.close()


def test_replay_all_and_the_mirror_replay_the_same(recorded, tmp_path):
    path, ids = recorded
    con = open_db(path)
    everything = {r.execution_id: r for r in replay_all(con)}
    assert set(everything) == set(ids.values())
    assert all(not r.notes for r in everything.values())
    con.close()
    # a running server's mirror holds commands and definition versions too
    from toolkit.store import Store

    store = Store(path)
    mirror = Mirror(store, tmp_path / "events")
    mirror.sync()
    mirror.close()
    store.close()
    mirrored = open_mirror(tmp_path / "events")
    for execution_id, result in everything.items():
        assert replay(mirrored, execution_id).events == result.events
    mirrored.close()


def test_external_agent_runner_completions_replay_too(tmp_path):
    class ExternalRunner:
        def run(self, request):
            return None  # some outside system answers later

    rec = ServerRecorder(tmp_path / "ext.duckdb", runner=ExternalRunner())
    rec.define(examples.load("parallel-review"))
    execution = rec.dispatch("parallel-review")
    rec.at(5_000).agent_completed(execution, "draft", output={"decision": "approve", "text": "v1"})
    rec.at(9_000).decide(execution, "legal-review", "alice@legal", "approve")
    rec.at(12_000).decide(execution, "brand-review", "bob@brand", "approve")
    rec.at(13_000).agent_completed(execution, "publish", error={"code": "cms-down", "message": "CMS unavailable"})
    rec.close()
    con = open_db(tmp_path / "ext.duckdb")
    kinds = [k for (k,) in con.execute("SELECT kind FROM commands ORDER BY version").fetchall()]
    assert kinds.count("AgentCompleted") == 2
    state, events = replay_execution(con, execution)
    assert events == recorded_events(con, execution)
    assert state.status == "failed" and state.failure_reason == "step-failed:publish"
    con.close()


def test_a_simulation_database_cannot_be_replayed(tmp_path):
    result = simulate(LOOP, runs=1, seed=1)
    with pytest.raises(ReplayError, match="no commands table"):
        replay(attach(result.con), "sim-1-0")
    result.con.close()


# ---------------------------------------------------------------------------- against another version


def one_attempt() -> dict:
    body = examples.load("parallel-review")
    body["edges"][-1]["loop"]["maxIterations"] = 1
    return body


def test_diff_against_max_iterations_1_fails_the_two_round_execution(recorded):
    path, ids = recorded
    con = open_db(path)
    result = diff(con, "parallel-review", one_attempt())
    con.close()
    entries = {e["executionId"]: e for e in result["executions"]}
    two = entries[ids["two-rounds"]]
    assert two["before"] == {
        "status": "completed",
        "failureReason": None,
        "path": ["draft", "legal-review", "brand-review", "draft", "legal-review", "brand-review", "publish"],
        "iterations": 2,
        "cycleTimeMs": 260_000,
    }
    assert two["after"] == {
        "status": "failed",
        "failureReason": LOOP_EXHAUSTED,
        "path": ["draft", "legal-review", "brand-review"],
        "iterations": 1,
        "cycleTimeMs": 120_000,
    }
    assert two["changed"] == ["status", "failureReason", "path", "iterations", "cycleTimeMs"]
    # round 2's decisions address steps the new version never created (the repeated dispatch
    # is still answered from the ended execution, as a server would)
    assert len(two["notes"]) == 2
    assert "no step for node 'legal-review' occurrence 2" in two["notes"][0]
    assert "no step for node 'brand-review' occurrence 2" in two["notes"][1]
    for name in ("one-round", "overrides", "cancelled"):
        assert entries[ids[name]]["changed"] == [], name
    summary = result["summary"]
    assert summary["executions"] == 4 and summary["changed"] == 1
    assert summary["statusTransitions"] == {
        "cancelled -> cancelled": 1,
        "completed -> completed": 2,
        "completed -> failed": 1,
    }
    assert summary["byField"]["status"] == 1 and summary["skippedCommands"] == 2


def test_replay_against_the_same_body_changes_nothing(recorded):
    path, _ = recorded
    con = open_db(path)
    result = diff(con, "parallel-review", examples.load("parallel-review"))
    con.close()
    assert result["summary"]["changed"] == 0
    assert result["summary"]["skippedCommands"] == 0


def test_commands_for_a_removed_node_are_skipped_with_a_note(tmp_path):
    rec = ServerRecorder(tmp_path / "loop.duckdb")
    rec.define(LOOP)
    definition, actions = SCRIPTS["A1"]
    rec.play("loop-review", actions)
    rec.close()
    renamed = copy.deepcopy(LOOP)
    renamed["nodes"][1]["nodeId"] = "edit"
    for edge in renamed["edges"]:
        for end in ("from", "to"):
            if edge[end] == "review":
                edge[end] = "edit"
    con = open_db(tmp_path / "loop.duckdb")
    result = diff(con, "loop-review", renamed)
    con.close()
    (entry,) = result["executions"]
    assert entry["after"]["status"] == "running" and entry["after"]["path"] == ["draft", "edit"]
    assert len(entry["notes"]) == 3
    assert all("node 'review' is not in the definition" in n for n in entry["notes"])


def test_deadlines_of_the_new_version_fire_as_the_timer_would(tmp_path):
    """Against a version with a shorter SLA the step breaches at its new deadline, before the
    recorded decision, which is then refused."""
    rec = ServerRecorder(tmp_path / "sla.duckdb")
    rec.define(BRANCHES)
    execution = rec.dispatch("two-branches")
    rec.at(30_000).decide(execution, "check", "cat", "approve")
    rec.at(40_000).decide(execution, "audit", "dan", "approve")
    rec.close()
    faster = copy.deepcopy(BRANCHES)
    faster["nodes"][1]["slaMs"] = 20_000
    con = open_db(tmp_path / "sla.duckdb")
    (entry,) = diff(con, "two-branches", faster)["executions"]
    con.close()
    assert entry["before"]["path"] == ["intake", "check", "audit", "done", "done"]
    assert entry["after"]["path"] == ["intake", "check", "audit", "page", "done"]
    assert entry["after"]["cycleTimeMs"] == 40_000
    assert len(entry["notes"]) == 1 and "FAILED_PRECONDITION" in entry["notes"][0]


def test_collab_replay_prints_the_diff(recorded, tmp_path, capsys):
    path, ids = recorded
    against = tmp_path / "one-attempt.json"
    against.write_text(json.dumps(one_attempt()))
    code = main(["replay", "--db", str(path), "--definition", "parallel-review", "--against", str(against), "--json"])
    out, _ = capsys.readouterr()
    assert code == 0
    result = json.loads(out)
    assert result["summary"]["statusTransitions"]["completed -> failed"] == 1
    code = main(["replay", "--db", str(path), "--definition", "parallel-review", "--against", str(against)])
    out, _ = capsys.readouterr()
    assert code == 0
    assert "4 execution(s) of parallel-review replayed against parallel-review" in out
    assert "completed -> failed: 1" in out
    assert f"{ids['two-rounds']}:" in out and LOOP_EXHAUSTED in out
    # an invalid definition file is reported like `collab lint` would
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"definitionId": "x"}))
    assert main(["replay", "--db", str(path), "--definition", "parallel-review", "--against", str(bad)]) == 1
