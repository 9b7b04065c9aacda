"""Exports of an event log: Parquet, CSV, Arrow/pandas, XES and OCEL 2.0 JSON (semantics §12).

Every export takes a connection holding executions, steps and events (a simulation's
database, a server's file, a mirror) and a selection — one execution, every execution of
one definition, or everything:

* :func:`event_table` — the raw log as an Arrow table, one row per event (internal events
  included) with its execution's definition and its step's node; ``to="parquet"|"csv"``
  writes exactly that.
* :func:`step_log` — the process-mining view as pandas, in pm4py's column names: one row per
  step *start* and one per step *end* (``lifecycle:transition`` ``start`` / ``complete``),
  activity = node id, case = execution; ``to="xes"`` writes exactly that (XES 1.0, readable
  by ``pm4py.read_xes``, ProM, Disco).
* ``to="ocel"`` writes an OCEL 2.0 JSON log (``pm4py.read_ocel2_json``): every engine event,
  related to its ``execution``, its ``step`` and the ``user`` (reviewer or actor) it names.

Within a case, entries are ordered by time; at equal times a step's start comes before its
end, and steps in the order of the ``step_transitions`` view (start, end, node id, step id) —
so pm4py's directly-follows graph of the ``start`` rows is the ``directly_follows`` view.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from xml.sax.saxutils import quoteattr

import duckdb

from toolkit.analytics.views import to_arrow

__all__ = ["FORMATS", "export", "event_table", "step_log", "write_xes", "write_ocel", "iso"]

FORMATS = ("parquet", "csv", "ocel", "xes")


def iso(ms: int) -> str:
    """Epoch milliseconds as ISO 8601 UTC with milliseconds (``2026-01-01T00:00:00.000+00:00``)."""
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def _selected(con: duckdb.DuckDBPyConnection, execution_id: str | None, definition_id: str | None) -> str:
    """Create the temp table ``_export_selection`` (execution ids, definition) and return its name;
    ``LookupError`` when nothing matches."""
    con.execute(
        "CREATE OR REPLACE TEMP TABLE _export_selection AS "
        "SELECT execution_id, definition_id, definition_version, status, failure_reason, correlation_id, "
        "started_at, completed_at, cancelled_at FROM executions "
        "WHERE ($eid IS NULL OR execution_id = $eid) AND ($did IS NULL OR definition_id = $did)",
        {"eid": execution_id, "did": definition_id},
    )
    n = con.execute("SELECT count(*) FROM _export_selection").fetchall()[0][0]
    if n == 0:
        what = (
            f"execution {execution_id}"
            if execution_id is not None
            else f"definition {definition_id}"
            if definition_id is not None
            else "the log"
        )
        raise LookupError(f"no executions of {what}")
    return "_export_selection"


_EVENTS = """
SELECT e.execution_id, x.definition_id, x.definition_version, e.seq, e.event_id, e.type, e.step_id,
       s.node_id, e.timestamp, epoch_ms(e.timestamp) AS time, e.correlation_id, e.external, e.data
FROM events e
JOIN _export_selection x ON x.execution_id = e.execution_id
LEFT JOIN steps s ON s.execution_id = e.execution_id AND s.step_id = e.step_id
ORDER BY e.execution_id, e.seq
"""

# One row per step start and per step end, in the case order described in the module doc.
_STEP_LOG = """
WITH st AS (
    SELECT s.*, row_number() OVER (PARTITION BY s.execution_id
                                   ORDER BY s.started_at, s.completed_at NULLS LAST, s.node_id, s.step_id) AS step_order
    FROM steps s JOIN _export_selection x ON x.execution_id = s.execution_id
), entries AS (
    SELECT execution_id, step_id, node_id, node_type, iteration, status, decision, step_order,
           'start' AS lifecycle, started_at AS ts, 0 AS phase FROM st
    UNION ALL
    SELECT execution_id, step_id, node_id, node_type, iteration, status, decision, step_order,
           'complete', completed_at, 1 FROM st WHERE completed_at IS NOT NULL
)
SELECT x.execution_id AS "case:concept:name", x.definition_id AS "case:definitionId",
       x.definition_version AS "case:definitionVersion", x.status AS "case:status",
       x.failure_reason AS "case:failureReason", x.correlation_id AS "case:correlationId",
       e.node_id AS "concept:name", e.lifecycle AS "lifecycle:transition",
       e.ts AS "timestamp_ms", e.step_id AS "stepId",
       e.node_type AS "nodeType", e.iteration AS "iteration",
       CASE WHEN e.phase = 1 THEN e.status END AS "status", CASE WHEN e.phase = 1 THEN e.decision END AS "decision"
