"""Calibration of working calendars: when each reviewer works, read from when they acted.

From a reviewer's decisions (at least 50, spread over at least a week) DuckDB counts actions
per quarter hour of the UTC day and per UTC hour of the log; the rest is read here:

* **hours**: quarter hours holding actions are working time; a run of empty quarters between
  them is a break only when the neighbouring rate would have put at least
  :data:`_GAP_EVIDENCE` actions in it (otherwise it is chance), and the longest gap is the
  night. Quarters holding under 0.1% of the actions are read as outliers;
* **time zone**: instants cannot tell "14:00–22:00 UTC" from "9:00–17:00 at UTC−5" (both are
  the same hours), so the offset is the whole hour that opens the working day closest to
  9:00 local — a convention, named in the report — written as a fixed-offset zone
  (``Etc/GMT+5`` is UTC−5). Daylight-saving changes are not recovered;
* **weekdays**: the local weekdays holding at least 2% of the actions;
* **holidays**: a worked weekday without a single action, when the ten nearest worked days
  all had actions and their median count makes an empty day by chance unlikely
  (``exp(−median) < 0.001 / days tested``).

>>> cal = {"offsetMs": 0, "weekdays": ["mon"], "hours": [[9, 12], [13, 17]], "holidays": []}
>>> "least(greatest" in working_ms("t", cal)
True
"""

from __future__ import annotations

import datetime as dt
import math
import statistics

from toolkit.simulate.calendars import WEEKDAYS

DAY = 86_400_000
HOUR = 3_600_000
_QUARTER = 900_000
_QUARTERS = 96
# A weekday counts as worked when it holds at least this share of a reviewer's actions
# (an evenly spread week gives each day 1/7 ≈ 14%).
_WEEKDAY_SHARE = 0.02
# A quarter hour holding less than this share of a reviewer's actions is an outlier.
_QUARTER_SHARE = 0.001
# An empty stretch is a break (or a holiday) only when at least this many actions were expected in it.
_GAP_EVIDENCE = 10.0
_HOLIDAY_NEIGHBOURS = 10
_HOLIDAY_RISK = 0.001
MIN_CALENDAR = 50
# A calendar is read only from actions spread over at least a week: a shorter log shows when
# it was recorded, not when people work.
CALENDAR_SPAN_MS = 7 * DAY
_OPENING_HOUR = 9


def zone_name(offset_hours: int) -> str:
    """A fixed-offset IANA zone (POSIX sign: ``Etc/GMT+5`` is five hours behind UTC).

    >>> zone_name(-5), zone_name(0), zone_name(1)
    ('Etc/GMT+5', 'UTC', 'Etc/GMT-1')
    """
    if offset_hours == 0:
        return "UTC"
    return f"Etc/GMT{'+' if offset_hours < 0 else '-'}{abs(offset_hours)}"


def working_ms(column: str, calendar: dict) -> str:
    """SQL for the working milliseconds from the epoch to ``column`` under a fitted calendar
    (a fixed offset, weekdays, spans of hours and holidays)."""
    mask = [1 if d in calendar["weekdays"] else 0 for d in WEEKDAYS]
    before = [sum(mask[:i]) for i in range(7)]
    spans = [(round(a * HOUR), round(b * HOUR)) for a, b in calendar["hours"]]
    per_day = sum(b - a for a, b in spans)
    local = f"({column} + {calendar['offsetMs']})"
    day = f"({local} // {DAY})"
    dow = f"(({day} + 3) % 7)"  # 1970-01-01 was a Thursday: Monday is 0
    within = " + ".join(f"least(greatest({local} % {DAY} - {a}, 0), {b - a})" for a, b in spans)
    weeks = f"(({day} + 3) // 7) * {sum(mask) * per_day}"
    sql = f"({weeks} + {before}[{dow} + 1] * {per_day} + {mask}[{dow} + 1] * ({within})"
    for holiday in calendar["holidays"]:
        h = (dt.date.fromisoformat(holiday) - dt.date(1970, 1, 1)).days
        sql += f" - CASE WHEN {day} > {h} THEN {per_day} WHEN {day} = {h} THEN ({within}) ELSE 0 END"
    return sql + ")"


