"""Calibration: fit a simulation policy to a recorded event log (``collab calibrate``).

``calibrate(source, definition_id)`` reads a server's database, its Parquet mirror or a
simulation's database — the executions, steps and events every source has, as the analytics
views do (the reviewer decisions are the ``reviewer_latency`` view's rows, computed in one pass
over the response events) — and fits what the policy format (:mod:`.policy`) can say:

* per reviewer: the chance to approve (approvals / decisions), and the chance to respond with
  the latency distribution, where a review cut short (a quorum, a cancellation, still waiting
  when the log ends) is a censored wait (:mod:`.calibrate_reviewers`);
* per agent node: the failure rate, the output mix (the 10 most frequent outputs) and latency;
* per blocking-agent node: resolution success and approve chances, and latency, where a
  resolution a step did not wait for (it resolved or failed first, or was still waiting when
  the log ends) is a censored wait; how many each step expected comes from the definition
  (given, or the latest body in a server's log), else the most any step recorded;
* the arrival process: ``startAt`` (the first dispatch) and ``arrivalIntervalMs`` (the mean
  spacing of dispatches);
* calendars: a reviewer's working hours with breaks, weekdays, UTC offset and holidays from
  when they act (from 50 actions spread over at least a week; :mod:`.calibrate_calendars`).

Every figure in ``Calibration.report`` comes with the count behind it and a 95% interval (Wilson
for chances, Greenwood's for the median waits of reviewers and resolutions, the
distribution-free order-statistic interval for other latency medians); anything
with fewer than :data:`~.fitting.MIN_SAMPLES` observations is not fitted and listed under
``fallbacks`` (the policy keeps the simulator's default). All aggregation runs in DuckDB.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from toolkit.simulate.calibrate_calendars import fit_calendars
from toolkit.simulate.calibrate_reviewers import choose_latency, fit_reviewers, kaplan_meier, wait_stats
from toolkit.simulate.fitting import GRID, MIN_SAMPLES, at_level, chance, fit_latency, median_ranks
from toolkit.simulate.survival import fit_exponential, fit_lognormal

if TYPE_CHECKING:
    from toolkit.analytics.mirror import MirrorConnection

__all__ = ["Calibration", "calibrate", "open_source"]

_TOP_OUTPUTS = 10


@dataclass
class Calibration:
    """A fitted ``policy`` (a dict in the simulator's policy format: ``collab simulate
    --policy`` runs it as it is) and the ``report`` behind it."""

    policy: dict
    report: dict

    def to_json(self) -> dict:
        return {"policy": self.policy, "report": self.report}

    def table(self) -> str:
        """The report as plain text: one line per fitted figure with its count and interval."""
        r = self.report
        lines = [
            f"calibrated {r['definitionId']} from {r['executions']} executions "
            f"({r['window']['since']} .. {r['window']['until']})",
            f"latency criterion: {r['latencyCriterion']}",
        ]
        for who, row in r["reviewers"].items():
            a, s = row["approve"], row["respond"]
            lines.append(f"  reviewer {who}: approve {_pct(a)}  respond {_pct(s)}  latency {_latency(row['latency'])}")
        for node, row in r["agents"].items():
            lines.append(
                f"  agent {node}: fail {_pct(row['fail'])}  outputs {row['outputs']['distinct']}  "
                f"latency {_latency(row['latency'])}"
            )
        for node, row in r["resolutions"].items():
            lines.append(
                f"  resolutions {node}: success {_pct(row['success'])}  approve {_pct(row['approve'])}  "
                f"latency {_latency(row['latency'])}"
            )
        for who, row in r["calendars"].items():
            lines.append(
                f"  calendar {who}: {row['weekdays']} {row['hours']} {row['timeZone']} (n={row['n']}, "
                f"first action {row['earliestHour']:.2f}h, last {row['latestHour']:.2f}h local)"
            )
            for gap in row["breaks"]:
                lines.append(f"    break {gap['hours']}: 0 actions where {gap['expected']:.0f} were expected")
            for day in row["holidayEvidence"]:
                lines.append(
                    f"    holiday {day['date']}: 0 actions; the 10 nearest working days had "
                    f"{day['neighbourMin']}+ (median {day['expected']:g})"
                )
        arr = r["arrivals"]
        lines.append(f"  arrivals: every {arr['arrivalIntervalMs']} ms from {arr['startAt']} (n={arr['n']})")
        for item in r["fallbacks"]:
            lines.append(f"  default kept: {item}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


def _pct(figure: dict | None) -> str:
    if not figure:
        return "-"
    censored = f", {figure['censored']} cut short" if figure.get("censored") else ""
    return f"{figure['value']:.1%} [{figure['low']:.1%}, {figure['high']:.1%}] (n={figure['n']}{censored})"


def _latency(figure: dict | None) -> str:
    if not figure:
        return "-"
    return (
        f"{figure['chosen']} median {figure['medianMs']:.0f} ms "
        f"[{figure['medianLow']:.0f}, {figure['medianHigh']:.0f}] (n={figure['n']})"
    )


def open_source(source) -> duckdb.DuckDBPyConnection | MirrorConnection:
    """A connection with the analytics views: a DuckDB file (a server's or a simulation's),
    a Parquet mirror folder, a connection, or a :class:`SimulationResult`."""
    from toolkit.analytics import attach, open_db, open_mirror

    con = getattr(source, "con", source)
    if isinstance(con, duckdb.DuckDBPyConnection):
        return attach(con)
    path = Path(source)
    return open_mirror(path) if path.is_dir() else open_db(path)


def _one_row(con: duckdb.DuckDBPyConnection | MirrorConnection, sql: str) -> tuple:
    row = con.execute(sql).fetchone()
    assert row is not None  # an aggregate without GROUP BY always answers one row
    return row


def _ms(value) -> int | None:
    """Epoch ms from ms, an ISO 8601 string or a datetime (None stays None)."""
    if value is None or isinstance(value, int):
        return value
    moment = value if isinstance(value, dt.datetime) else dt.datetime.fromisoformat(str(value))
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return int(moment.timestamp() * 1000)


def _iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).isoformat().replace("+00:00", "Z")


def calibrate(source, definition_id: str, since=None, until=None, definition=None) -> Calibration:
    """Fit a policy to the executions of ``definition_id`` recorded in ``source`` (see the
    module docstring), dispatched in ``[since, until)`` (epoch ms or ISO 8601; default all).
    ``definition`` (a create body, a :class:`~toolkit.model.Definition` or a Plan) says how many
    resolutions each blocking agent step expects; without it a server's log is read for it.
    ``LookupError`` when no execution of the definition is in the window."""
    con = open_source(source)
    since_ms, until_ms = _ms(since), _ms(until)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_x AS SELECT execution_id, started_at FROM executions "
        "WHERE definition_id = $d AND ($s IS NULL OR started_at >= $s) AND ($u IS NULL OR started_at < $u)",
        {"d": definition_id, "s": since_ms, "u": until_ms},
    )
    n, first, last = _one_row(con, "SELECT count(*), min(started_at), max(started_at) FROM _cal_x")
    if not n:
        raise LookupError(
            f"no execution of definition {definition_id!r} in the log"
            + (" in the given window" if since_ms is not None or until_ms is not None else "")
        )
    # Scoping every read to the definition's executions costs a join per table: skip it when
    # the log holds nothing else.
    whole = since_ms is None and until_ms is None and n == _one_row(con, "SELECT count(*) FROM executions")[0]
    scope = "" if whole else "SEMI JOIN _cal_x x ON x.execution_id = {t}.execution_id"
    _prepare(con, scope)
    policy: dict = {"startAt": _iso(first)}
    report: dict = {
        "definitionId": definition_id,
        "executions": n,
        "window": {
            "since": _iso(since_ms) if since_ms is not None else _iso(first),
            "until": _iso(until_ms) if until_ms is not None else _iso(last),
        },
        "latencyCriterion": "the lower Kolmogorov-Smirnov distance of exponential and log-normal "
        "(maximum-likelihood fits); the empirical distribution when the KS test "
        "rejects both at 5% (distance > 1.36/sqrt(n) + 1/200, the quantile "
        "grid's resolution)",
        "fallbacks": [],
    }
    calendars = fit_calendars(con, report)
    report["calendars"] = calendars
    if calendars:
        policy["calendars"] = {who: _calendar_policy(c) for who, c in calendars.items()}
    policy["reviewers"] = fit_reviewers(con, scope, calendars, report)
    agents, resolutions = _agents(con, report), _resolutions(con, scope, definition_id, definition, report)
    if agents:
        policy["agents"] = agents
    if resolutions:
        policy["resolutions"] = resolutions
    interval = round((last - first) / (n - 1)) if n > 1 else 0
    report["arrivals"] = {"n": n, "startAt": _iso(first), "arrivalIntervalMs": interval}
    if n > 1:
        policy["arrivalIntervalMs"] = interval
    else:
        report["fallbacks"].append("arrivalIntervalMs: one execution, default spacing kept")
    return Calibration(policy, report)


def _calendar_policy(fitted: dict) -> dict:
    out = {"timeZone": fitted["timeZone"], "weekdays": fitted["weekdays"], "hours": fitted["hours"]}
    if fitted["holidays"]:
        out["holidays"] = fitted["holidays"]
    return out


def _prepare(con, scope: str) -> None:
    """What calibration reads, each read from the log once: response events with their fields
    extracted (``_cal_ev``), reviewer decisions (``_cal_r``: the rows of the ``reviewer_latency``
    view), blocking-agent resolutions (``_cal_blocking``) and a view of the ended non-blocking
    agent steps (``_cal_a``). A waiting step awaits from the moment it starts (the engine logs
    ``step.awaiting-approval`` with its start, on a server as in the simulator), so latencies
    run from the step's ``started_at``: no second pass over the events for the waiting ones."""
    # One JSON parse per response for its three fields; the step is keyed by one 64-bit hash of
    # its execution and step ids: joining on that integer instead of two strings is the cheaper
    # join that pays for the censored fit on the 10M-event log (a collision among a log's few
    # million steps is about as likely as 1 in 10^7, and would misplace one response).
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_ev AS SELECT k, timestamp, "
        "f[1] AS reviewer_id, f[2] AS decision, f[3] AS status FROM (SELECT hash(e.execution_id, e.step_id) AS k, "
        "e.timestamp, json_extract_string(e.data, ['$.reviewerId', '$.decision', '$.status']) AS f "
        f"FROM events e {scope.format(t='e')} WHERE e.type = 'step.response-recorded')"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_r AS SELECT d.reviewer_id, s.node_id, d.k, "
        "d.decision, s.started_at AS awaiting_at, d.timestamp AS decided_at "
        "FROM _cal_ev d JOIN steps s ON hash(s.execution_id, s.step_id) = d.k "
        "WHERE d.reviewer_id IS NOT NULL AND s.node_type = 'human'"
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_blocking AS SELECT d.k, s.node_id, "
        "d.timestamp - s.started_at AS latency_ms, d.status, s.output "
        "FROM _cal_ev d JOIN steps s ON hash(s.execution_id, s.step_id) = d.k "
        "WHERE d.reviewer_id IS NULL AND s.node_type = 'agent'"
    )
    con.execute(
        "CREATE OR REPLACE TEMP VIEW _cal_a AS SELECT s.node_id, s.status, s.output, "
        f"s.completed_at - s.started_at AS duration_ms FROM steps s {scope.format(t='s')} "
        "WHERE s.node_type = 'agent' AND s.status IN ('completed', 'failed') "
        "AND s.node_id NOT IN (SELECT node_id FROM _cal_blocking)"
    )


