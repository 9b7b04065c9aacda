"""PostgreSQL query results as Arrow tables, for the analyst's side (``collab sql``, exports,
replay, the Parquet mirror and prune's archive), which runs its SQL in DuckDB.

Rows come through a server-side cursor in batches, so a large log never sits in memory twice;
each column's Arrow type follows the PostgreSQL type the query returns, so a table pulled into
DuckDB has the column types a DuckDB server database has (``INTEGER`` stays 32-bit, ``VARCHAR[]``
a list).
"""

from __future__ import annotations

import itertools
from typing import Any

import psycopg
import pyarrow as pa

__all__ = ["fetch_arrow"]

_BATCH_ROWS = 50_000
_names = itertools.count()

# PostgreSQL type oid -> Arrow type; anything else arrives as text.
_TYPES: dict[int, pa.DataType] = {
    16: pa.bool_(),
    20: pa.int64(),
    21: pa.int16(),
    23: pa.int32(),
    700: pa.float32(),
    701: pa.float64(),
    1000: pa.list_(pa.bool_()),
    1007: pa.list_(pa.int32()),
    1016: pa.list_(pa.int64()),
    1009: pa.list_(pa.string()),
    1015: pa.list_(pa.string()),
}


def _arrow_type(oid: int) -> pa.DataType:
    return _TYPES.get(oid, pa.string())


def _column(values: tuple[Any, ...], kind: pa.DataType) -> pa.Array:
    if pa.types.is_string(kind):
        values = tuple(v if v is None or isinstance(v, str) else str(v) for v in values)
    return pa.array(values, type=kind)


def fetch_arrow(con: psycopg.Connection[Any], sql: str, params: Any = None) -> pa.Table:
    """Run ``sql`` (psycopg placeholders) on ``con``, inside its current transaction, and
    return every row as one Arrow table.

    >>> import pyarrow as pa
    >>> _column((1, None, 3), _arrow_type(23)).type == pa.int32()
    True
    """
    with con.cursor(name=f"collab_arrow_{next(_names)}") as cur:
        cur.itersize = _BATCH_ROWS
        cur.execute(sql, params)
        assert cur.description is not None
        schema = pa.schema([(c.name, _arrow_type(c.type_code)) for c in cur.description])
        batches = []
        while rows := cur.fetchmany(_BATCH_ROWS):
            columns = list(zip(*rows))
            batches.append(
                pa.record_batch([_column(col, field.type) for col, field in zip(columns, schema)], schema=schema)
            )
    return pa.Table.from_batches(batches, schema=schema)