FROM entries e JOIN _export_selection x ON x.execution_id = e.execution_id
ORDER BY e.execution_id, e.ts, e.step_order, e.phase
"""


def event_table(con: duckdb.DuckDBPyConnection, *, execution_id: str | None = None, definition_id: str | None = None):
    """The selected executions' events as a pyarrow Table (``time`` is UTC, ``data`` JSON text)."""
    _selected(con, execution_id, definition_id)
    return to_arrow(con.sql(_EVENTS))


_INTERVALS = """
SELECT s.execution_id AS "case:concept:name", x.definition_id AS "case:definitionId",
       x.definition_version AS "case:definitionVersion", x.status AS "case:status",
       s.node_id AS "concept:name", s.started_at AS "start_ms", coalesce(s.completed_at, s.started_at) AS "end_ms",
       s.step_id AS "stepId", s.node_type AS "nodeType", s.iteration AS "iteration", s.status AS "status",
       s.decision AS "decision"
FROM steps s JOIN _export_selection x ON x.execution_id = s.execution_id
ORDER BY s.execution_id, s.started_at, s.completed_at NULLS LAST, s.node_id, s.step_id
"""


def step_log(
    con: duckdb.DuckDBPyConnection,
    *,
    execution_id: str | None = None,
    definition_id: str | None = None,
    intervals: bool = False,
):
    """The selected executions' steps as a pm4py-style pandas DataFrame, times in UTC.

    By default two rows per step — its start and (once it ended) its end, told apart by
    ``lifecycle:transition`` — exactly the XES export, with ``timestamp_ms`` in epoch ms.
    ``intervals=True`` gives pm4py's *interval log* instead: one row per step with
    ``start_timestamp`` and ``time:timestamp`` (its end; its start while it still runs),
    in the order of the ``step_transitions`` view."""
    import pandas as pd

    _selected(con, execution_id, definition_id)
    if intervals:
        frame = con.sql(_INTERVALS).df()
        frame.insert(5, "start_timestamp", pd.to_datetime(frame.pop("start_ms"), unit="ms", utc=True))
        frame.insert(6, "time:timestamp", pd.to_datetime(frame.pop("end_ms"), unit="ms", utc=True))
        return frame
    frame = con.sql(_STEP_LOG).df()
    frame.insert(8, "time:timestamp", pd.to_datetime(frame["timestamp_ms"], unit="ms", utc=True))
    return frame


def export(
    con: duckdb.DuckDBPyConnection,
    to: str,
    out: str | Path,
    *,
    execution_id: str | None = None,
    definition_id: str | None = None,
) -> dict:
    """Write the selection to ``out`` in format ``to`` (one of :data:`FORMATS`); returns counts."""
    if to not in FORMATS:
        raise ValueError(f"unknown export format {to!r}; use one of {', '.join(FORMATS)}")
    out = Path(out)
    if to == "xes":
        return write_xes(con, out, execution_id=execution_id, definition_id=definition_id)
    if to == "ocel":
        return write_ocel(con, out, execution_id=execution_id, definition_id=definition_id)
    _selected(con, execution_id, definition_id)
    target = str(out).replace("'", "''")
    options = "FORMAT parquet, COMPRESSION zstd" if to == "parquet" else "FORMAT csv, HEADER true"
    rows = con.execute(f"COPY ({_EVENTS}) TO '{target}' ({options})").fetchall()
    executions = con.execute("SELECT count(*) FROM _export_selection").fetchall()[0][0]
    return {"executions": executions, "events": int(rows[0][0]) if rows else 0}


# ---------------------------------------------------------------------------- XES

