"""95% confidence intervals across replications.

``simulate(..., runs=n, replications=R)`` simulates R independent replications of n runs
(same definition, policy and start time; different runs of the seed). Each metric is
computed once per replication, giving R values x₁…x_R, and the interval is Student's t:

    mean ± t(0.975, R − 1) · s / √R        (s: the sample standard deviation of the x_i)

It covers the metric's expected value for n runs about 95% of the time when the per-
replication values are roughly normal, which averages and quantiles over enough runs are.
A metric undefined in some replication (cycle time when no run ended) uses the others.

>>> iv = t_interval([0.70, 0.74, 0.69, 0.73, 0.71])
>>> round(iv.mean, 3), round(iv.low, 3), round(iv.high, 3)
(0.714, 0.688, 0.74)
"""

from __future__ import annotations

import math
from collections.abc import ItemsView, Iterator, KeysView
from statistics import NormalDist, fmean, stdev
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import duckdb

# t(0.975, df) for df = 1..30 (standard tables); beyond, the Cornish-Fisher expansion below
# agrees with them to 4 decimals.
_T975 = (
    12.7062,
    4.3027,
    3.1824,
    2.7764,
    2.5706,
    2.4469,
    2.3646,
    2.3060,
    2.2622,
    2.2281,
    2.2010,
    2.1788,
    2.1604,
    2.1448,
    2.1314,
    2.1199,
    2.1098,
    2.1009,
    2.0930,
    2.0860,
    2.0796,
    2.0739,
    2.0687,
    2.0639,
    2.0595,
    2.0555,
    2.0518,
    2.0484,
    2.0452,
    2.0423,
)


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom."""
    if df < 1:
        raise ValueError("a t interval needs at least 2 values")
    if df <= len(_T975):
        return _T975[df - 1]
    z = NormalDist().inv_cdf(0.975)
    return (
        z
        + (z**3 + z) / (4 * df)
        + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
        + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
    )


class Interval(NamedTuple):
    """A metric's mean over the replications and its 95% confidence interval."""

    mean: float
    low: float
    high: float

    @property
    def width(self) -> float:
        return self.high - self.low

    def overlaps(self, other: Interval) -> bool:
        """True when the two intervals share a point (a difference not shown at 95%)."""
        return self.low <= other.high and other.low <= self.high

    def __contains__(self, value: object) -> bool:
        return isinstance(value, (int, float)) and self.low <= value <= self.high


def t_interval(values: list[float]) -> Interval:
    """The t interval of the mean of ``values`` (at least two)."""
    mean = fmean(values)
    half = t975(len(values) - 1) * stdev(values) / math.sqrt(len(values))
    return Interval(mean, mean - half, mean + half)


# metric -> (label, unit): the rows of the table, in order.
METRICS = {
    "share.completed": ("completed", "share"),
    "share.failed": ("failed", "share"),
    "share.cancelled": ("cancelled", "share"),
    "share.running": ("still running", "share"),
    "cycle_time_ms.p50": ("cycle time p50", "ms"),
    "cycle_time_ms.p90": ("cycle time p90", "ms"),
    "sla_breach_rate": ("SLA breach rate", "share"),
    "iterations.mean": ("loop iterations (mean)", "count"),
}

_PER_REPLICATION = """
SELECT replication,
       avg((status = 'completed')::INTEGER), avg((status = 'failed')::INTEGER),
       avg((status = 'cancelled')::INTEGER), avg((status = 'running')::INTEGER),
       quantile_cont(cycle_time_ms, 0.5) FILTER (WHERE status <> 'running'),
       quantile_cont(cycle_time_ms, 0.9) FILTER (WHERE status <> 'running'),
       avg((breaches > 0)::INTEGER), avg(iterations)
FROM outcomes WHERE starts_with(execution_id, ?) GROUP BY replication ORDER BY replication
"""


