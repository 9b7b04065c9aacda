"""kill -9 under a mixed load, three times: nothing acknowledged is lost, nothing is applied
twice, executions carry on (issue 8, deliverable 3) — with a hostile tenant at its limits
in a workspace of its own, which must not raise the others' p99 more than twice (issue 13). `make soak` runs the
same harness for ten minutes. FAULTS_SEED picks another seed (the report names the one used)."""

from __future__ import annotations

import os

import duckdb
import pytest

from faults.harness import Config, Harness, Run
from faults.ledger import ABSENT

SEED = int(os.environ.get("FAULTS_SEED", "8"))
# The hostile worker's inputs that today's code cannot take yet (faults.hostile): on at merge.
POISON_URLS = os.environ.get("FAULTS_POISON_URLS", "1") == "1"
MAXIMAL_PREDICATES = os.environ.get("FAULTS_MAXIMAL_PREDICATES", "1") == "1"
FAMILIES = (
    "workflow/",
    "users/",
    "auth/",
    "organizations/",
    "folders/",
    "documents/",
    "commentannotations/",
    "activities/",
    "agents/",
)


def explain(report, tmp_path) -> str:
    return f"seed {SEED}; server logs in {tmp_path}\n{report.summary()}\n{report.failures()}"


@pytest.mark.slow
def test_acknowledged_writes_survive_three_kills(tmp_path):
    report = Harness(
        Config(
            root=tmp_path,
            seconds=150,
            max_kills=3,
            load_s=(2.0, 5.0),
            seed=SEED,
            hostile=True,
            poison_urls=POISON_URLS,
            maximal_predicates=MAXIMAL_PREDICATES,
            progress=print,
        )
    ).run()
    why = explain(report, tmp_path)
    assert report.kills == 3, why
    assert not report.lost and not report.duplicated and not report.problems, why
    for family in FAMILIES:  # the load reached every endpoint family
        assert any(k.startswith(f"acked {family}") and n for k, n in report.counts.items()), f"{family}\n{why}"
    assert report.counts["SLA timers fired (due while the server was down)"] == 3, why
    assert report.counts["executions finished after a restart"] >= 3, why
    assert report.counts["webhook events delivered"] > 0, why  # and none lost: report.lost is empty
    # The hostile tenant met its limits, and the others' p99 held (faults.hostile.judge: a problem if not).
    assert report.counts["hostile requests refused 429"] > 0, why


def damage(found: dict):
    """While the server is down: drop an acknowledged user's membership and an acknowledged
    activity, and write an execution's first event a second time."""

    def while_down(run: Run) -> None:
        ledger = run.ledger
        user = next(k for o in run.owners for k in ledger.keys("orgUser", o, present=True) if not ledger.in_doubt(k))
        activity = next(
            k for o in run.owners for k in ledger.keys("activity", o, present=True) if not ledger.in_doubt(k)
        )
        execution = next(r for r in ledger.executions() if r.dispatch_known and not r.unknown and not r.checked)
        with duckdb.connect(str(run.db)) as con:
            con.execute("DELETE FROM memberships WHERE user_id = ? AND resource_type = 'organization'", [user[2]])
            con.execute("DELETE FROM activities WHERE activity_id = ?", [activity[2]])
            con.execute(
                "INSERT INTO events SELECT * FROM events WHERE execution_id = ? AND seq = 1", [execution.execution_id]
            )
        found.update(user=user[2], activity=activity[2], execution=execution.execution_id)
        assert ledger.value(user) is not ABSENT

    return while_down


@pytest.mark.slow
def test_the_checks_notice_a_damaged_database(tmp_path):
    """The harness can fail: rows removed behind the server's back are reported lost, a row
    written twice duplicated."""
    found: dict = {}
    report = Harness(
        Config(
            root=tmp_path,
            seconds=90,
            max_kills=1,
            load_s=(3.0, 3.0),
            seed=SEED,
            while_down=damage(found),
            progress=print,
        )
    ).run()
    why = explain(report, tmp_path)
    assert report.kills == 1, why
    assert any(found["user"] in m for m in report.lost), why
    assert any(found["activity"] in m for m in report.lost), why
    assert any(found["execution"] in m for m in report.duplicated), why
    # and nothing else: the rest of the load came through whole
    assert all(found["user"] in m or found["activity"] in m for m in report.lost), why
    assert all(found["execution"] in m for m in report.duplicated + report.problems), why
