"""The simulator: determinism, what lands in DuckDB, the summary, policies and scripts."""

from __future__ import annotations

import json

import duckdb
import pytest

from toolkit import examples
from toolkit.errors import ApiError
from toolkit.model import validate
from toolkit.simulate import Policy, Script, run_script, simulate

REVIEW = examples.load("parallel-review")
POLICY = {"reviewers": {"alice@legal": {"approve": 0.8}, "bob@brand": {"approve": 0.85}}}


def event_log(result) -> str:
    rows = result.sql(
        "SELECT run, seq, event_id, type, step_id, timestamp, data FROM events ORDER BY run, seq"
    ).fetchall()
    return json.dumps(rows)


def test_same_seed_gives_byte_identical_event_logs():
    a = simulate(REVIEW, runs=300, seed=11, policy=POLICY)
    b = simulate(REVIEW, runs=300, seed=11, policy=POLICY)
    assert event_log(a) == event_log(b)
    assert a.summary == b.summary


def test_a_different_seed_gives_a_different_log():
    a = simulate(REVIEW, runs=100, seed=1, policy=POLICY)
    b = simulate(REVIEW, runs=100, seed=2, policy=POLICY)
    assert event_log(a) != event_log(b)


def test_run_k_does_not_depend_on_the_runs_before_it():
    few = simulate(REVIEW, runs=5, seed=3, policy=POLICY)
    many = simulate(REVIEW, runs=50, seed=3, policy=POLICY)
    assert few.events(4) == many.events(4)


def test_batches_do_not_change_the_results():
    small = simulate(REVIEW, runs=250, seed=5, policy=POLICY, batch_runs=7)
    large = simulate(REVIEW, runs=250, seed=5, policy=POLICY)
    assert event_log(small) == event_log(large)


def test_outcome_distribution_follows_the_policy():
    result = simulate(REVIEW, runs=4000, seed=9, policy=POLICY)
    s = result.summary
    round_ok = 0.8 * 0.85
    assert s.runs == 4000
    assert s.outcomes["completed"] / 4000 == pytest.approx(1 - (1 - round_ok) ** 3, abs=0.02)
    assert s.iteration_histogram[1] / 4000 == pytest.approx(round_ok, abs=0.03)
    assert s.failure_reasons == {"loop-exhausted:loop_review-board__to__draft": s.outcomes["failed"]}
    assert set(s.iteration_histogram) == {1, 2, 3}


def test_tables_hold_every_run(tmp_path):
    db = tmp_path / "runs.duckdb"
    result = simulate(REVIEW, runs=40, seed=1, policy=POLICY, db=db)
    counts = {
        t: result.con.execute(f"SELECT count(DISTINCT run) FROM {t}").fetchone()[0]
        for t in ("executions", "steps", "events", "outcomes")
    }
    assert counts == {"executions": 40, "steps": 40, "events": 40, "outcomes": 40}
    result.con.close()
    with duckdb.connect(str(db), read_only=True) as con:
        seqs = con.execute("SELECT run, list(seq ORDER BY seq) FROM events GROUP BY run").fetchall()
        assert all(s == sorted(set(s)) and s[0] == 1 for _, s in seqs)
        types = {t for (t,) in con.execute("SELECT DISTINCT type FROM events WHERE external").fetchall()}
        assert types <= {
            "execution.dispatched",
            "execution.completed",
            "execution.failed",
            "step.completed",
            "step.awaiting-approval",
            "group.quorum-met",
            "loop.iteration-started",
            "loop.exhausted",
            "step.cancelled",
        }


def test_summary_counts_nodes_and_edges_for_the_heat_map():
    result = simulate(REVIEW, runs=200, seed=4, policy=POLICY)
    s = result.summary
    steps_per_node = dict(result.sql("SELECT node_id, count(*) FROM steps GROUP BY 1").fetchall())
    assert s.node_counts == steps_per_node
    assert s.node_counts["legal-review"] == s.node_counts["brand-review"] == s.node_counts["draft"]
    assert s.edge_counts[("draft", "legal-review")] == s.node_counts["legal-review"]
    assert s.edge_counts[("review-board", "publish")] == s.outcomes["completed"]
    assert s.edge_counts[("review-board", "draft")] == s.node_counts["draft"] - 200


