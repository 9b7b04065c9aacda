"""Calendars, reviewer capacity and empirical latencies, on scripted cases whose times are
computed by hand (in the comments), through ``simulate`` and its event log."""

from __future__ import annotations

import datetime as dt

import pytest

from toolkit.errors import ApiError
from toolkit.model import validate
from toolkit.simulate import Policy, simulate
from toolkit.simulate.calendars import Calendar

M, H = 60_000, 3_600_000
ONE_REVIEW = {
    "definitionId": "one-review",
    "name": "One review",
    "nodes": [{"nodeId": "review", "type": "human", "config": {"reviewers": [{"userId": "alice", "mandatory": True}]}}],
    "edges": [],
}


def utc(text: str) -> int:
    """Epoch ms of an ISO date-time with an offset."""
    return int(dt.datetime.fromisoformat(text).timestamp() * 1000)


def decisions(result) -> list[tuple[int, str, int]]:
    """(run, reviewer, epoch ms) of every recorded decision, in run then log order."""
    rows = result.sql(
        "SELECT run, json_extract_string(data, '$.reviewerId'), timestamp FROM events "
        "WHERE type = 'step.response-recorded' ORDER BY run, seq"
    ).fetchall()
    return [tuple(r) for r in rows]


def decided_at(start_at: str, latency_ms: int, calendar: dict, reviewer: str = "*") -> int:
    policy = {
        "reviewers": {"*": {"approve": 1, "latencyMs": latency_ms}},
        "startAt": start_at,
        "calendars": {reviewer: calendar},
    }
    [(_, _, at)] = decisions(simulate(ONE_REVIEW, runs=1, seed=1, policy=policy))
    return at


# ---------------------------------------------------------------- calendars


def test_a_2h_latency_started_friday_16h_ends_monday_10h():
    # 2026-01-09 is a Friday: 16:00-17:00 counts one hour, Monday 09:00-10:00 the second.
    assert decided_at("2026-01-09T16:00:00Z", 2 * H, {"hours": [[9, 17]]}) == utc("2026-01-12T10:00:00+00:00")


def test_holidays_and_weekends_do_not_count():
    # Thursday 24 Dec 16:00: one hour that day; Friday 25th a holiday, then the weekend;
    # Monday 28th 09:00-11:00 the other two hours.
    calendar = {"hours": [[9, 17]], "holidays": ["2026-12-25"]}
    assert decided_at("2026-12-24T16:00:00Z", 3 * H, calendar) == utc("2026-12-28T11:00:00+00:00")


def test_split_hours_and_half_hours():
    calendar = {"hours": [[9, 12], [13, 17.5]]}
    # Monday 11:00: 11-12 (1 h) then 13-16 (3 h).
    assert decided_at("2026-01-05T11:00:00Z", 4 * H, calendar) == utc("2026-01-05T16:00:00+00:00")
    # Monday 11:00, 6 h: 11-12 (1 h), 13-17:30 (4.5 h), Tuesday 09:00-09:30 (0.5 h).
    assert decided_at("2026-01-05T11:00:00Z", 6 * H, calendar) == utc("2026-01-06T09:30:00+00:00")


def test_local_hours_across_the_change_to_summer_time():
    # Europe/Paris moves to UTC+2 on Sunday 29 March 2026. Friday 27th 16:00 local is 15:00Z;
    # 16-17 local that Friday, then Monday 30th 09:00-10:00 local, which is 08:00Z.
    calendar = {"timeZone": "Europe/Paris", "hours": [[9, 17]]}
    assert decided_at("2026-03-27T16:00:00+01:00", 2 * H, calendar) == utc("2026-03-30T08:00:00+00:00")
    # Working all day every day, the 23-hour Sunday is 23 working hours: 24 h of work from
    # Sunday 00:00 local ends Monday 01:00 local, exactly 24 h of real time later.
    always = {
        "timeZone": "Europe/Paris",
        "hours": [[0, 24]],
        "weekdays": ["mon", "tue", "wed", "thu", "fri", "sat", "sun"],
    }
    start = "2026-03-29T00:00:00+01:00"
    assert decided_at(start, 24 * H, always) == utc(start) + 24 * H


def test_a_reviewer_calendar_overrides_the_default_one():
    # Alice works New York hours (UTC-5 in January): Friday 16:00Z is 11:00 there, so 2 h end at 13:00 local.
    policy = {
        "reviewers": {"*": {"approve": 1, "latencyMs": 2 * H}},
        "startAt": "2026-01-09T16:00:00Z",
        "calendars": {"*": {"hours": [[9, 17]]}, "alice": {"timeZone": "America/New_York"}},
    }
    [(_, _, at)] = decisions(simulate(ONE_REVIEW, runs=1, seed=1, policy=policy))
    assert at == utc("2026-01-09T18:00:00+00:00")