_XES_HEADER = """<?xml version="1.0" encoding="UTF-8"?>
<log xes.version="1.0" xes.features="nested-attributes" xmlns="http://www.xes-standard.org/">
  <extension name="Concept" prefix="concept" uri="http://www.xes-standard.org/concept.xesext"/>
  <extension name="Time" prefix="time" uri="http://www.xes-standard.org/time.xesext"/>
  <extension name="Lifecycle" prefix="lifecycle" uri="http://www.xes-standard.org/lifecycle.xesext"/>
  <global scope="trace">
    <string key="concept:name" value="UNKNOWN"/>
  </global>
  <global scope="event">
    <string key="concept:name" value="UNKNOWN"/>
    <date key="time:timestamp" value="1970-01-01T00:00:00.000+00:00"/>
    <string key="lifecycle:transition" value="complete"/>
  </global>
  <classifier name="Activity" keys="concept:name"/>
  <classifier name="Activity and transition" keys="concept:name lifecycle:transition"/>
  <string key="concept:name" value="collab-workflows event log"/>
"""


def _attr(kind: str, key: str, value) -> str:
    return f"<{kind} key={quoteattr(key)} value={quoteattr(str(value))}/>"


def write_xes(
    con: duckdb.DuckDBPyConnection,
    out: str | Path,
    *,
    execution_id: str | None = None,
    definition_id: str | None = None,
) -> dict:
    """Write the step log (see :func:`step_log`) as XES 1.0; returns case and event counts."""
    _selected(con, execution_id, definition_id)
    result = con.execute(_STEP_LOG)
    columns = [d[0] for d in result.description]
    cases = events = 0
    current = None
    with open(out, "w", encoding="utf-8") as fh:
        fh.write(_XES_HEADER)
        while True:
            chunk = result.fetchmany(10_000)
            if not chunk:
                break
            lines = []
            for values in chunk:
                row = dict(zip(columns, values))
                case = row["case:concept:name"]
                if case != current:
                    if current is not None:
                        lines.append("  </trace>")
                    current = case
                    cases += 1
                    lines.append("  <trace>")
                    lines.append("    " + _attr("string", "concept:name", case))
                    lines.append("    " + _attr("string", "definitionId", row["case:definitionId"]))
                    lines.append("    " + _attr("int", "definitionVersion", row["case:definitionVersion"]))
                    lines.append("    " + _attr("string", "status", row["case:status"]))
                    if row["case:failureReason"] is not None:
                        lines.append("    " + _attr("string", "failureReason", row["case:failureReason"]))
                    lines.append("    " + _attr("string", "correlationId", row["case:correlationId"]))
                events += 1
                parts = [
                    _attr("string", "concept:name", row["concept:name"]),
                    _attr("string", "lifecycle:transition", row["lifecycle:transition"]),
                    _attr("date", "time:timestamp", iso(row["timestamp_ms"])),
                    _attr("string", "stepId", row["stepId"]),
                    _attr("string", "nodeType", row["nodeType"]),
                    _attr("int", "iteration", row["iteration"]),
                ]
                for key in ("status", "decision"):
                    if row[key] is not None:
                        parts.append(_attr("string", key, row[key]))
                lines.append("    <event>" + "".join(parts) + "</event>")
            fh.write("\n".join(lines) + "\n")
        if current is not None:
            fh.write("  </trace>\n")
        fh.write("</log>\n")
    return {"executions": cases, "events": events}


# ---------------------------------------------------------------------------- OCEL 2.0

_STATIC = "1970-01-01T00:00:00Z"  # OCEL 2.0: the time of attribute values that never change


def _ocel_time(ms: int) -> str:
    return iso(ms).replace("+00:00", "Z")


def _ocel_type(value) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    return "string"


def _ocel_value(value):
    return value if isinstance(value, (str, int, float, bool)) else json.dumps(value, separators=(",", ":"))


def _merge_type(old: str | None, new: str) -> str:
    if old is None or old == new:
        return new
    if {old, new} == {"integer", "float"}:
        return "float"
    return "string"


