"""Working calendars: a reviewer's latency only runs inside their working hours.

JSON form (policy ``calendars``, keyed by reviewer id or ``"*"``); every field is optional::

    {"timeZone": "Europe/Paris",                       # IANA name (default "UTC")
     "weekdays": ["mon", "tue", "wed", "thu", "fri"],  # the default
     "hours": [[9, 12], [13, 17.5]],                   # local wall-clock hours (default [[9, 17]])
     "holidays": ["2026-12-25"]}                       # local dates off (default none)

A latency of *d* ms started at *t* ends after *d* ms of working time counted from *t*: a 2 h
latency started on a Friday at 16:00 with hours 9–17 ends on Monday at 10:00. The end is always
inside working hours (closing time included), so a zero latency started at night ends at the
next opening. Hours are wall-clock times of the zone: on a day when clocks change, 9–17 is
still 9–17 local (a boundary the change skips is read with the offset before the change).

>>> hours = Calendar.model_validate({"hours": [[9, 17]]}).working_time()
>>> friday_16h = 1_767_916_800_000 + 16 * 3_600_000     # 2026-01-09 16:00 UTC, a Friday
>>> hours.advance(friday_16h, 2 * 3_600_000) == friday_16h + (3 * 24 - 6) * 3_600_000
True
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from toolkit.model.base import ApiModel

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_HOUR_MS = 3_600_000
_DAY_MS = 24 * _HOUR_MS
_EPOCH_DAY = dt.date(1970, 1, 1).toordinal()


class Calendar(ApiModel):
    """When one reviewer works (see the module docstring for the JSON form)."""

    time_zone: str = "UTC"
    weekdays: Annotated[list[Weekday], Field(min_length=1)] = ["mon", "tue", "wed", "thu", "fri"]
    hours: Annotated[list[Annotated[list[float], Field(min_length=2, max_length=2)]], Field(min_length=1)] = [
        [9.0, 17.0]
    ]
    holidays: list[str] = []

    @field_validator("time_zone")
    @classmethod
    def _known_zone(cls, name: str) -> str:
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {name!r} (an IANA name such as 'Europe/Paris')") from None
        return name

    @field_validator("holidays")
    @classmethod
    def _dates(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                dt.date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"{value!r} is not a date YYYY-MM-DD") from None
        return values

    @model_validator(mode="after")
    def _ordered_hours(self):
        previous = 0.0
        for start, end in self.hours:
            if not 0 <= start < end <= 24:
                raise ValueError(f"hours: [{start:g}, {end:g}] must satisfy 0 <= start < end <= 24")
            if start < previous:
                raise ValueError("hours: intervals must be in order and must not overlap")
            previous = end
        return self

    def working_time(self) -> WorkingTime:
        """The calendar as the driver uses it (working intervals in epoch ms, cached per day)."""
        return WorkingTime(self)


class WorkingTime:
    """A calendar resolved for computing: ``advance`` and ``is_working`` on epoch ms."""

    __slots__ = ("zone", "weekdays", "hours_ms", "holidays", "_days")

    def __init__(self, calendar: Calendar) -> None:
        self.zone = ZoneInfo(calendar.time_zone)
        self.weekdays = frozenset(WEEKDAYS.index(d) for d in calendar.weekdays)
        self.hours_ms = tuple((round(a * _HOUR_MS), round(b * _HOUR_MS)) for a, b in calendar.hours)
        self.holidays = frozenset(dt.date.fromisoformat(d).toordinal() for d in calendar.holidays)
        self._days: dict[int, tuple[tuple[int, int], ...]] = {}

    def intervals(self, day: int) -> tuple[tuple[int, int], ...]:
        """The working intervals ``(start, end)`` in epoch ms of one local date (an ordinal)."""
        cached = self._days.get(day)
        if cached is not None:
            return cached
        date = dt.date.fromordinal(day)
        out: tuple[tuple[int, int], ...] = ()
        if date.weekday() in self.weekdays and day not in self.holidays:
            midnight_local = (day - _EPOCH_DAY) * _DAY_MS
            out = tuple(
                (midnight_local + a - self._offset_ms(date, a), midnight_local + b - self._offset_ms(date, b))
                for a, b in self.hours_ms
            )
        self._days[day] = out
        return out

    def _offset_ms(self, date: dt.date, ms_of_day: int) -> int:
        # Wall-clock arithmetic: midnight + 24 h is the next midnight, whatever the day's length.
        local = dt.datetime(date.year, date.month, date.day, tzinfo=self.zone) + dt.timedelta(milliseconds=ms_of_day)
        offset = local.utcoffset()
        assert offset is not None  # the datetime carries the calendar's zone
        return int(offset // dt.timedelta(milliseconds=1))

    def local_day(self, ms: int) -> int:
        """The local date (ordinal) at epoch ``ms``."""
        return dt.datetime.fromtimestamp(ms / 1000, self.zone).date().toordinal()

    def advance(self, start_ms: int, work_ms: int, limit_ms: int | None = None) -> int:
        """When ``work_ms`` of working time started at ``start_ms`` is done. With ``limit_ms``,
        any answer past the limit is ``limit_ms + 1`` (the driver drops it anyway), which bounds
        the search for very long latencies."""
        day = self.local_day(start_ms) - 1  # the day before: its hours may end after our midnight
        cursor, remaining = start_ms, work_ms
        while True:
            # A local midnight is at most 14 h before the UTC one: past this, no hour can be early enough.
            if limit_ms is not None and (day - _EPOCH_DAY) * _DAY_MS - 14 * _HOUR_MS > limit_ms:
                return limit_ms + 1
            for a, b in self.intervals(day):
                if b < cursor:
                    continue
                s = a if a > cursor else cursor
                if s + remaining <= b:
                    return s + remaining
                remaining -= b - s
                cursor = b
            day += 1

    def is_working(self, ms: int) -> bool:
        """True when ``ms`` falls inside working hours (opening and closing instants included)."""
        day = self.local_day(ms)
        return any(a <= ms <= b for d in (day - 1, day, day + 1) for a, b in self.intervals(d))
