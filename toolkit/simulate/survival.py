"""Censored waits: maximum-likelihood latency fits when some waits were cut short.

A reviewer's wait is *censored* when their step ended without their answer (another
reviewer's decision or a cancellation ended it) or was still open when the log stops: we
only know the answer would have come later, if at all. Calibration estimates the chance to
answer and the wait distribution with the Kaplan–Meier estimator in SQL (the plateau of its
curve is the share that never answers); this module fits the parametric candidates to the
same data by maximum likelihood with a share ``p`` who answer at all (a "cure" model: an
answered wait *t* contributes ``p·f(t)``, a wait cut at *c* contributes ``1 − p·F(c)``).

The answered waits come as sufficient statistics and the censored ones as a grid of their
quantiles with a weight each, so nothing here reads a log's raw rows.

>>> fit_exponential(n=2, total=2.0, censored=[], p0=1.0)   # without censoring: the sample mean
(1.0, 1.0)
>>> theta, p = fit_exponential(n=100, total=100.0, censored=[(50.0, 25.0)], p0=0.9)
>>> round(p, 2)   # a quarter waited 50 times the mean without an answer: they never answer
0.8
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from toolkit.simulate.fitting import normal_cdf

# The floor of log-probabilities, so a wait the model deems impossible costs a lot, not -inf.
_LOG_FLOOR = -745.0


def _log(x: float) -> float:
    return math.log(x) if x > 0 else _LOG_FLOOR


def _share(z: float) -> float:
    return 1 / (1 + math.exp(-z)) if z > -700 else 0.0


def _logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def fit_exponential(
    n: int, total: float, censored: Sequence[tuple[float, float]], p0: float, everyone: bool = False
) -> tuple[float, float]:
    """The maximum-likelihood ``(mean, p)`` of an exponential wait answered by a share ``p``,
    from ``n`` answered waits summing to ``total`` and ``censored`` ``(cut at, weight)``
    pairs; ``p0`` (the Kaplan–Meier plateau) is where the search for ``p`` starts.
    ``everyone``: every wait ends in an answer (``p`` = 1; a blocking agent's resolutions), and
    the mean is the classic censored one, all the time waited over the answers.

    >>> fit_exponential(n=2, total=2.0, censored=[(1.0, 2.0)], p0=1.0, everyone=True)
    (2.0, 1.0)
    """
    if everyone:
        return max((total + sum(c * w for c, w in censored)) / n, 1.0), 1.0
    if not censored:
        return max(total / n, 1.0), 1.0

    def minus_loglik(x: Sequence[float]) -> float:
        theta, p = math.exp(x[0]), _share(x[1])
        out = n * (_log(p) - x[0]) - total / theta
        for c, w in censored:
            out += w * _log(1 - p * (1 - math.exp(-c / theta)))
        return -out

    x = _minimise(minus_loglik, [math.log(max(total / n, 1.0)), _logit(p0)], [0.5, 1.0])
    return math.exp(x[0]), _share(x[1])


def fit_lognormal(
    n: int,
    log_sum: float,
    log_squares: float,
    censored: Sequence[tuple[float, float]],
    p0: float,
    everyone: bool = False,
) -> tuple[float, float, float]:
    """The maximum-likelihood ``(mu, sigma, p)`` of a log-normal wait answered by a share
    ``p``, from ``n`` answered waits (the sums of ``ln t`` and ``ln² t``) and ``censored``
    ``(cut at, weight)`` pairs; ``everyone``: ``p`` is 1 (see :func:`fit_exponential`)."""
    mu0 = log_sum / n
    sigma0 = math.sqrt(max(log_squares / n - mu0 * mu0, 1e-12))
    if not censored:
        return mu0, sigma0, 1.0
    logs = [(math.log(max(c, 1.0)), w) for c, w in censored]
    if everyone:

        def minus_loglik_all(x: Sequence[float]) -> float:
            mu, sigma = x[0], math.exp(x[1])
            out = -n * x[1] - (log_squares - 2 * mu * log_sum + n * mu * mu) / (2 * sigma * sigma)
            for lc, w in logs:
                out += w * _log(1 - normal_cdf((lc - mu) / sigma))
            return -out

        x = _minimise(minus_loglik_all, [mu0, math.log(max(sigma0, 1e-3))], [0.5, 0.3])
        return x[0], math.exp(x[1]), 1.0

    def minus_loglik(x: Sequence[float]) -> float:
        mu, sigma, p = x[0], math.exp(x[1]), _share(x[2])
        out = n * (_log(p) - x[1]) - (log_squares - 2 * mu * log_sum + n * mu * mu) / (2 * sigma * sigma)
        for lc, w in logs:
            out += w * _log(1 - p * normal_cdf((lc - mu) / sigma))
        return -out

    x = _minimise(minus_loglik, [mu0, math.log(max(sigma0, 1e-3)), _logit(p0)], [0.5, 0.3, 1.0])
    return x[0], math.exp(x[1]), _share(x[2])


def _minimise(f: Callable[[Sequence[float]], float], x0: list[float], steps: list[float]) -> list[float]:
    """Nelder–Mead on a smooth function of a few variables (the log-likelihoods here)."""
    simplex = [list(x0)] + [[x + (s if i == j else 0.0) for j, x in enumerate(x0)] for i, s in enumerate(steps)]
    values = [f(x) for x in simplex]
    for _ in range(600):
        order = sorted(range(len(simplex)), key=values.__getitem__)
        simplex, values = [simplex[i] for i in order], [values[i] for i in order]
        if abs(values[-1] - values[0]) < 1e-9 and max(abs(a - b) for a, b in zip(simplex[-1], simplex[0])) < 1e-7:
            break
        centre = [sum(x[j] for x in simplex[:-1]) / (len(simplex) - 1) for j in range(len(x0))]
        worst = simplex[-1]
        reflected = [c + (c - w) for c, w in zip(centre, worst)]
        fr = f(reflected)
        if fr < values[0]:
            expanded = [c + 2 * (c - w) for c, w in zip(centre, worst)]
            fe = f(expanded)
            simplex[-1], values[-1] = (expanded, fe) if fe < fr else (reflected, fr)
        elif fr < values[-2]:
            simplex[-1], values[-1] = reflected, fr
        else:
            contracted = [c + 0.5 * (w - c) for c, w in zip(centre, worst)]
            fc = f(contracted)
            if fc < values[-1]:
                simplex[-1], values[-1] = contracted, fc
            else:
                best = simplex[0]
                simplex = [best] + [[b + 0.5 * (x - b) for b, x in zip(best, s)] for s in simplex[1:]]
                values = [values[0]] + [f(x) for x in simplex[1:]]
    return simplex[min(range(len(simplex)), key=values.__getitem__)]
