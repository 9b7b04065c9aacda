"""Calibration of a real server store's log: scripted reviewers decide with a known chance and
latency on a virtual clock; the fit recovers them, and what-if reads the recorded version from
the store's ``definition_versions``."""

from __future__ import annotations

import math
import random

import pytest
from test_analytics_support import ServerRecorder

from toolkit.simulate import calibrate, whatif

REVIEW = {
    "definitionId": "one-review",
    "name": "One review",
    "nodes": [
        {"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "rita", "mandatory": True}]}},
        {"nodeId": "ship", "type": "agent", "config": {"agentId": "shipper"}},
        {"nodeId": "fix", "type": "agent", "config": {"agentId": "fixer"}},
    ],
    "edges": [{"from": "review", "to": "ship", "on": "approve"}, {"from": "review", "to": "fix", "on": "reject"}],
}
RUNS, APPROVE, MEAN_MS, SPACING_MS = 150, 0.7, 60_000, 600_000


@pytest.fixture(scope="module")
def server_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("calibrate-server") / "server.duckdb"
    rec = ServerRecorder(path)
    rec.define(REVIEW)
    rng = random.Random(5)
    for i in range(RUNS):
        start = i * SPACING_MS
        execution = rec.at(start).dispatch("one-review")
        latency = min(int(rng.expovariate(1 / MEAN_MS)), SPACING_MS - 1)
        rec.at(start + latency).decide(execution, "review", "rita", "approve" if rng.random() < APPROVE else "reject")
    rec.close()
    return path


def test_a_server_log_is_calibrated_to_its_scripted_behaviour(server_db):
    fitted = calibrate(server_db, "one-review")
    rita = fitted.report["reviewers"]["rita"]
    assert rita["approve"]["n"] == RUNS
    assert rita["approve"]["low"] <= APPROVE <= rita["approve"]["high"]
    assert rita["latency"]["medianLow"] <= MEAN_MS * math.log(2) <= rita["latency"]["medianHigh"]
    assert fitted.policy["arrivalIntervalMs"] == SPACING_MS
    assert "calendars" not in fitted.policy  # 25 hours of log: too short to read working hours from


def test_whatif_reads_the_recorded_version_from_the_server_store(server_db):
    always_ship = {
        **REVIEW,
        "nodes": REVIEW["nodes"][:2],
        "edges": [{"from": "review", "to": "ship", "on": "approve"}, {"from": "review", "to": "ship", "on": "reject"}],
    }
    result = whatif(server_db, "one-review", always_ship, runs=100, replications=3)
    assert result.flagged == []  # both versions complete every run; only the path differs
    fixes = "SELECT count(*) FROM steps WHERE node_id = 'fix'"
    assert result.candidate.sql(fixes).fetchall()[0][0] == 0 and result.baseline.sql(fixes).fetchall()[0][0] > 0


@pytest.fixture(scope="module")
def cut_short_db(tmp_path_factory):
    """Rita answers every review after an exponential wait averaging an hour, but the log
    ends a day in: the reviews of the last hours are still waiting."""
    path = tmp_path_factory.mktemp("calibrate-cut-short") / "server.duckdb"
    rec = ServerRecorder(path)
    rec.define(REVIEW)
    rng = random.Random(10)
    end, actions = 24 * 3_600_000, []
    for i in range(end // SPACING_MS):
        start = i * SPACING_MS
        actions.append((start, i, None))
        actions.append((start + int(rng.expovariate(1 / 3_600_000)), i, "approve"))
    executions: dict[int, str] = {}
    for at, i, decision in sorted(a for a in actions if a[0] < end):
        if decision is None:
            executions[i] = rec.at(at).dispatch("one-review")
        else:
            rec.at(at).decide(executions[i], "review", "rita", decision)
    rec.close()
    return path


def test_reviews_still_waiting_when_the_log_ends_are_censored_not_unanswered(cut_short_db):
    rita = calibrate(cut_short_db, "one-review").report["reviewers"]["rita"]
    assert rita["respond"]["censored"] > 0
    assert rita["respond"]["low"] <= 1.0 <= rita["respond"]["high"]
    assert rita["latency"]["medianLow"] <= 3_600_000 * math.log(2) <= rita["latency"]["medianHigh"]


PANEL = {
    "definitionId": "panel",
    "name": "Three classifier runs, two successes resolve",
    "nodes": [
        {
            "nodeId": "panel",
            "type": "agent",
            "config": {
                "agentId": "classifier",
                "blocking": True,
                "expectedResolutions": 3,
                "resolutionPolicy": {"kind": "minResolved", "minCount": 2},
            },
        },
        {"nodeId": "ship", "type": "agent", "config": {"agentId": "shipper"}},
    ],
    "edges": [{"from": "panel", "to": "ship", "on": "approve"}],
}


@pytest.fixture(scope="module")
def panel_db(tmp_path_factory):
    """Three resolutions per step, each after an exponential wait averaging a minute; the step
    resolves at the second, so the third is never recorded."""
    path = tmp_path_factory.mktemp("calibrate-panel") / "server.duckdb"
    rec = ServerRecorder(path)
    rec.define(PANEL)
    rng = random.Random(8)
    for i in range(RUNS):
        start = i * SPACING_MS
        execution = rec.at(start).dispatch("panel")
        waits = sorted(min(int(rng.expovariate(1 / MEAN_MS)), SPACING_MS - 1) for _ in range(3))
        for k, wait in enumerate(waits[:2]):
            rec.at(start + wait).resolution(execution, "panel", f"run-{k}", "success", output={"decision": "approve"})
    rec.close()
    return path


def test_a_server_logs_blocking_agent_latency_counts_the_resolutions_it_never_waited_for(panel_db):
    latency = calibrate(panel_db, "panel").report["resolutions"]["panel"]["latency"]
    assert (latency["expectedResolutions"], latency["expectedFrom"]) == (3, "the latest recorded version")
    assert latency["n"] == 2 * RUNS and latency["censored"] == RUNS
    assert latency["medianLow"] <= MEAN_MS * math.log(2) <= latency["medianHigh"]
