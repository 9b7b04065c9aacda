"""Calendars and capacity, as properties (hypothesis).

* A latency run through a calendar never ends outside working hours, and the working time
  between its start and its end is the latency (measured independently, by walking the
  calendar half hour by half hour on cases on that grid).
* Reviewer capacity is never exceeded at any time in the event log: with a fixed latency L
  per reviewer and no calendar, a decision at t means the reviewer worked on it during
  [t − L, t); at no instant may a reviewer have more than k such intervals open.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit import examples
from toolkit.simulate import simulate
from toolkit.simulate.calendars import WEEKDAYS, Calendar

M, H = 60_000, 3_600_000
START = int(dt.datetime(2026, 1, 1, tzinfo=dt.UTC).timestamp() * 1000)


@st.composite
def calendars(draw) -> dict:
    cuts = sorted(draw(st.sets(st.integers(0, 48), min_size=2, max_size=6)))  # half hours
    pairs = [[a / 2, b / 2] for a, b in zip(cuts[::2], cuts[1::2])]
    return {
        "timeZone": draw(
            st.sampled_from(["UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe"])
        ),
        "weekdays": draw(st.lists(st.sampled_from(WEEKDAYS), min_size=1, max_size=7, unique=True)),
        "hours": pairs,
        "holidays": [
            str(dt.date(2026, 1, 1) + dt.timedelta(days=d)) for d in draw(st.lists(st.integers(0, 400), max_size=20))
        ],
    }


@settings(max_examples=150, deadline=None)
@given(calendar=calendars(), start=st.integers(0, 366 * 24 * H), work=st.integers(0, 5 * 24 * H))
def test_latency_inside_hours_never_ends_outside_hours(calendar, start, work):
    hours = Calendar.model_validate(calendar).working_time()
    end = hours.advance(START + start, work)
    assert end >= START + start + work
    assert hours.is_working(end)


HALF = 30 * M


@settings(max_examples=100, deadline=None)
@given(calendar=calendars(), start=st.integers(0, 360 * 48), work=st.integers(0, 2 * 48))
def test_latency_inside_hours_takes_exactly_that_much_working_time(calendar, start, work):
    # On the half-hour grid every boundary of these calendars (half hours; zones offset by
    # whole or half hours, Lord Howe's half-hour summer shift included) falls on a grid line,
    # so each half hour is all in or all out: count the ones whose middle is working time.
    hours = Calendar.model_validate(calendar).working_time()
    start_ms, work_ms = START + start * HALF, work * HALF
    end = hours.advance(start_ms, work_ms)
    worked = sum(HALF for t in range(start_ms, end, HALF) if hours.is_working(t + HALF // 2))
    assert worked == work_ms


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    capacity=st.dictionaries(st.sampled_from(["*", "alice@legal", "bob@brand"]), st.integers(1, 3), min_size=1),
    latency=st.dictionaries(
        st.sampled_from(["alice@legal", "bob@brand"]), st.integers(1, 120).map(lambda m: m * M), min_size=2
    ),
    approve=st.floats(0.3, 1),
    arrival=st.integers(0, 30).map(lambda m: m * M),
    seed=st.integers(0, 2**16),
)
def test_capacity_is_never_exceeded_in_the_event_log(capacity, latency, approve, arrival, seed):
    policy = {
        "reviewers": {r: {"approve": approve, "latencyMs": ms} for r, ms in latency.items()},
        "capacity": capacity,
        "arrivalIntervalMs": arrival,
    }
    result = simulate(examples.load("parallel-review"), runs=12, seed=seed, policy=policy)
    rows = result.sql(
        "SELECT json_extract_string(data, '$.reviewerId'), timestamp FROM events WHERE type = 'step.response-recorded'"
    ).fetchall()
    result.con.close()
    moments: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for reviewer, at in rows:
        moments[reviewer] += [(at - latency[reviewer], 1), (at, -1)]  # an end sorts before a start at one instant
    for reviewer, changes in moments.items():
        limit = capacity.get(reviewer, capacity.get("*"))
        open_now = 0
        for _, change in sorted(changes):
            open_now += change
            assert open_now <= (limit if limit is not None else 12), (reviewer, limit)