def test_no_latency_outside_hours_waits_for_the_next_opening_and_closing_time_counts():
    assert decided_at("2026-01-05T20:00:00Z", 0, {"hours": [[9, 17]]}) == utc("2026-01-06T09:00:00+00:00")
    assert decided_at("2026-01-05T16:00:00Z", H, {"hours": [[9, 17]]}) == utc("2026-01-05T17:00:00+00:00")


def test_a_latency_past_the_horizon_leaves_the_run_running():
    policy = {
        "reviewers": {"*": {"latencyMs": 20 * H}},
        "calendars": {"*": {"hours": [[9, 10]]}},
        "horizonMs": 5 * 24 * H,
    }
    result = simulate(ONE_REVIEW, runs=1, seed=1, policy=policy)
    assert result.summary.outcomes == {"running": 1}
    assert decisions(result) == []


def test_start_at_sets_the_virtual_time_of_the_first_dispatch():
    result = simulate(
        ONE_REVIEW, runs=2, seed=1, policy={"startAt": "2026-06-01T08:30:00+02:00", "arrivalIntervalMs": M}
    )
    starts = result.sql("SELECT started_at FROM executions ORDER BY run").fetchall()
    assert starts == [(utc("2026-06-01T06:30:00+00:00"),), (utc("2026-06-01T06:31:00+00:00"),)]


@pytest.mark.parametrize(
    "policy, message",
    [
        ({"startAt": "2026-01-05T09:00:00"}, "policy.startAt: '2026-01-05T09:00:00' needs an offset"),
        ({"startAt": "monday"}, "policy.startAt: 'monday' is not an ISO 8601 date-time"),
        ({"calendars": {"*": {"timeZone": "Mars/Olympus"}}}, "policy.calendars.*.timeZone: unknown time zone"),
        (
            {"calendars": {"bob": {"hours": [[13, 17], [9, 12]]}}},
            "policy.calendars.bob.hours: intervals must be in order",
        ),
        ({"calendars": {"*": {"hours": [[9, 25]]}}}, "0 <= start < end <= 24"),
        ({"calendars": {"*": {"weekdays": []}}}, "policy.calendars.*.weekdays: list should have at least 1 item"),
        ({"calendars": {"*": {"holidays": ["25/12/2026"]}}}, "policy.calendars.*.holidays: '25/12/2026' is not a date"),
        ({"calendars": {"*": {"hour": [[9, 17]]}}}, "policy.calendars.*.hour: unknown field"),
        ({"capacity": {"*": 0}}, "policy.capacity.*: input should be greater than or equal to 1"),
        ({"reviewers": {"*": {"latencyMs": {"empirical": []}}}}, "list should have at least 1 item"),
        ({"reviewers": {"*": {"latencyMs": {"gamma": 2}}}}, "policy.reviewers.*.latencyMs: a number or exactly one of"),
    ],
)
def test_bad_policies_name_the_field(policy, message):
    with pytest.raises(ApiError) as caught:
        validate(Policy, policy, prefix="policy")
    assert message in caught.value.message


def test_a_policy_round_trips_through_json():
    policy = Policy.load(
        {
            "calendars": {"*": {"timeZone": "Europe/Paris", "hours": [[9, 12], [13, 17.5]]}},
            "capacity": {"*": 3, "alice": 1},
            "startAt": "2026-01-05T09:00:00Z",
            "reviewers": {"alice": {"latencyMs": {"empirical": [1, 2, 3]}}},
        }
    )
    assert Policy.load(policy.to_json()) == policy
    assert policy.to_json()["capacity"] == {"*": 3, "alice": 1}


def test_the_working_time_of_a_calendar_answers_directly():
    hours = Calendar.model_validate({"hours": [[9, 17]]}).working_time()
    assert hours.advance(utc("2026-01-09T16:00:00+00:00"), 2 * H) == utc("2026-01-12T10:00:00+00:00")
    assert hours.is_working(utc("2026-01-09T17:00:00+00:00"))
    assert not hours.is_working(utc("2026-01-10T12:00:00+00:00"))  # a Saturday


# ---------------------------------------------------------------- capacity


def capacity_policy(capacity: int, **extra) -> dict:
    return {
        "reviewers": {"*": {"approve": 1, "latencyMs": H}},
        "capacity": {"alice": capacity},
        "arrivalIntervalMs": 0,
        **extra,
    }


def test_capacity_one_serves_three_simultaneous_steps_one_after_another():
    # Three runs dispatched at the same instant: alice takes run 0's step at once, run 1's when
    # she decides run 0 (1 h), run 2's at 2 h; each decision 1 h after she takes it.
    result = simulate(ONE_REVIEW, runs=3, seed=1, policy=capacity_policy(1))
    t0 = result.con.execute("SELECT min(started_at) FROM executions").fetchall()[0][0]
    assert [(run, at - t0) for run, _, at in decisions(result)] == [(0, H), (1, 2 * H), (2, 3 * H)]
    cycles = result.sql("SELECT cycle_time_ms FROM outcomes ORDER BY run").fetchall()
    assert cycles == [(H,), (2 * H,), (3 * H,)]