def _latency_fit(con, table_sql: str, value_sql: str, key_sql: str, params=None) -> dict:
    """Per key: ``(distribution, report)`` of the latencies ``value_sql`` in ``table_sql``."""
    levels = [(i + 0.5) / GRID for i in range(GRID)]
    rows = con.execute(
        f"SELECT {key_sql} AS k, count(*), avg(v), avg(ln(greatest(v, 1))), stddev_samp(ln(greatest(v, 1))), "
        f"quantile_cont(v, {levels}), count(DISTINCT v) "
        f"FROM (SELECT *, {value_sql} AS v FROM {table_sql}) WHERE v IS NOT NULL GROUP BY ALL",
        params,
    ).fetchall()
    out = {}
    for key, n, mean, log_mean, log_sd, grid, distinct in rows:
        distribution, rep = fit_latency(n, mean, log_mean, log_sd or 0.0, list(grid), distinct)
        lo, hi = median_ranks(n)
        rep.update(medianMs=at_level(grid, 0.5), medianLow=at_level(grid, lo), medianHigh=at_level(grid, hi))
        out[key] = (distribution, rep)
    return out


def _agents(con, report) -> dict:
    """Non-blocking agent nodes: failure rate, output mix and latency (keyed by node id)."""
    counts = con.execute(
        "SELECT node_id, count(*), count(*) FILTER (WHERE status = 'failed') FROM _cal_a GROUP BY 1 ORDER BY 1"
    ).fetchall()
    outputs: dict[str, list] = {}
    distinct: dict[str, int] = {}
    # One grouping pass over the agent steps gives both the top outputs and how many there are.
    for node, output, count, kinds in con.execute(
        "SELECT node_id, output, c, count(*) OVER (PARTITION BY node_id) FROM (SELECT node_id, output, "
        "count(*) AS c FROM _cal_a WHERE status = 'completed' GROUP BY node_id, output) "
        f"QUALIFY row_number() OVER (PARTITION BY node_id ORDER BY c DESC, output) <= {_TOP_OUTPUTS}"
    ).fetchall():
        distinct[node] = kinds
        outputs.setdefault(node, []).append((count, output))
    latencies = _latency_fit(con, "_cal_a", "duration_ms", "node_id")
    policy, rows = {}, {}
    for node, n, failed in counts:
        completed = sorted(outputs.get(node, []), key=lambda o: (-o[0], o[1]))
        row = {
            "fail": chance(failed, n),
            "latency": None,
            "outputs": {
                "distinct": distinct.get(node, 0),
                "kept": len(completed),
                "shares": [
                    {"p": c / max(1, n - failed), "n": c, "output": json.loads(o or "{}")} for c, o in completed
                ],
            },
        }
        rows[node] = row
        if n < MIN_SAMPLES:
            report["fallbacks"].append(f"agent {node}: {n} steps (< {MIN_SAMPLES}), defaults kept")
            continue
        distribution, rep = latencies[node]
        row["latency"] = rep
        entry = {"fail": round(failed / n, 4), "latencyMs": distribution}
        if completed:
            entry["outputs"] = [
                {"p": round(c / max(1, n - failed), 6), "output": json.loads(o or "{}")} for c, o in completed
            ]
        policy[node] = entry
    report["agents"] = rows
    return policy


