"""Calibration with censored waits: a reviewer whose steps are usually cut short.

In ``cancel-on-quorum`` any two of three approvals issue the order and cancel the third
review. Grace is much slower than Frank and Erin, so her review is nearly always the one
cancelled: the few answers she gets in are her fastest ones. Fitting only those would put her
median far too low; a fit that reads the cancelled reviews as censored waits recovers it.
"""

from __future__ import annotations

import pytest

from toolkit import examples
from toolkit.simulate import calibrate, simulate

HOUR = 3_600_000
GRACE_MEDIAN = 2 * HOUR
TRUE = {
    "reviewers": {
        "*": {"approve": 1.0, "latencyMs": {"lognormal": {"medianMs": HOUR, "sigma": 0.5}}},
        "gus@finance": {"respond": 0.0},
        "grace@procurement": {"latencyMs": {"lognormal": {"medianMs": GRACE_MEDIAN, "sigma": 0.5}}},
    },
    "arrivalIntervalMs": 600_000,
}


@pytest.fixture(scope="module")
def fitted():
    return calibrate(simulate(examples.load("cancel-on-quorum"), runs=3000, seed=5, policy=TRUE), "cancel-on-quorum")


def test_the_slow_reviewer_is_mostly_cut_short(fitted):
    grace = fitted.report["reviewers"]["grace@procurement"]
    assert grace["respond"]["censored"] > 2 * grace["approve"]["n"]  # cancelled reviews far outnumber answers


def test_the_median_of_a_censored_reviewer_falls_inside_its_interval(fitted):
    grace = fitted.report["reviewers"]["grace@procurement"]["latency"]
    assert grace["medianLow"] <= GRACE_MEDIAN <= grace["medianHigh"]
    assert grace["censored"] > 0 and grace["estimator"] == "kaplan-meier"


def test_the_fitted_distribution_of_a_censored_reviewer_has_the_true_median(fitted):
    latency = fitted.policy["reviewers"]["grace@procurement"]["latencyMs"]
    assert latency["lognormal"]["medianMs"] == pytest.approx(GRACE_MEDIAN, rel=0.15)
    assert latency["lognormal"]["sigma"] == pytest.approx(0.5, abs=0.1)


def test_cancelled_reviews_are_neither_responses_nor_non_responses(fitted):
    grace = fitted.report["reviewers"]["grace@procurement"]["respond"]
    assert grace["low"] <= 1.0 <= grace["high"]
    assert fitted.policy["reviewers"]["grace@procurement"]["respond"] == pytest.approx(1.0, abs=0.05)


def test_the_fast_reviewers_keep_their_median(fitted):
    for who in ("frank@security", "erin@finance"):
        latency = fitted.report["reviewers"][who]["latency"]
        assert latency["medianLow"] <= HOUR <= latency["medianHigh"]
