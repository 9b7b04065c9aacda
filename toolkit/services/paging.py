"""Opaque cursors and bounded pages: callers cannot read or forge meaning into cursors, but
we can decode them; a page is bounded by its item count and by its size in bytes. The rows
themselves are read by :mod:`toolkit.store.paging`.

A cursor is ``base64url("k<key>")``. A well-formed one this API did not hand out is taken as a
position in the list, but only a key a list can hold: ``0 <= key <=``
:data:`~toolkit.limits.MAX_CURSOR_KEY` in plain decimal digits (a store's 64-bit integer), so
no forged cursor reaches a query as a number the database cannot compare.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable

from toolkit.errors import ApiError, ErrorCode
from toolkit.limits import MAX_CURSOR_KEY, PAGE_MAX_BYTES

_KEY = re.compile(r"k(-?[0-9]{1,19})")


def encode_cursor(key: int) -> str:
    return base64.urlsafe_b64encode(f"k{key}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, field: str = "cursor", minimum: int = 0) -> int | None:
    """The key of ``cursor`` (None for None), or INVALID_ARGUMENT naming ``data.<field>``.

    >>> decode_cursor(encode_cursor(42)), decode_cursor(None)
    (42, None)
    >>> decode_cursor(encode_cursor(2**63))
    Traceback (most recent call last):
    ...
    toolkit.errors.ApiError: data.cursor: not a cursor this API returned (its position is outside 0 to 2^63-1)
    """
    if cursor is None:
        return None
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        match = _KEY.fullmatch(text)
        if match is None:
            raise ValueError
    except (ValueError, UnicodeDecodeError):
        raise ApiError(ErrorCode.INVALID_ARGUMENT, f"data.{field}: not a cursor this API returned") from None
    key = int(match.group(1))
    if not minimum <= key <= MAX_CURSOR_KEY:
        raise ApiError(
            ErrorCode.INVALID_ARGUMENT,
            f"data.{field}: not a cursor this API returned (its position is outside {minimum} to 2^63-1)",
        )
    return key


def fitting(sizes: Iterable[int], limit: int = PAGE_MAX_BYTES) -> int:
    """How many items, of these sizes in order, a page holds: the items up to and including
    the one that passes ``limit`` bytes (so a page always makes progress, even past an item
    larger than the limit), or all of them.

    >>> fitting([3, 3, 3, 3], limit=7), fitting([10, 1], limit=5), fitting([1, 1], limit=5), fitting([])
    (3, 1, 2, 0)
    """
    total = count = 0
    for size in sizes:
        total += size
        count += 1
        if total > limit:
            break
    return count


def page_of(rows: list, page_size: int, size_of=None) -> tuple[list, str | None]:
    """The page of ``rows`` (read one past ``page_size`` to know whether more exist) and the
    cursor after it (None on the last page). With ``size_of(row)`` (its size in bytes as
    answered), the page also stops at :data:`PAGE_MAX_BYTES`. The key is the last column.

    >>> page_of([(1,), (2,), (3,)], 2)
    ([(1,), (2,)], 'azI')
    >>> page_of([(1,), (2,)], 2)
    ([(1,), (2,)], None)
    """
    size = min(page_size, len(rows))
    if size_of is not None:
        size = fitting(size_of(r) for r in rows[:size])
    more = len(rows) > size
    rows = rows[:size]
    return rows, encode_cursor(rows[-1][-1]) if more else None
