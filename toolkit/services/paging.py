"""Opaque cursors: callers cannot read or forge meaning into them, but we can decode them."""

from __future__ import annotations

import base64

from toolkit.errors import ApiError, ErrorCode


def encode_cursor(key: int) -> str:
    return base64.urlsafe_b64encode(f"k{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, field: str = "cursor") -> int | None:
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        if not text.startswith("k"):
            raise ValueError
        return int(text[1:])
    except (ValueError, UnicodeDecodeError):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data.{field}: not a cursor this API returned") from None


class Filters:
    """A WHERE clause built from optional equality filters: ``None`` values are left out.

    >>> f = Filters("workspace_id = ?", "ws1").equal(status="running", definition_id=None)
    >>> f.sql, f.params
    ('workspace_id = ? AND status = ?', ['ws1', 'running'])
    """

    def __init__(self, clause: str, *params) -> None:
        self.clauses, self.params = [clause], list(params)

    def add(self, clause: str, *params) -> "Filters":
        self.clauses.append(clause)
        self.params.extend(params)
        return self

    def equal(self, **columns) -> "Filters":
        for column, value in columns.items():
            if value is not None:
                self.add(f"{column} = ?", value)
        return self

    @property
    def sql(self) -> str:
        return " AND ".join(self.clauses)


def keyset_page(read, select: str, filters: Filters, key: str, cursor: str | None, page_size: int, *,
                field: str = "cursor", descending: bool = False,
                last_key: int | None = None) -> tuple[list, str | None]:
    """One page of ``SELECT {select} WHERE {filters}`` in ``key`` order, after ``cursor``; the
    key must be the last selected column. Returns ``(rows, next cursor or None)``: one row
    more than the page is read to know whether another page exists. With ``last_key`` (the
    largest key handed out), an ascending page is read window by window of keys."""
    after = decode_cursor(cursor, field)
    if last_key is not None and not descending:
        rows = _in_windows(read, select, filters, key, after or 0, page_size + 1, last_key)
    else:
        if after is not None:
            filters.add(f"{key} {'<' if descending else '>'} ?", after)
        rows = read(f"SELECT {select} WHERE {filters.sql} ORDER BY {key}{' DESC' if descending else ''} LIMIT ?",
                    filters.params + [page_size + 1]).fetchall()
    more = len(rows) > page_size
    rows = rows[:page_size]
    return rows, encode_cursor(rows[-1][-1]) if more else None


FIRST_WINDOW = 4096


def _in_windows(read, select: str, filters: Filters, key: str, after: int, limit: int, last_key: int) -> list:
    """Up to ``limit`` rows with keys above ``after``, in key order, read through windows of
    keys that grow fourfold. Keys are handed out in insertion order, so a window's rows sit in
    a few row groups, and DuckDB skips every other group by its min/max key: a page costs the
    rows it passes over, not the whole table (a plain ORDER BY … LIMIT reads a row group at
    least, and more when the filter is selective)."""
    rows: list = []
    low, width = after, FIRST_WINDOW
    while len(rows) < limit and low < last_key:
        high = low + width
        rows += read(f"SELECT {select} WHERE {filters.sql} AND {key} > ? AND {key} <= ? ORDER BY {key} LIMIT ?",
                     filters.params + [low, high, limit - len(rows)]).fetchall()
        low, width = high, width * 4
    return rows
