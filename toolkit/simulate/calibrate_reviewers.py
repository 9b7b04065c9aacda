"""Calibration of reviewers: approve and respond chances and latency, with censored waits.

Every human step of a node where a reviewer decides at least once is an observation of
their wait: answered (their decision came ``t`` after the step started) or censored (the
step ended without their answer — another reviewer's decision, a quorum, a cancellation —
or was still waiting when the log ends, at its last event: we only know the wait was longer
than ``c``). DuckDB computes the Kaplan–Meier estimate of the wait per reviewer. Its plateau
is the share who never answer, so the chance to respond is ``1 − S(τ)`` at the longest
answered wait ``τ``: a censored step counts neither as a response nor as a non-response; a
step left waiting longer than anyone ever took weighs as a non-response. The empirical
distribution is the Kaplan–Meier curve given an answer, read on a grid of quantiles; the
median's interval is where the curve's 95% Greenwood band crosses ½; exponential and
log-normal are fitted by censored maximum likelihood (:mod:`.survival`). Under a fitted
calendar, waits are counted in working time.
"""

from __future__ import annotations

import math

from toolkit.simulate.calibrate_calendars import working_ms
from toolkit.simulate.fitting import GRID, MIN_SAMPLES, Z95, at_level, chance, latency_policy, normal_cdf, wilson
from toolkit.simulate.survival import fit_exponential, fit_lognormal

# The Kaplan–Meier curve is read at this many levels (finer than the quantile grid).
_CURVE_POINTS = 2000


def fit_reviewers(con, scope: str, calendars: dict, report: dict) -> dict:
    """The reviewers' part of the policy; their rows go to ``report["reviewers"]``."""
    log_end = con.execute("SELECT max(timestamp) FROM events").fetchone()[0]
    cases = " ".join(
        f"WHEN reviewer_id = '{who.replace(chr(39), chr(39) * 2)}' THEN "
        f"{working_ms('ended_at', c)} - {working_ms('awaiting_at', c)}"
        for who, c in calendars.items()
    )
    value = f"CASE {cases} ELSE ended_at - awaiting_at END" if cases else "ended_at - awaiting_at"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE _cal_obs AS SELECT reviewer_id, {value} AS v, e FROM ("
        "SELECT reviewer_id, awaiting_at, decided_at AS ended_at, 1 AS e FROM _cal_r UNION ALL "
        "SELECT n.reviewer_id, s.started_at, coalesce(s.completed_at, $end), 0 FROM steps s "
        f"{scope.format(t='s')} JOIN (SELECT DISTINCT reviewer_id, node_id FROM _cal_r) n ON n.node_id = s.node_id "
        "ANTI JOIN _cal_r r ON r.k = hash(s.execution_id, s.step_id) "
        "AND r.reviewer_id = n.reviewer_id WHERE s.node_type = 'human' AND s.started_at IS NOT NULL)",
        {"end": log_end},
    )
    summary, curves = kaplan_meier(con, "_cal_obs", "reviewer_id")
    stats = wait_stats(con, "_cal_obs", "reviewer_id")
    approvals = dict(
        con.execute(
            "SELECT reviewer_id, count(*) FILTER (WHERE decision = 'approve') FROM _cal_r GROUP BY 1"
        ).fetchall()
    )
    policy, rows = {}, {}
    for who in sorted(stats):
        n, total, log_sum, log_squares, distinct, censored, censored_grid = stats[who]
        s_end, g_end, cut_short, waited_past, tau = summary[who]
        row: dict = {
            "approve": chance(approvals.get(who, 0), n),
            "respond": None,
            "latency": None,
            "latencyClock": "working time" if who in calendars else "wall-clock",
        }
        rows[who] = row
        variance = s_end * s_end * g_end
        if n < MIN_SAMPLES:
            row["respond"] = _respond(n, 1 - s_end, s_end, variance, cut_short or 0, waited_past or 0)
            report["fallbacks"].append(f"reviewer {who}: {n} decisions (< {MIN_SAMPLES}), defaults kept")
            continue
        weights = [(c, censored / GRID) for c in censored_grid] if censored else []
        distribution, rep, respond = choose_latency(
            n,
            distinct,
            curves[who],
            1 - s_end,
            fit_exponential(n, total, weights, 1 - s_end),
            fit_lognormal(n, log_sum, log_squares, weights, 1 - s_end),
            tau,
        )
        rep.update(censored=censored, estimator="kaplan-meier")
        row["latency"] = rep
        row["respond"] = _respond(n, respond, s_end, variance, cut_short or 0, waited_past or 0)
        policy[who] = {
            "approve": round(approvals.get(who, 0) / n, 4),
            "respond": round(respond, 4),
            "latencyMs": distribution,
        }
    report["reviewers"] = rows
    return policy


def wait_stats(con, obs: str, key: str) -> dict:
    """Per ``key`` of table ``obs`` (as for :func:`kaplan_meier`): the answered waits' count,
    sum, sum of logs and of squared logs and distinct values; the censored waits' count and
    their quantiles on the grid (what :mod:`.survival` fits from)."""
    levels = [(i + 0.5) / GRID for i in range(GRID)]
    return {
        row[0]: row[1:]
        for row in con.execute(
            f"SELECT {key}, count(*) FILTER (WHERE e = 1), sum(v) FILTER (WHERE e = 1), "
            "sum(ln(greatest(v, 1))) FILTER (WHERE e = 1), sum(ln(greatest(v, 1)) ^ 2) FILTER (WHERE e = 1), "
            "count(DISTINCT v) FILTER (WHERE e = 1), count(*) FILTER (WHERE e = 0), "
            f"quantile_cont(v, {levels}) FILTER (WHERE e = 0) FROM {obs} GROUP BY 1"
        ).fetchall()
    }