def _expected_resolutions(con, definition_id: str, definition) -> dict[str, tuple[int, str]]:
    """Per blocking-agent node: how many resolutions a step expects, and where that was read
    (``definition``, else the latest recorded body, else the most any step of it recorded)."""
    from toolkit.simulate import to_plan  # the package imports this module
    from toolkit.simulate.whatif import stored_definition

    source = "definition"
    if definition is None:
        try:
            definition, source = stored_definition(con, definition_id), "the latest recorded version"
        except LookupError:
            definition = None
    if definition is not None:
        plan = to_plan(definition)
        return {n.node_id: (n.expected, source) for n in plan.nodes.values() if n.blocking and n.expected}
    rows = con.execute(
        "SELECT node_id, max(c) FROM (SELECT node_id, k, count(*) AS c FROM _cal_blocking GROUP BY ALL) GROUP BY 1"
    ).fetchall()
    return {node: (c, "the most any step recorded (a lower bound)") for node, c in rows}


def _resolutions(con, scope: str, definition_id: str, definition, report) -> dict:
    """Blocking-agent nodes: resolution success and approve chances and latency (by node id).

    Every resolution a step expected is one wait: recorded (from the step's start to its
    response), or censored where the step ended without it or the log ends; the latency is
    fitted as a reviewer's is (:mod:`.calibrate_reviewers`), except that every resolution is
    taken to arrive in the end (the policy has no chance for it not to)."""
    counts = con.execute(
        "SELECT node_id, count(*), count(*) FILTER (WHERE status = 'success') FROM _cal_blocking GROUP BY 1 ORDER BY 1"
    ).fetchall()
    if not counts:
        report["resolutions"] = {}
        return {}
    expected = _expected_resolutions(con, definition_id, definition)
    approvals = dict(
        (node, (n, a))
        for node, n, a in con.execute(
            "SELECT node_id, count(*), count(*) FILTER (WHERE d = 'approve') "
            "FROM (SELECT DISTINCT k, node_id, output FROM _cal_blocking), "
            "unnest(CAST(json_extract(output, '$.resolutions[*].output.decision') AS VARCHAR[])) AS t(d) "
            "GROUP BY 1"
        ).fetchall()
    )
    log_end = con.execute("SELECT max(timestamp) FROM events").fetchone()[0]
    nodes = sorted(expected)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_expected AS SELECT unnest($n::VARCHAR[]) AS node_id, "
        "unnest($e::INTEGER[]) AS expected",
        {"n": nodes, "e": [expected[n][0] for n in nodes]},
    )
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _cal_bobs AS "
        "SELECT node_id, latency_ms AS v, 1 AS e FROM _cal_blocking UNION ALL "
        "SELECT s.node_id, coalesce(s.completed_at, $end) - s.started_at, 0 "
        f"FROM steps s {scope.format(t='s')} JOIN _cal_expected x ON x.node_id = s.node_id "
        "LEFT JOIN (SELECT k, count(*) AS c FROM _cal_blocking GROUP BY k) r ON r.k = hash(s.execution_id, s.step_id), "
        "range(greatest(x.expected - coalesce(r.c, 0), 0)) "
        "WHERE s.node_type = 'agent' AND s.started_at IS NOT NULL",
        {"end": log_end},
    )
    summary, curves = kaplan_meier(con, "_cal_bobs", "node_id")
    stats = wait_stats(con, "_cal_bobs", "node_id")
    policy, rows = {}, {}
    for node, n, successes in counts:
        an, aa = approvals.get(node, (0, 0))
        row = {"success": chance(successes, n), "approve": chance(aa, an) if an else None, "latency": None}
        rows[node] = row
        if n < MIN_SAMPLES:
            report["fallbacks"].append(f"resolutions of {node}: {n} recorded (< {MIN_SAMPLES}), defaults kept")
            continue
        answered, total, log_sum, log_squares, distinct, censored, censored_grid = stats[node]
        s_end, _, _, _, tau = summary[node]
        weights = [(c, censored / GRID) for c in censored_grid] if censored else []
        distribution, rep, _ = choose_latency(
            answered,
            distinct,
            curves[node],
            1 - s_end,
            fit_exponential(answered, total, weights, 1.0, everyone=True),
            fit_lognormal(answered, log_sum, log_squares, weights, 1.0, everyone=True),
            tau,
        )
        times, source = expected.get(node, (None, "not known"))
        rep.update(censored=censored, estimator="kaplan-meier", expectedResolutions=times, expectedFrom=source)
        row["latency"] = rep
        entry = {"success": round(successes / n, 4), "latencyMs": distribution}
        if an >= MIN_SAMPLES:
            entry["approve"] = round(aa / an, 4)
        policy[node] = entry
    report["resolutions"] = rows
    return policy
