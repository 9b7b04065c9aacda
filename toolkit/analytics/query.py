"""Run one SQL statement and write its result as a text table, CSV, JSON or Parquet
(what ``collab sql`` prints).

>>> import duckdb, io
>>> out = io.StringIO()
>>> write_result(duckdb.connect(), "SELECT 1 AS n, 'a' AS s", "json", None, out)
1
>>> out.getvalue()
'[{"n": 1, "s": "a"}]\\n'
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import json
import uuid
from pathlib import Path
from typing import Any, TextIO

import duckdb

from toolkit.analytics.views import to_arrow

__all__ = ["FORMATS", "write_result", "format_table"]

FORMATS = ("table", "csv", "json", "parquet")


def _json_default(value: Any):
    if isinstance(value, (dt.datetime, dt.date, dt.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, (uuid.UUID, dt.timedelta)):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (list, dict)):
        return json.dumps(value, default=_json_default, ensure_ascii=False)
    return str(value)


def format_table(columns: list[str], rows: list[tuple]) -> str:
    """An aligned text table (numbers right-aligned) with a row count."""
    cells = [[_text(v) for v in row] for row in rows]
    numeric = [
        all(
            isinstance(r[i], (int, float, decimal.Decimal)) and not isinstance(r[i], bool)
            for r in rows
            if r[i] is not None
        )
        for i in range(len(columns))
    ]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]

    def line(values) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def write_result(con: duckdb.DuckDBPyConnection, query: str, fmt: str, out: str | Path | None, stream: TextIO) -> int:
    """Run ``query`` on ``con`` and write its rows in ``fmt`` to ``out`` (a file) or ``stream``;
    returns the number of rows. ``ValueError`` for a bad format/destination pair;
    ``duckdb.Error`` for bad SQL."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    if fmt == "parquet" and out is None:
        raise ValueError("--format parquet needs --out FILE")
    relation = con.sql(query)
    if relation is None:  # a statement without a result (SET, CREATE TEMP VIEW, …)
        return 0
    if fmt == "parquet":
        import pyarrow.parquet as pq

        table = to_arrow(relation)
        pq.write_table(table, str(out))
        return table.num_rows
    columns = list(relation.columns)
    rows = relation.fetchall()
    target = open(out, "w", encoding="utf-8", newline="") if out is not None else stream
    try:
        if fmt == "table":
            target.write(format_table(columns, rows) + "\n")
        elif fmt == "csv":
            writer = csv.writer(target, lineterminator="\n")
            writer.writerow(columns)
            writer.writerows([_text(v) for v in row] for row in rows)
        else:
            json.dump([dict(zip(columns, row)) for row in rows], target, default=_json_default, ensure_ascii=False)
            target.write("\n")
    finally:
        if out is not None:
            target.close()
    return len(rows)