def test_capacity_two_serves_two_at_once():
    result = simulate(ONE_REVIEW, runs=3, seed=1, policy=capacity_policy(2))
    t0 = result.con.execute("SELECT min(started_at) FROM executions").fetchall()[0][0]
    assert [(run, at - t0) for run, _, at in decisions(result)] == [(0, H), (1, H), (2, 2 * H)]


def test_queued_work_starts_inside_working_hours():
    # Friday 15:00, hours 9-17, capacity 1: run 0 15-16, run 1 16-17, run 2 Monday 9-10.
    policy = capacity_policy(1, startAt="2026-01-09T15:00:00Z", calendars={"*": {"hours": [[9, 17]]}})
    at = [at for _, _, at in decisions(simulate(ONE_REVIEW, runs=3, seed=1, policy=policy))]
    assert at == [utc("2026-01-09T16:00:00+00:00"), utc("2026-01-09T17:00:00+00:00"), utc("2026-01-12T10:00:00+00:00")]


RACE = {
    "definitionId": "race",
    "name": "First of two reviews wins, then a final review",
    "nodes": [
        {"nodeId": "start", "type": "agent", "config": {"agentId": "starter"}},
        {"nodeId": "fast", "type": "human", "config": {"reviewers": [{"userId": "carol", "mandatory": True}]}},
        {"nodeId": "slow", "type": "human", "config": {"reviewers": [{"userId": "bob", "mandatory": True}]}},
        {"nodeId": "final", "type": "human", "config": {"reviewers": [{"userId": "bob", "mandatory": True}]}},
    ],
    "groups": [
        {
            "groupId": "either",
            "memberNodeIds": ["fast", "slow"],
            "expectedSteps": 2,
            "quorum": 1,
            "onQuorumMet": "cancelOnQuorum",
        }
    ],
    "edges": [
        {"from": "start", "to": {"kind": "group", "groupId": "either"}, "on": "approve"},
        {"from": {"kind": "group", "groupId": "either"}, "to": "final", "on": "approve"},
    ],
}


def test_a_step_that_ends_without_the_reviewer_frees_their_slot():
    # Bob (capacity 1) takes 'slow' at 0 (5 h of work); carol approves 'fast' at 10 min, the
    # quorum cancels 'slow', bob's slot frees at once and 'final' is decided 1 h later, at
    # 70 min (not 6 h, as if bob had to finish 'slow' first).
    policy = {
        "reviewers": {"*": {"approve": 1}, "carol": {"latencyMs": 10 * M}},
        "nodes": {"slow": {"latencyMs": 300 * M}, "final": {"latencyMs": 60 * M}},
        "capacity": {"bob": 1},
    }
    result = simulate(RACE, runs=1, seed=1, policy=policy)
    t0 = result.con.execute("SELECT started_at FROM executions").fetchall()[0][0]
    assert [(who, at - t0) for _, who, at in decisions(result)] == [("carol", 10 * M), ("bob", 70 * M)]
    assert result.summary.outcomes == {"completed": 1}


def test_capacity_does_not_change_the_random_draws_only_their_timing():
    policy = {"reviewers": {"*": {"approve": 0.5, "latencyMs": {"exponential": H}}}, "arrivalIntervalMs": 0}
    free = simulate(ONE_REVIEW, runs=40, seed=4, policy=policy)
    queued = simulate(ONE_REVIEW, runs=40, seed=4, policy={**policy, "capacity": {"*": 2}})
    query = "SELECT run, status FROM outcomes ORDER BY run"
    assert free.sql(query).fetchall() == queued.sql(query).fetchall()
    assert queued.summary.cycle_time_ms["p90"] > free.summary.cycle_time_ms["p90"]


# ---------------------------------------------------------------- empirical latencies


def test_empirical_latencies_are_drawn_from_the_list():
    values = [5 * M, 17 * M, 2 * H]
    policy = {"reviewers": {"*": {"latencyMs": {"empirical": values}}}}
    result = simulate(ONE_REVIEW, runs=300, seed=2, policy=policy)
    latencies = {row[0] for row in result.sql("SELECT cycle_time_ms FROM outcomes").fetchall()}
    assert latencies == set(values)
    again = simulate(ONE_REVIEW, runs=300, seed=2, policy=policy)
    query = "SELECT run, cycle_time_ms FROM outcomes ORDER BY run"
    assert result.sql(query).fetchall() == again.sql(query).fetchall()
