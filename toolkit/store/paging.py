"""Keyset paging: the rows of one page of a list, in key order, after a position.

The API's cursors, page bounds and sizes are the services' business
(:mod:`toolkit.services.paging`); here is only how the rows are read. On DuckDB an ascending
list is read through windows of keys (see :func:`_in_windows`); PostgreSQL has no use for
them (``store.last_key()`` is None there) and pages with a plain ``ORDER BY … LIMIT`` along
an index.
"""

from __future__ import annotations

from typing import Any

from toolkit.store.seam import Read
from toolkit.store.writer import Row


class Filters:
    """A WHERE clause built from optional equality filters: ``None`` values are left out.

    >>> f = Filters("workspace_id = ?", "ws1").equal(status="running", definition_id=None)
    >>> f.sql, f.params
    ('workspace_id = ? AND status = ?', ['ws1', 'running'])
    """

    def __init__(self, clause: str, *params: Any) -> None:
        self.clauses: list[str] = [clause]
        self.params: list[Any] = list(params)

    def add(self, clause: str, *params: Any) -> Filters:
        self.clauses.append(clause)
        self.params.extend(params)
        return self

    def equal(self, **columns: Any) -> Filters:
        for column, value in columns.items():
            if value is not None:
                self.add(f"{column} = ?", value)
        return self

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses)


def keyset(
    read: Read,
    select: str,
    filters: Filters,
    key: str,
    after: int | None,
    limit: int,
    *,
    descending: bool = False,
    last_key: int | None = None,
) -> list[Row]:
    """Up to ``limit`` rows of ``SELECT {select} WHERE {filters}`` in ``key`` order, after the
    key ``after`` (None: from the start). With ``last_key`` (the largest key handed out), an
    ascending list is read window by window of keys."""
    if last_key is not None and not descending:
        return _in_windows(read, select, filters, key, after or 0, limit, last_key)
    if after is not None:
        filters.add(f"{key} {'<' if descending else '>'} ?", after)
    return read(
        f"SELECT {select} WHERE {filters.sql} ORDER BY {key}{' DESC' if descending else ''} LIMIT ?",
        filters.params + [limit],
    ).fetchall()


FIRST_WINDOW = 4096


def _in_windows(
    read: Read, select: str, filters: Filters, key: str, after: int, limit: int, last_key: int
) -> list[Row]:
    """Up to ``limit`` rows with keys above ``after``, in key order, read through windows of
    keys that grow fourfold. Keys are handed out in insertion order, so a window's rows sit in
    a few row groups, and DuckDB skips every other group by its min/max key: a page costs the
    rows it passes over, not the whole table (a plain ORDER BY … LIMIT reads a row group at
    least, and more when the filter is selective)."""
    rows: list[Row] = []
    low, width = after, FIRST_WINDOW
    while len(rows) < limit and low < last_key:
        high = low + width
        rows += read(
            f"SELECT {select} WHERE {filters.sql} AND {key} > ? AND {key} <= ? ORDER BY {key} LIMIT ?",
            filters.params + [low, high, limit - len(rows)],
        ).fetchall()
        low, width = high, width * 4
    return rows