def test_sla_breaches_are_counted():
    policy = {"reviewers": {"*": {"latencyMs": {"fixed": 3 * 24 * 3_600_000}}}}
    result = simulate(examples.load("sla-escalation"), runs=20, seed=1, policy=policy)
    assert result.summary.sla_breach_rate == 1.0


def test_an_unanswered_step_stops_at_the_horizon():
    policy = {"reviewers": {"*": {"respond": 0.0}}, "horizonMs": 3_600_000}
    result = simulate(REVIEW, runs=5, seed=1, policy=policy)
    assert result.summary.outcomes == {"running": 5}


def test_agent_policy_outputs_and_failures():
    policy = {"agents": {"copywriter": {"fail": 1.0}}}
    result = simulate(REVIEW, runs=10, seed=1, policy=policy)
    assert result.summary.failure_reasons == {"step-failed:draft": 10}


def test_policy_errors_name_the_field():
    with pytest.raises(ApiError) as err:
        validate(Policy, {"reviewers": {"*": {"approve": 1.5}}}, prefix="policy")
    assert "policy.reviewers.*.approve" in err.value.message


def test_script_errors_name_the_field():
    with pytest.raises(ApiError) as err:
        validate(Script, {"actions": [{"atMs": 5, "node": "x"}]}, prefix="script")
    assert "policy" not in err.value.message and "script.actions[0]" in err.value.message


