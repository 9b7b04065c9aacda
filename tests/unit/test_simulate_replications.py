"""Replications and their confidence intervals; worker processes give the same database."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from toolkit import examples
from toolkit.simulate import jobs, simulate
from toolkit.simulate.intervals import METRICS, t975, t_interval

ROOT = Path(__file__).resolve().parents[2]
H = 3_600_000
ONE_REVIEW = {
    "definitionId": "one-review",
    "name": "One review",
    "nodes": [{"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "alice", "mandatory": True}]}}],
    "edges": [],
}
P_APPROVE = 0.7
APPROVE = {"reviewers": {"*": {"approve": P_APPROVE, "latencyMs": {"exponential": H}}}}


def test_t_quantiles_match_the_tables():
    # Student's t, 0.975: df 1, 9, 30 from the tables; 100 and 1000 from the expansion.
    for df, expected in ((1, 12.706), (9, 2.262), (30, 2.042), (100, 1.984), (1000, 1.962)):
        assert t975(df) == pytest.approx(expected, abs=5e-4)
    with pytest.raises(ValueError):
        t975(0)


def test_the_approve_share_interval_covers_the_true_chance_in_most_replication_sets():
    # One reviewer approving with p = 0.7: the 'completed' share's expected value is p. Twenty
    # seeds, each a set of 10 replications of 40 runs; a 95% interval should miss about once.
    covered = 0
    for seed in range(20):
        result = simulate(ONE_REVIEW, runs=40, seed=seed, policy=APPROVE, replications=10)
        interval = result.intervals["share.completed"]
        assert interval.low < interval.mean < interval.high
        covered += P_APPROVE in interval
        result.con.close()
    assert covered >= 17


def test_intervals_shrink_as_replications_grow():
    widths = []
    for replications in (5, 20, 80):
        result = simulate(ONE_REVIEW, runs=40, seed=3, policy=APPROVE, replications=replications)
        widths.append({m: iv.width for m, iv in result.intervals.items()})
        result.con.close()
    for metric in ("share.completed", "cycle_time_ms.p50", "cycle_time_ms.p90"):
        assert widths[0][metric] > widths[1][metric] > widths[2][metric], metric
    # the width falls like 1/sqrt(R): 16 times the replications, about a quarter of the width
    assert 0.12 < widths[2]["share.completed"] / widths[0]["share.completed"] < 0.45


def test_replications_are_independent_sets_of_runs_starting_at_the_same_time():
    result = simulate(ONE_REVIEW, runs=30, seed=1, policy=APPROVE, replications=4)
    assert result.summary.runs == 120 and result.runs == 30 and result.replications == 4
    rows = result.sql(
        "SELECT replication, count(*), min(e.started_at), max(e.started_at) FROM outcomes o "
        "JOIN executions e USING (execution_id) GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [r[:2] for r in rows] == [(0, 30), (1, 30), (2, 30), (3, 30)]
    assert len({r[2:] for r in rows}) == 1  # every replication's runs are dispatched at the same times
    # each replication's value is its own share, and the interval is the t interval of them
    shares = [
        s
        for (s,) in result.sql(
            "SELECT avg((status = 'completed')::INT) FROM outcomes GROUP BY replication ORDER BY replication"
        ).fetchall()
    ]
    assert result.intervals.values["share.completed"] == shares
    assert result.intervals["share.completed"] == t_interval(shares)
    # replication 0 is exactly the simulation without replications
    alone = simulate(ONE_REVIEW, runs=30, seed=1, policy=APPROVE)
    query = "SELECT run, status, cycle_time_ms FROM outcomes WHERE replication = 0 ORDER BY run"
    assert alone.sql(query).fetchall() == result.sql(query).fetchall()
    assert alone.intervals is None


def test_interval_renderings_list_every_metric():
    result = simulate(examples.load("parallel-review"), runs=50, seed=2, replications=3)
    assert set(result.intervals) == set(METRICS)
    table, markdown = result.intervals.table(), result.intervals.markdown()
    for label, _unit in METRICS.values():
        assert label in table and f"| {label} |" in markdown
    data = result.to_json()["intervals"]
    assert data["replications"] == 3
    completed = data["metrics"]["share.completed"]
    assert completed["low"] <= completed["mean"] <= completed["high"] and len(completed["values"]) == 3


def test_comparing_two_definitions_flags_the_metrics_whose_intervals_do_not_overlap():
    slow = simulate(ONE_REVIEW, runs=40, seed=6, policy=APPROVE, replications=8)
    fast = simulate(
        ONE_REVIEW,
        runs=40,
        seed=6,
        replications=8,
        policy={"reviewers": {"*": {"approve": P_APPROVE, "latencyMs": {"exponential": H / 4}}}},
    )
    compared = slow.intervals.compare(fast.intervals)
    assert set(compared) == set(slow.intervals)
    ours, theirs, differs = compared["cycle_time_ms.p50"]
    assert differs and ours.low > theirs.high  # a quarter of the latency: clearly faster
    assert not compared["share.completed"][2]  # same approve chance, same draws: no difference


def table_rows(path) -> dict[str, str]:
    """Every table of a results file, rows in stored order (no ORDER BY), as JSON text."""
    with duckdb.connect(str(path), read_only=True) as con:
        return {
            t: json.dumps(con.execute(f"SELECT * FROM {t}").fetchall())
            for t in ("executions", "steps", "events", "outcomes")
        }


@pytest.mark.parametrize(
    "policy, replications",
    [
        (
            {
                "reviewers": {"*": {"approve": 0.6, "latencyMs": {"exponential": H}}},
                "agents": {"*": {"fail": 0.05, "latencyMs": {"uniform": [0, 60_000]}}},
            },
            1,
        ),
        (
            {
                "reviewers": {"*": {"approve": 0.8, "latencyMs": {"empirical": [600_000, H, 5 * H]}}},
                "capacity": {"alice@legal": 5},
                "calendars": {"*": {"timeZone": "Europe/Paris"}},
            },
            3,
        ),
    ],
)
def test_workers_give_byte_identical_databases(tmp_path, policy, replications):
    definition = examples.load("parallel-review")
    one = simulate(
        definition,
        runs=200,
        seed=5,
        policy=policy,
        db=tmp_path / "one.duckdb",
        replications=replications,
        batch_runs=40,
    )
    three = simulate(
        definition,
        runs=200,
        seed=5,
        policy=policy,
        db=tmp_path / "three.duckdb",
        replications=replications,
        batch_runs=40,
        workers=3,
    )
    assert one.summary == three.summary
    assert one.intervals == three.intervals
    one.con.close()
    three.con.close()
    assert table_rows(tmp_path / "one.duckdb") == table_rows(tmp_path / "three.duckdb")


def test_spawned_workers_give_the_same_database(tmp_path, monkeypatch):
    """Where processes cannot be forked (macOS, Windows), workers are spawned: each imports the
    package afresh and gets the job by pickle. Forced here on Linux, the database is the same,
    row for row."""
    definition = examples.load("parallel-review")
    one = simulate(definition, runs=120, seed=8, policy=APPROVE, db=tmp_path / "one.duckdb", batch_runs=40)
    monkeypatch.setattr(jobs, "START_METHOD", "spawn")
    spawned = simulate(
        definition, runs=120, seed=8, policy=APPROVE, db=tmp_path / "spawned.duckdb", batch_runs=40, workers=2
    )
    assert one.summary == spawned.summary
    one.con.close()
    spawned.con.close()
    assert table_rows(tmp_path / "one.duckdb") == table_rows(tmp_path / "spawned.duckdb")


def test_cli_replications_and_workers(tmp_path):
    policy = tmp_path / "policy.json"
    policy.write_text(json.dumps(APPROVE))
    definition = "toolkit/examples/parallel-review.json"  # both reviews approve with 0.7, 3 rounds at most
    base = [
        sys.executable,
        "-m",
        "toolkit.cli",
        "simulate",
        definition,
        "--runs",
        "100",
        "--seed",
        "4",
        "--policy",
        str(policy),
        "--replications",
        "6",
    ]
    out = {}
    for workers in ("1", "2"):
        done = subprocess.run(
            base + ["--workers", workers, "--json", "--db", str(tmp_path / f"w{workers}.duckdb")],
            capture_output=True,
            text=True,
            check=True,
            cwd=ROOT,
        )
        out[workers] = json.loads(done.stdout)
    assert out["1"] == out["2"]
    completed = out["1"]["intervals"]["metrics"]["share.completed"]
    assert completed["low"] < 1 - (1 - P_APPROVE**2) ** 3 < completed["high"]
    assert table_rows(tmp_path / "w1.duckdb") == table_rows(tmp_path / "w2.duckdb")

    text = subprocess.run(base, capture_output=True, text=True, check=True, cwd=ROOT).stdout
    assert "95% confidence intervals over 6 replications" in text and "cycle time p90" in text
    bad = subprocess.run(base + ["--workers", "0"], capture_output=True, text=True, cwd=ROOT)
    assert bad.returncode == 2 and "--workers: 0 is below 1" in bad.stderr
