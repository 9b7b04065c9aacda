"""Calendar ground truth: a log simulated under a known calendar — a time zone other than UTC,
Monday to Friday, a lunch break and a holiday — is calibrated back to that calendar."""

from __future__ import annotations

import pytest

from toolkit import examples
from toolkit.simulate import calibrate, simulate

HOUR = 3_600_000
# Bogotá keeps UTC-5 all year: the fitted fixed-offset zone Etc/GMT+5 is the same calendar.
CALENDAR = {
    "timeZone": "America/Bogota",
    "weekdays": ["mon", "tue", "wed", "thu", "fri"],
    "hours": [[9, 12], [13, 17]],
    "holidays": ["2026-01-14"],
}
TRUE = {
    "reviewers": {
        "alice@legal": {"approve": 0.8, "latencyMs": {"lognormal": {"medianMs": HOUR, "sigma": 0.6}}},
        "bob@brand": {"approve": 0.9, "latencyMs": {"exponential": 1_800_000}},
    },
    "calendars": {"*": CALENDAR},
    "arrivalIntervalMs": 600_000,
}


@pytest.fixture(scope="module")
def fitted():
    # 3,000 requests, one every 10 minutes: 2026-01-01 to 2026-01-21
    return calibrate(simulate(examples.load("parallel-review"), runs=3000, seed=6, policy=TRUE), "parallel-review")


def test_the_fitted_calendar_is_the_true_one(fitted):
    for who in ("alice@legal", "bob@brand"):
        assert fitted.policy["calendars"][who] == {**CALENDAR, "timeZone": "Etc/GMT+5"}
        assert fitted.report["calendars"][who]["utcOffsetHours"] == -5


def test_the_report_gives_the_counts_behind_the_calendar(fitted):
    row = fitted.report["calendars"]["alice@legal"]
    assert row["actionsPerWeekday"]["sat"] == row["actionsPerWeekday"]["sun"] == 0
    assert row["actionsPerHour"][12] == 0 and row["actionsPerHour"][11] > 0 and row["actionsPerHour"][13] > 0
    (lunch,) = row["breaks"]
    assert lunch["hours"] == [12, 13] and lunch["actions"] == 0 and lunch["expected"] > 100
    (holiday,) = row["holidayEvidence"]
    assert holiday["date"] == "2026-01-14" and holiday["actions"] == 0 and holiday["neighbourMin"] > 50
    text = fitted.table()
    assert "Etc/GMT+5" in text and "holiday 2026-01-14" in text and "break [12.0, 13.0]" in text


def test_latencies_are_fitted_in_the_recovered_working_time(fitted):
    alice = fitted.report["reviewers"]["alice@legal"]["latency"]
    bob = fitted.report["reviewers"]["bob@brand"]["latency"]
    assert alice["medianLow"] <= HOUR <= alice["medianHigh"]
    assert bob["medianLow"] <= 1_800_000 * 0.6931471805599453 <= bob["medianHigh"]
    assert fitted.report["reviewers"]["alice@legal"]["latencyClock"] == "working time"


def test_a_quiet_day_of_a_sparse_reviewer_is_not_named_a_holiday():
    # a request every 30 hours: some working days get no decision
    sparse = {**TRUE, "calendars": {"*": {**CALENDAR, "holidays": []}}, "arrivalIntervalMs": 30 * HOUR}
    fitted = calibrate(simulate(examples.load("parallel-review"), runs=150, seed=2, policy=sparse), "parallel-review")
    row = fitted.report["calendars"]["alice@legal"]
    assert row["quietDays"] > 0
    assert row["holidays"] == [] and "holidays" not in fitted.policy["calendars"]["alice@legal"]