def test_a_scripted_run_is_exact():
    script = {
        "actions": [
            {"atMs": 60_000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"},
            {"atMs": 90_000, "node": "brand-review", "reviewer": "bob@brand", "decision": "reject", "reason": "tone"},
            {
                "atMs": 120_000,
                "node": "legal-review",
                "occurrence": 2,
                "reviewer": "alice@legal",
                "decision": "approve",
            },
            {"atMs": 150_000, "node": "brand-review", "occurrence": 2, "reviewer": "bob@brand", "decision": "approve"},
        ],
        "expect": {
            "status": "completed",
            "path": ["draft", "legal-review", "brand-review", "draft", "legal-review", "brand-review", "publish"],
        },
    }
    run = run_script(REVIEW, script)
    assert run.mismatches() == [] and run.errors == []
    assert run.outcome["cycleTimeMs"] == 150_000
    assert run.outcome["iterations"] == 2
    second_draft = run.steps("draft")[1]
    attempts = second_draft.input["previousAttempts"]
    assert [a["rejectedBy"] for a in attempts] == ["bob@brand"]
    assert attempts[0]["rejectionReason"] == "tone"


def test_script_reports_what_the_engine_refused_and_unmet_expectations():
    script = {
        "actions": [
            {"atMs": 10, "node": "legal-review", "reviewer": "mallory", "decision": "approve"},
            {"atMs": 20, "node": "publish", "resolve": "force-complete", "actor": "ops"},
        ],
        "expect": {"status": "completed"},
    }
    run = run_script(REVIEW, script)
    assert run.outcome["status"] == "running"
    assert run.errors == [(1, "no step for node 'publish' occurrence 1 at 20 ms")]
    assert run.mismatches() == ["status: expected 'completed', got 'running'"]


def test_simulations_sharing_a_database_key_each_definition_once(tmp_path):
    """Several simulations may write into one database: executions and steps keep one
    definition_key per definition id (the second run of a definition reuses its key), and
    directly_follows gives the same graph from those keys as from keys it numbers itself."""
    from toolkit.analytics import attach

    db = tmp_path / "shared.duckdb"
    for definition, seed in ((REVIEW, 1), (examples.load("sla-escalation"), 2), (REVIEW, 3)):
        simulate(definition, runs=30, seed=seed, policy=POLICY, db=db).con.close()
    with duckdb.connect(str(db)) as con:
        keys = con.execute(
            "SELECT definition_id, list(DISTINCT definition_key), count(*) FROM executions GROUP BY ALL ORDER BY 1"
        ).fetchall()
        assert [(d, k) for d, k, _ in keys] == [("parallel-review", [0]), ("sla-escalation", [1])]
        assert [n for *_, n in keys] == [60, 30]
        assert con.execute(
            "SELECT count(*) FROM steps s JOIN executions x USING (execution_id) "
            "WHERE s.definition_key IS DISTINCT FROM x.definition_key"
        ).fetchone() == (0,)
        graph = "SELECT definition_id, from_node_id, to_node_id, transitions FROM directly_follows ORDER BY ALL"
        stored = attach(con).execute(graph).fetchall()
        con.execute("ALTER TABLE executions DROP COLUMN definition_key; ALTER TABLE steps DROP COLUMN definition_key")
        numbered = attach(con).execute(graph).fetchall()
    assert stored == numbered
    assert {d for d, *_ in stored} == {"parallel-review", "sla-escalation"}


@pytest.mark.parametrize("where", ["memory", "file"])
def test_a_callers_connection_keeps_its_settings(tmp_path, where):
    """simulate() writes with one DuckDB thread (and, in memory, without automatic checkpoints),
    then gives the caller's connection back as it was; a refused simulation leaves it alone."""
    con = duckdb.connect(":memory:" if where == "memory" else str(tmp_path / "runs.duckdb"))
    con.execute("SET threads = 3; SET checkpoint_threshold = '20MB'")
    settings = "SELECT current_setting('threads'), current_setting('checkpoint_threshold')"
    before = con.execute(settings).fetchall()
    simulate(REVIEW, runs=40, seed=1, policy=POLICY, db=con)
    assert con.execute(settings).fetchall() == before
    with pytest.raises(ValueError):
        simulate(REVIEW, runs=40, seed=1, policy=POLICY, db=con)  # the same seed again: refused
    assert con.execute(settings).fetchall() == before
    assert con.execute("SELECT count(*) FROM executions").fetchone() == (40,)


class Interrupted(Exception):
    pass


def interrupt_after(runs: int):
    """A progress callback that stops the simulation once ``runs`` runs were written."""

    def progress(done, total):
        if done >= runs:
            raise Interrupted(f"stopped at {done} of {total}")

    return progress


@pytest.mark.parametrize("workers", [1, 2])
def test_an_interrupted_simulation_leaves_the_database_as_it_was(tmp_path, workers):
    """Everything a simulation writes is one transaction: stopped part-way (here by its own
    progress callback, after 11,000 of 12,000 runs: past the 10,000 runs the writer inserts at a
    time), it leaves no runs behind, so the same seed can simply be run again; the database's
    earlier results stay."""
    db = tmp_path / "runs.duckdb"
    simulate(REVIEW, runs=50, seed=1, policy=POLICY, db=db).con.close()
    with pytest.raises(Interrupted):
        simulate(REVIEW, runs=12_000, seed=2, policy=POLICY, db=db, progress=interrupt_after(11_000), workers=workers)
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM executions").fetchone() == (50,)
        assert con.execute("SELECT count(*) FROM events WHERE NOT starts_with(execution_id, 'sim-1-')").fetchone() == (
            0,
        )
    again = simulate(REVIEW, runs=100, seed=2, policy=POLICY, db=db)
    assert again.sql("SELECT count(*) FROM executions WHERE starts_with(execution_id, 'sim-2-')").fetchall() == [(100,)]


def test_a_simulation_inside_the_callers_transaction_is_theirs_to_keep_or_undo():
    """Into a connection with an open transaction the runs become part of it: rolled back,
    they are gone, and so are the tables the simulation created; a second one, committed,
    stays."""
    con = duckdb.connect(":memory:")
    con.execute("BEGIN")
    simulate(REVIEW, runs=30, seed=1, policy=POLICY, db=con)
    assert con.execute("SELECT count(*) FROM executions").fetchone() == (30,)
    con.execute("ROLLBACK")
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'executions'").fetchone() == (0,)
    con.execute("BEGIN")
    simulate(REVIEW, runs=30, seed=1, policy=POLICY, db=con)
    con.execute("COMMIT")
    assert con.execute("SELECT count(*) FROM executions").fetchone() == (30,)


def test_a_second_simulation_with_the_same_seed_in_one_database_is_refused(tmp_path):
    """Execution ids are sim-<seed>-<run> and the views join on them: the same seed twice would
    mix two simulations' executions. It is refused before anything is written; seed 1 after
    seed 10 (ids sim-1-… beside sim-10-…) is not a clash."""
    db = tmp_path / "runs.duckdb"
    simulate(REVIEW, runs=5, seed=10, policy=POLICY, db=db).con.close()
    with pytest.raises(ValueError, match="already holds the runs of seed 10"):
        simulate(REVIEW, runs=5, seed=10, policy=POLICY, db=db)
    simulate(REVIEW, runs=5, seed=1, policy=POLICY, db=db).con.close()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*), count(DISTINCT execution_id) FROM executions").fetchone() == (10, 10)