def write_ocel(
    con: duckdb.DuckDBPyConnection,
    out: str | Path,
    *,
    execution_id: str | None = None,
    definition_id: str | None = None,
) -> dict:
    """Write an OCEL 2.0 JSON log: object types ``execution``, ``step`` and ``user``; every
    engine event with its ``seq`` and the scalar fields of its data as attributes (nested values
    as JSON text), related to its execution (qualifier ``execution``), its step (``step``) and
    the user its data names (``reviewer`` / ``actor``). Returns counts."""
    _selected(con, execution_id, definition_id)
    executions = con.execute(
        "SELECT execution_id, definition_id, definition_version, status, failure_reason, correlation_id "
        "FROM _export_selection ORDER BY execution_id"
    ).fetchall()
    steps = con.execute(
        "SELECT s.execution_id, s.step_id, s.node_id, s.node_type, s.iteration, s.status, s.decision "
        "FROM steps s JOIN _export_selection x ON x.execution_id = s.execution_id "
        "ORDER BY s.execution_id, s.started_at, s.completed_at NULLS LAST, s.node_id, s.step_id"
    ).fetchall()
    events = con.execute(
        "SELECT e.execution_id, e.event_id, e.seq, e.type, e.step_id, e.timestamp, e.data FROM events e "
        "JOIN _export_selection x ON x.execution_id = e.execution_id ORDER BY e.execution_id, e.seq"
    ).fetchall()

    def attrs(pairs) -> list[dict]:
        return [{"name": k, "time": _STATIC, "value": v} for k, v in pairs if v is not None]

    objects = []
    for eid, did, version, status, reason, corr in executions:
        objects.append(
            {
                "id": eid,
                "type": "execution",
                "attributes": attrs(
                    [
                        ("definitionId", did),
                        ("definitionVersion", version),
                        ("status", status),
                        ("failureReason", reason),
                        ("correlationId", corr),
                    ]
                ),
                "relationships": [],
            }
        )
    for eid, sid, node, ntype, iteration, status, decision in steps:
        objects.append(
            {
                "id": f"{eid}/{sid}",
                "type": "step",
                "attributes": attrs(
                    [
                        ("stepId", sid),
                        ("nodeId", node),
                        ("nodeType", ntype),
                        ("iteration", iteration),
                        ("status", status),
                        ("decision", decision),
                    ]
                ),
                "relationships": [{"objectId": eid, "qualifier": "execution"}],
            }
        )

    users: dict[str, None] = {}
    event_types: dict[str, dict[str, str]] = {}
    out_events = []
    for eid, event_id, seq, etype, sid, ts, raw in events:
        data = json.loads(raw)
        types = event_types.setdefault(etype, {"seq": "integer"})
        attributes = [{"name": "seq", "value": seq}]
        for key, value in data.items():
            if value is None or key == "seq":
                continue
            value = _ocel_value(value)
            types[key] = _merge_type(types.get(key), _ocel_type(value))
            attributes.append({"name": key, "value": value})
        relationships = [{"objectId": eid, "qualifier": "execution"}]
        if sid is not None:
            relationships.append({"objectId": f"{eid}/{sid}", "qualifier": "step"})
        for key, qualifier in (("reviewerId", "reviewer"), ("actorId", "actor")):
            user = data.get(key)
            if isinstance(user, str) and user:
                users[user] = None
                relationships.append({"objectId": f"user:{user}", "qualifier": qualifier})
        out_events.append(
            {
                "id": event_id,
                "type": etype,
                "time": _ocel_time(ts),
                "attributes": attributes,
                "relationships": relationships,
            }
        )
    objects.extend(
        {"id": f"user:{u}", "type": "user", "attributes": attrs([("userId", u)]), "relationships": []} for u in users
    )
    document = {
        "objectTypes": [
            {
                "name": "execution",
                "attributes": [
                    {"name": "definitionId", "type": "string"},
                    {"name": "definitionVersion", "type": "integer"},
                    {"name": "status", "type": "string"},
                    {"name": "failureReason", "type": "string"},
                    {"name": "correlationId", "type": "string"},
                ],
            },
            {
                "name": "step",
                "attributes": [
                    {"name": "stepId", "type": "string"},
                    {"name": "nodeId", "type": "string"},
                    {"name": "nodeType", "type": "string"},
                    {"name": "iteration", "type": "integer"},
                    {"name": "status", "type": "string"},
                    {"name": "decision", "type": "string"},
                ],
            },
            {"name": "user", "attributes": [{"name": "userId", "type": "string"}]},
        ],
        "eventTypes": [
            {"name": name, "attributes": [{"name": k, "type": t} for k, t in types.items()]}
            for name, types in sorted(event_types.items())
        ],
        "objects": objects,
        "events": out_events,
    }
    with open(out, "w", encoding="utf-8") as fh:
        json.dump(document, fh, ensure_ascii=False, separators=(",", ":"))
    return {"executions": len(executions), "events": len(out_events), "objects": len(objects)}