def fit_calendars(con, report: dict) -> dict:
    """Per reviewer with enough actions: the fitted calendar (``offsetMs``, ``weekdays``,
    ``hours``, ``holidays``) with the counts behind it; reviewers who act at any time get none."""
    quarters: dict[str, list[tuple[int, int, int, int]]] = {}
    for who, q, count, first, last in con.execute(
        f"SELECT reviewer_id, (decided_at % {DAY}) // {_QUARTER}, count(*), min(decided_at % {DAY}), "
        f"max(decided_at % {DAY}) FROM _cal_r GROUP BY ALL"
    ).fetchall():
        quarters.setdefault(who, []).append((q, count, first, last))
    hours: dict[str, dict[int, int]] = {}
    for who, hour, count in con.execute(
        f"SELECT reviewer_id, decided_at // {HOUR}, count(*) FROM _cal_r GROUP BY ALL"
    ).fetchall():
        hours.setdefault(who, {})[hour] = count
    out = {}
    for who in sorted(quarters):
        n = sum(c for _, c, _, _ in quarters[who])
        spread = (max(hours[who]) - min(hours[who]) + 1) * HOUR
        if n < MIN_CALENDAR or spread < CALENDAR_SPAN_MS:
            report["fallbacks"].append(
                f"calendar of {who}: {n} actions over {spread / DAY:.1f} days (need "
                f"{MIN_CALENDAR} over 7 days), always at work"
            )
            continue
        fitted = _fit_one(quarters[who], hours[who], n)
        if fitted is not None:
            out[who] = fitted
    return out


