"""Calibration ground truth: logs simulated under a known policy are fitted back.

The true parameters must fall inside the reported 95% intervals, and the cycle-time
distribution the fitted policy predicts must match a held-out log of the true one.
"""

from __future__ import annotations

import bisect
import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from toolkit import examples
from toolkit.simulate import Policy, calibrate, simulate
from toolkit.simulate.fitting import wilson

DAY = 86_400_000
# Reviewers work 9-17 UTC on weekdays; one decision takes log-normal / exponential working time.
TRUE = {
    "reviewers": {
        "alice@legal": {"approve": 0.8, "latencyMs": {"lognormal": {"medianMs": 3_600_000, "sigma": 0.6}}},
        "bob@brand": {"approve": 0.6, "latencyMs": {"exponential": 1_800_000}},
    },
    "agents": {"draft": {"fail": 0.05, "latencyMs": {"lognormal": {"medianMs": 60_000, "sigma": 0.3}}}},
    "calendars": {"*": {"hours": [[9, 17]]}},
    "arrivalIntervalMs": 600_000,
}


@pytest.fixture(scope="module")
def recorded():
    return simulate(examples.load("parallel-review"), runs=2000, seed=3, policy=TRUE)


@pytest.fixture(scope="module")
def fitted(recorded):
    return calibrate(recorded, "parallel-review")


def _inside(figure: dict, truth: float) -> bool:
    return figure["low"] <= truth <= figure["high"]


def test_approve_chances_fall_inside_their_intervals(fitted):
    reviewers = fitted.report["reviewers"]
    assert _inside(reviewers["alice@legal"]["approve"], 0.8)
    assert _inside(reviewers["bob@brand"]["approve"], 0.6)
    assert reviewers["alice@legal"]["approve"]["n"] > 1000  # the count behind the figure is reported


def test_latency_medians_fall_inside_their_intervals_in_working_time(fitted):
    alice = fitted.report["reviewers"]["alice@legal"]["latency"]
    bob = fitted.report["reviewers"]["bob@brand"]["latency"]
    assert alice["medianLow"] <= 3_600_000 <= alice["medianHigh"]
    assert bob["medianLow"] <= 1_800_000 * math.log(2) <= bob["medianHigh"]
    assert alice["chosen"] == "lognormal"
    assert fitted.policy["reviewers"]["alice@legal"]["latencyMs"]["lognormal"]["sigma"] == pytest.approx(0.6, abs=0.05)


def test_working_hours_are_recovered(fitted):
    for who in ("alice@legal", "bob@brand"):
        assert fitted.policy["calendars"][who] == {
            "timeZone": "UTC",
            "weekdays": ["mon", "tue", "wed", "thu", "fri"],
            "hours": [[9, 17]],
        }
        row = fitted.report["calendars"][who]
        assert 9 <= row["earliestHour"] and row["latestHour"] <= 17
        assert row["actionsPerWeekday"]["sat"] == row["actionsPerWeekday"]["sun"] == 0


def test_agent_failure_rate_and_latency_fall_inside_their_intervals(fitted):
    draft = fitted.report["agents"]["draft"]
    assert _inside(draft["fail"], 0.05)
    assert draft["latency"]["medianLow"] <= 60_000 <= draft["latency"]["medianHigh"]
    # the publisher never fails and answers at once: a fixed zero latency, one output
    assert fitted.policy["agents"]["publish"]["latencyMs"] == {"fixed": 0}
    assert len(fitted.policy["agents"]["publish"]["outputs"]) == 1


def test_arrivals_and_start_are_recovered(fitted):
    assert fitted.policy["arrivalIntervalMs"] == 600_000
    assert fitted.policy["startAt"] == "2026-01-01T00:00:00Z"


def test_the_fitted_policy_is_a_valid_policy_file(fitted, tmp_path):
    path = tmp_path / "policy.json"
    path.write_text(json.dumps(fitted.policy))
    policy = Policy.model_validate(json.loads(path.read_text()))
    assert simulate(examples.load("parallel-review"), runs=20, seed=1, policy=policy).summary.runs == 20