class Intervals:
    """The 95% intervals of a simulation's metrics across its replications.

    ``intervals[metric]`` is the metric's :class:`Interval` (keys of :data:`METRICS`; a
    metric defined in fewer than two replications is left out), ``values[metric]`` the
    per-replication values behind it and ``replications`` their count. It reads like a
    read-only mapping of metric to interval (``in``, ``len``, iteration, ``keys()``,
    ``items()``, ``dict(intervals)``) but is not a ``Mapping``: there ``values`` would be a
    method, here it is the data the intervals come from.

    >>> iv = Intervals({"share.completed": [0.70, 0.74, 0.69], "cycle_time_ms.p50": [5.0]}, 3)
    >>> list(iv), round(iv["share.completed"].mean, 2), iv.values["cycle_time_ms.p50"]
    (['share.completed'], 0.71, [5.0])
    """

    __slots__ = ("values", "replications", "_intervals")

    def __init__(self, values: dict[str, list[float]], replications: int) -> None:
        self.values = values
        self.replications = replications
        self._intervals = {m: t_interval(v) for m, v in values.items() if len(v) >= 2}

    @classmethod
    def from_outcomes(cls, con: duckdb.DuckDBPyConnection, seed: int) -> Intervals:
        """The intervals of the simulation with ``seed`` in ``con`` (its ``outcomes`` table)."""
        rows = con.execute(_PER_REPLICATION, [f"sim-{seed}-"]).fetchall()
        values: dict[str, list[float]] = {m: [] for m in METRICS}
        for row in rows:
            for metric, value in zip(METRICS, row[1:]):
                if value is not None:
                    values[metric].append(float(value))
        return cls(values, len(rows))

    def __getitem__(self, metric: str) -> Interval:
        return self._intervals[metric]

    def __contains__(self, metric: object) -> bool:
        return metric in self._intervals

    def __iter__(self) -> Iterator[str]:
        return iter(self._intervals)

    def __len__(self) -> int:
        return len(self._intervals)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Intervals):
            return NotImplemented
        return (self.values, self.replications) == (other.values, other.replications)

    def __repr__(self) -> str:
        return f"Intervals({self._intervals!r}, replications={self.replications})"

    def keys(self) -> KeysView[str]:
        return self._intervals.keys()

    def items(self) -> ItemsView[str, Interval]:
        """``(metric, Interval)`` pairs."""
        return self._intervals.items()

    def compare(self, other: Intervals) -> dict[str, tuple[Interval, Interval, bool]]:
        """Metric by metric (those both have): ``(ours, theirs, differs)``, where ``differs``
        says the two 95% intervals do not overlap — how ``whatif`` flags a change."""
        return {m: (iv, other[m], not iv.overlaps(other[m])) for m, iv in self.items() if m in other}

    def to_json(self) -> dict[str, Any]:
        """``{metric: {mean, low, high, values}}`` plus ``replications``."""
        return {
            "replications": self.replications,
            "metrics": {m: {**iv._asdict(), "values": self.values[m]} for m, iv in self.items()},
        }

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(metric, mean, low, high) as display strings, in :data:`METRICS` order."""
        out: list[tuple[str, str, str, str]] = []
        for metric, (label, unit) in METRICS.items():
            if metric in self:
                iv = self[metric]
                out.append((label, _format(iv.mean, unit), _format(iv.low, unit), _format(iv.high, unit)))
        return out

    def table(self) -> str:
        """A plain-text table (what ``collab simulate --replications`` prints)."""
        lines = [
            f"95% confidence intervals over {self.replications} replications (t interval)",
            f"  {'metric':<26}{'mean':>12}{'low':>12}{'high':>12}",
        ]
        lines += [f"  {label:<26}{mean:>12}{low:>12}{high:>12}" for label, mean, low, high in self.rows()]
        return "\n".join(lines)

    def markdown(self) -> str:
        """The same as a Markdown table."""
        lines = [f"| metric ({self.replications} replications) | mean | 95% low | 95% high |", "|---|---:|---:|---:|"]
        lines += [f"| {label} | {mean} | {low} | {high} |" for label, mean, low, high in self.rows()]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _format(value: float, unit: str) -> str:
    if unit == "share":
        return f"{value:.1%}"
    if unit == "count":
        return f"{value:.3f}"
    if abs(value) < 1000:
        return f"{value:.0f}ms"
    if abs(value) < 3_600_000:
        return f"{value / 60_000:.1f}min"
    return f"{value / 3_600_000:.2f}h"