def kaplan_meier(con, obs: str, key: str) -> tuple[dict, dict]:
    """The Kaplan–Meier estimate of the waits in table ``obs`` (columns ``key``, ``v`` the wait,
    ``e`` 1 if answered, 0 if censored), per ``key``, kept in the temp table ``_cal_km``.

    Returns ``(summary, curves)``: per key, ``(S at the end, Greenwood's sum there, censored
    before the longest answer, censored after it, the longest answer τ)``, and the curve read
    at a fine grid of its levels as ``(wait, share answered by then, its standard error)``."""
    # Over the distinct waits: s is the chance to be still waiting after v and g Greenwood's
    # sum (s·√g is the standard error of s).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_km AS SELECT *, min(s) OVER k AS s_end, max(g) OVER k AS g_end, "
        f"max(v) FILTER (WHERE d > 0) OVER k AS tau FROM (SELECT {key}, v, d, m, "
        "CASE WHEN bool_or(d >= n) OVER w THEN 0.0 ELSE exp(sum(ln(1 - d / n)) OVER w) END AS s, "
        "sum(CASE WHEN d < n THEN d / (n * (n - d)) ELSE 0 END) OVER w AS g "
        f"FROM (SELECT *, sum(m) OVER (PARTITION BY {key} ORDER BY v DESC) AS n "
        f"FROM (SELECT {key}, v, sum(e) AS d, count(*) AS m FROM {obs} GROUP BY ALL)) "
        f"WINDOW w AS (PARTITION BY {key} ORDER BY v)) WINDOW k AS (PARTITION BY {key})"
    )
    summary = {
        row[0]: row[1:]
        for row in con.execute(
            f"SELECT {key}, any_value(s_end), any_value(g_end), sum(m - d) FILTER (WHERE v < tau), "
            "sum(m - d) FILTER (WHERE v > tau), max(tau) FROM _cal_km GROUP BY 1"
        ).fetchall()
    }
    # The curve read at a fine grid of its levels: the first answered wait reaching each.
    curves: dict[str, list[tuple[float, float, float]]] = {}
    for who, v, answered, se in con.execute(
        f"SELECT {key}, min(v), min(1 - s), arg_min(s * sqrt(g), v) FROM _cal_km WHERE d > 0 "
        f"GROUP BY {key}, floor((1 - s) * {_CURVE_POINTS}) ORDER BY 1, 2"
    ).fetchall():
        curves.setdefault(who, []).append((float(v), answered, se))
    return summary, curves


def choose_latency(n, distinct, curve, plateau, exponential, lognormal, tau) -> tuple[dict, dict, float]:
    """``(latencyMs, report, chance to respond)``: the model with the lower KS distance to the
    Kaplan–Meier curve (both read as the share answered by each wait), unless the KS test
    rejects it too: then the curve itself, given an answer, and its plateau."""
    theta, p_exp = exponential
    mu, sigma, p_log = lognormal
    sigma = max(sigma, 1e-6)
    models = {
        "exponential": (p_exp, lambda x: 1 - math.exp(-max(x, 0) / theta)),
        "lognormal": (p_log, lambda x: normal_cdf((math.log(max(x, 1.0)) - mu) / sigma)),
    }
    ks = {k: max(abs(p * cdf(v) - answered) for v, answered, _ in curve) for k, (p, cdf) in models.items()}
    critical = 1.36 / math.sqrt(n) + 1 / GRID
    best = min(ks, key=ks.__getitem__)
    chosen = "fixed" if distinct <= 1 else best if ks[best] <= critical else "empirical"
    respond = models[best][0] if chosen in models else plateau
    grid = [_first(curve, (i + 0.5) / GRID * respond, tau) for i in range(GRID)]
    report = {
        "n": n,
        "meanMs": theta,
        "ks": {k: round(v, 4) for k, v in ks.items()},
        "ksCritical": round(critical, 4),
        "chosen": chosen,
        "medianMs": at_level(grid, 0.5),
        "medianLow": _first(curve, 0.5 * respond, tau, -Z95),
        "medianHigh": _first(curve, 0.5 * respond, tau, Z95),
    }
    if chosen == "fixed":
        return {"fixed": int(round(grid[0]))}, report, respond
    return latency_policy(chosen, theta, mu, sigma, grid), report, respond


def _first(curve: list[tuple[float, float, float]], share: float, tau: float, z: float = 0.0) -> float:
    """The first wait where the curve (shifted by ``z`` standard errors) reaches ``share``;
    the longest answered wait when it never does."""
    return next((v for v, answered, se in curve if answered - z * se >= share - 1e-12), tau)


def _respond(answered: int, value: float, s_end: float, variance: float, cut_short: int, waited_past: int) -> dict:
    """The chance to respond with a Wilson interval on the Kaplan–Meier plateau's effective
    sample size (from its Greenwood variance); without censoring that is the plain share."""
    effective = s_end * (1 - s_end) / variance if variance > 0 and 0 < s_end < 1 else answered + waited_past
    low, high = wilson(value * effective, effective) if effective > 0 else (0.0, 1.0)
    if math.isclose(value, 1.0):
        high = 1.0
    return {
        "value": value,
        "low": low,
        "high": high,
        "n": answered + cut_short + waited_past,
        "successes": answered,
        "censored": cut_short,
        "waitedPastLongestAnswer": waited_past,
        "effectiveN": round(effective, 1),
    }