def _ks(a: list[float], b: list[float]) -> float:
    a, b = sorted(a), sorted(b)
    return max(abs(bisect.bisect_right(a, x) / len(a) - bisect.bisect_right(b, x) / len(b)) for x in a + b)


@pytest.mark.slow
def test_cycle_times_from_the_fitted_policy_match_a_held_out_log():
    definition = examples.load("parallel-review")
    log = simulate(definition, runs=5000, seed=11, policy=TRUE)
    policy = calibrate(log, "parallel-review").policy
    held_out = simulate(definition, runs=5000, seed=12, policy=TRUE)
    predicted = simulate(definition, runs=5000, seed=13, policy=policy)
    query = "SELECT cycle_time_ms FROM outcomes WHERE cycle_time_ms IS NOT NULL"
    distance = _ks([r[0] for r in held_out.sql(query).fetchall()], [r[0] for r in predicted.sql(query).fetchall()])
    assert distance < 0.05


@pytest.mark.parametrize(
    ("latency", "median"),
    [
        ({"exponential": 120_000}, 120_000 * math.log(2)),
        ({"lognormal": {"medianMs": 200_000, "sigma": 0.8}}, 200_000),
    ],
)
def test_blocking_agent_resolutions_are_fitted_with_the_ones_a_step_did_not_wait_for(latency, median):
    """Two successes of three expected resolve the panel, so the slowest resolution is often
    never recorded: the recorded ones alone run short (their median is about 3/4 of the
    truth). Counted as censored waits, the true median falls inside the reported interval."""
    truth = {"resolutions": {"safety-panel": {"success": 0.7, "latencyMs": latency}}}
    definition = examples.load("blocking-agent-quorum")
    log = simulate(definition, runs=400, seed=2, policy=truth)
    ((recorded,),) = log.sql(
        "SELECT median(e.timestamp - s.started_at) FROM events e JOIN steps s USING (execution_id, step_id) "
        "WHERE e.type = 'step.response-recorded'"
    ).fetchall()
    row = calibrate(log, "blocking-agent-quorum").report["resolutions"]["safety-panel"]
    assert _inside(row["success"], 0.7)
    assert row["success"]["n"] > 500 and row["latency"]["n"] == row["success"]["n"]
    assert recorded < 0.85 * median  # what the log shows is biased ...
    assert row["latency"]["medianLow"] <= median <= row["latency"]["medianHigh"]  # ... the fit is not
    assert row["latency"]["censored"] > 100
    # A simulation's log has no bodies: how many a step expects is read off the steps; given
    # the definition, from it.
    assert (row["latency"]["expectedResolutions"], row["latency"]["expectedFrom"]) == (
        3,
        "the most any step recorded (a lower bound)",
    )
    given_it = calibrate(log, "blocking-agent-quorum", definition=definition).report["resolutions"]["safety-panel"]
    assert given_it["latency"]["expectedFrom"] == "definition"


def test_sparse_figures_fall_back_to_defaults_and_say_so():
    log = simulate(examples.load("parallel-review"), runs=8, seed=1)
    fitted = calibrate(log, "parallel-review")
    assert "alice@legal" not in fitted.policy["reviewers"]
    assert any("alice@legal" in f and "defaults kept" in f for f in fitted.report["fallbacks"])
    assert "calendars" not in fitted.policy
    assert "default kept: reviewer alice@legal" in fitted.table()


def test_the_window_selects_executions_and_an_unknown_definition_is_refused(recorded):
    first_day = calibrate(recorded, "parallel-review", until="2026-01-02T00:00:00Z")
    assert first_day.report["executions"] == 144  # one dispatch every 10 minutes
    with pytest.raises(LookupError, match="no execution of definition 'nope'"):
        calibrate(recorded, "nope")


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_intervals_hold_the_observed_share(successes, n):
    successes = min(successes, n)
    low, high = wilson(successes, n)
    assert 0 <= low <= successes / n <= high <= 1