def _fit_one(quarters: list[tuple[int, int, int, int]], hours: dict[int, int], n: int) -> dict | None:
    counts = [0] * _QUARTERS
    for q, c, _, _ in quarters:
        counts[q] = c
    active = [c >= max(1.0, _QUARTER_SHARE * n) for c in counts]
    runs = _circular_runs(active, counts)
    if not runs:
        return None
    if len(runs) == 1 and runs[0][1] - runs[0][0] >= _QUARTERS:
        offset, spans, breaks = 0, [(0, _QUARTERS)], []
    else:
        # The longest gap is the night; the working day opens where it ends.
        gaps = [((runs[(i + 1) % len(runs)][0] - runs[i][1]) % _QUARTERS, i) for i in range(len(runs))]
        _, night = max(gaps)
        opening = runs[(night + 1) % len(runs)][0] % _QUARTERS
        offset = round(_OPENING_HOUR - opening / 4)
        if offset < -12:
            offset += 24
        shifted = sorted(((a + 4 * offset) % _QUARTERS, b - a) for a, b in runs)
        spans = [(a, a + length) for a, length in shifted]
        if spans[-1][1] > _QUARTERS:  # a window too long to open at 9:00 and close by midnight
            offset -= math.ceil((spans[-1][1] - _QUARTERS) / 4)
            shifted = sorted(((a + 4 * offset) % _QUARTERS, b - a) for a, b in runs)
            spans = [(a, a + length) for a, length in shifted]
        breaks = [
            {
                "hours": [spans[i][1] / 4, spans[i + 1][0] / 4],
                "actions": 0,
                "expected": round(_expected_in_gap(spans[i], spans[i + 1], counts, offset), 1),
            }
            for i in range(len(spans) - 1)
        ]
    local = {h + offset: c for h, c in hours.items()}
    per_weekday = [0] * 7
    per_day: dict[int, int] = {}
    for h, c in local.items():
        per_day[h // 24] = per_day.get(h // 24, 0) + c
        per_weekday[(h // 24 + 3) % 7] += c
    worked = [d for d in range(7) if per_weekday[d] >= _WEEKDAY_SHARE * n]
    if len(worked) == 7 and spans == [(0, _QUARTERS)]:
        return None  # acts at any time: always at work
    holidays, quiet = _holidays(per_day, set(worked))
    shift = offset * HOUR
    return {
        "n": n,
        "offsetMs": shift,
        "utcOffsetHours": offset,
        "timeZone": zone_name(offset),
        "weekdays": [WEEKDAYS[d] for d in worked],
        "hours": [[a / 4, b / 4] for a, b in spans],
        "holidays": [h["date"] for h in holidays],
        "earliestHour": _local_hour(quarters, active, offset, first=True),
        "latestHour": _local_hour(quarters, active, offset, first=False),
        "actionsPerWeekday": {WEEKDAYS[d]: per_weekday[d] for d in range(7)},
        "actionsPerHour": [sum(counts[(4 * (h - offset) + k) % _QUARTERS] for k in range(4)) for h in range(24)],
        "breaks": breaks,
        "holidayEvidence": holidays,
        "quietDays": quiet,
        "convention": f"the whole-hour UTC offset that opens the day closest to {_OPENING_HOUR}:00 local",
    }


def _local_hour(quarters, active, offset: int, first: bool) -> float:
    """The earliest (or latest) local time of day of an action inside working time, in hours."""
    times = [((lo if first else hi) / HOUR + offset) % 24 for q, _, lo, hi in quarters if active[q]]
    return min(times) if first else max(times)


def _circular_runs(active: list[bool], counts: list[int]) -> list[tuple[int, int]]:
    """Runs ``(start, end)`` of active quarters around the clock, in order from the start of
    one of them (``end`` may pass 96), with gaps too short to be evidence of a break merged
    into their neighbours; ``[(0, 96)]`` when no gap is left."""
    k = len(active)
    if not any(active):
        return []
    if all(active):
        return [(0, k)]
    start = next(i for i in range(k) if active[i] and not active[i - 1])
    runs: list[tuple[int, int]] = []
    i = start
    while i < start + k:
        j = i
        while j < start + k and active[j % k]:
            j += 1
        if j > i:
            runs.append((i, j))
        i = j + 1

    def rate(*parts: tuple[int, int]) -> float:
        return sum(counts[q % k] for a, b in parts for q in range(a, b)) / sum(b - a for a, b in parts)

    merged = True
    while merged:
        merged = False
        for idx in range(len(runs)):
            a, b = runs[idx], runs[(idx + 1) % len(runs)]
            gap = (b[0] - a[1]) % k if len(runs) > 1 else k - (a[1] - a[0])
            if gap * rate(a, b) >= _GAP_EVIDENCE:
                continue
            if len(runs) == 1:
                return [(0, k)]
            if idx + 1 < len(runs):
                runs[idx : idx + 2] = [(a[0], b[1])]
            else:  # the last run joins the first across the frame's end
                runs = runs[1:-1] + [(a[0], b[1] + k)]
            merged = True
            break
    return runs


def _expected_in_gap(left: tuple[int, int], right: tuple[int, int], counts: list[int], offset: int) -> float:
    bins = [q for q in range(left[0], left[1])] + [q for q in range(right[0], right[1])]
    inside = sum(counts[(q - 4 * offset) % _QUARTERS] for q in bins)
    return (right[0] - left[1]) * inside / len(bins)


def _holidays(per_day: dict[int, int], worked: set[int]) -> tuple[list[dict], int]:
    """Worked weekdays with no action between the first and the last day of the log, where
    steady activity around them makes an empty day strong evidence (see the module doc),
    and how many other worked weekdays had no action."""
    days = [d for d in range(min(per_day) + 1, max(per_day)) if (d + 3) % 7 in worked]
    if not days:
        return [], 0
    threshold = math.log(len(days) / _HOLIDAY_RISK)
    out, quiet = [], 0
    for d in days:
        if per_day.get(d, 0):
            continue
        quiet += 1
        near = sorted((abs(e - d), e) for e in days if e != d)[:_HOLIDAY_NEIGHBOURS]
        counts = [per_day.get(e, 0) for _, e in near]
        if len(counts) < _HOLIDAY_NEIGHBOURS or min(counts) == 0:
            continue
        expected = statistics.median(counts)
        if expected >= threshold:
            date = (dt.date(1970, 1, 1) + dt.timedelta(days=d)).isoformat()
            out.append({"date": date, "actions": 0, "expected": expected, "neighbourMin": min(counts)})
            quiet -= 1
    return out, quiet
