"""Fitting helpers for calibration: intervals and latency distributions from SQL aggregates.

Everything here works on numbers DuckDB already aggregated (counts, means of logs, a grid of
quantiles), so calibration never pulls a log's raw rows into Python.

>>> low, high = wilson(80, 100)
>>> round(low, 3), round(high, 3)
(0.711, 0.867)
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054
# Below this many observations a latency or a chance is not fitted: the policy keeps the default.
MIN_SAMPLES = 20
# Quantiles fetched per latency sample: the KS distance is measured on them, and they are the
# empirical distribution written to the policy.
GRID = 200


def wilson(successes: float, n: float) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound near 0 and 1, unlike the Wald one)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denom
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denom
    # At 0 and n successes the bounds are exactly 0 and 1; rounding must not move them.
    return (0.0 if successes == 0 else max(0.0, centre - half)), (1.0 if successes == n else min(1.0, centre + half))


def median_ranks(n: int) -> tuple[float, float]:
    """The quantile levels whose order statistics bound a distribution-free 95% interval of the
    median (binomial order-statistic interval, normal approximation): ``½ ∓ 1.96·√n / (2n)``."""
    half = Z95 * math.sqrt(n) / (2 * n) if n else 0.5
    return max(0.0, 0.5 - half), min(1.0, 0.5 + half)


def chance(successes: int, n: int) -> dict:
    """A share with its Wilson interval and the counts behind it, as the report gives it."""
    low, high = wilson(successes, n)
    return {"value": successes / n if n else None, "low": low, "high": high, "n": n, "successes": successes}


def at_level(grid: list[float], level: float) -> float:
    """The quantile at ``level`` interpolated on the grid of levels ``(i + ½) / len(grid)``.

    >>> at_level([10.0, 20.0], 0.5)
    15.0
    """
    k = len(grid)
    pos = min(max(level * k - 0.5, 0.0), k - 1.0)
    i = int(math.floor(pos))
    j = min(i + 1, k - 1)
    return grid[i] + (grid[j] - grid[i]) * (pos - i)


def normal_cdf(x: float) -> float:
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def ks_distance(grid: list[float], cdf) -> float:
    """Kolmogorov–Smirnov distance between a sample (given by its quantiles at levels
    ``(i + ½) / len(grid)``) and ``cdf``; within ``1 / len(grid)`` of the exact figure."""
    k = len(grid)
    return max(0.0, max(abs(cdf(x) - (i + 0.5) / k) for i, x in enumerate(grid)) - 0.5 / k) if k else 1.0


def fit_latency(
    n: int, mean: float, log_mean: float, log_sd: float, grid: list[float], distinct: int
) -> tuple[dict, dict]:
    """Choose a latency distribution for a sample: ``(policy distribution, report)``.

    Candidates: exponential (maximum likelihood: the mean), log-normal (the mean and standard
    deviation of ``ln(max(x, 1 ms))``) and the empirical distribution (the ``grid`` quantiles).
    The parametric fit with the lower KS distance is chosen unless the sample rejects it too
    (KS distance above the 5% critical value ``1.36 / √n`` plus the grid's resolution
    ``1 / GRID``, as the distance is measured on the quantile grid): then the empirical one. A sample
    of one value is that value, fixed.
    """
    report: dict[str, object] = {"n": n, "meanMs": mean}
    if distinct <= 1:
        value = int(round(grid[0])) if grid else 0
        report.update(chosen="fixed", ks={})
        return {"fixed": value}, report
    exp_mean = max(mean, 1.0)
    sigma = max(log_sd or 0.0, 1e-6)
    ks = {
        "exponential": ks_distance(grid, lambda x: 1 - math.exp(-max(x, 0) / exp_mean)),
        "lognormal": ks_distance(grid, lambda x: normal_cdf((math.log(max(x, 1.0)) - log_mean) / sigma)),
    }
    critical = 1.36 / math.sqrt(n) + 1 / GRID
    best = min(ks, key=ks.__getitem__)
    chosen = best if ks[best] <= critical else "empirical"
    report.update(ks={k: round(v, 4) for k, v in ks.items()}, ksCritical=round(critical, 4), chosen=chosen)
    return latency_policy(chosen, exp_mean, log_mean, sigma, grid), report


def latency_policy(chosen: str, exp_mean: float, log_mean: float, sigma: float, grid: list[float]) -> dict:
    """The policy's ``latencyMs`` for the chosen model (``exponential``, ``lognormal`` or the
    ``empirical`` grid of quantiles)."""
    if chosen == "exponential":
        return {"exponential": round(exp_mean, 1)}
    if chosen == "lognormal":
        return {"lognormal": {"medianMs": round(math.exp(log_mean), 1), "sigma": round(min(sigma, 5.0), 4)}}
    return {"empirical": [int(round(x)) for x in grid]}
