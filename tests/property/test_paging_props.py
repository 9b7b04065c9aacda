"""Keyset pages read through windows of keys (``keyset(..., last_key=…)``) are exactly the
pages a plain ORDER BY … LIMIT gives: every row once, in key order, whatever the gaps between
keys and however other workspaces' rows interleave with ours."""

from __future__ import annotations

import duckdb
import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.services.paging import decode_cursor, page_of
from toolkit.store.paging import FIRST_WINDOW, Filters, keyset

# Keys with small and huge gaps (several windows wide), owned by one of three workspaces.
rows = st.lists(
    st.tuples(st.integers(1, 40 * FIRST_WINDOW), st.sampled_from(["a", "b", "c"])),
    unique_by=lambda r: r[0],
    max_size=120,
)


def all_pages(con, page_size: int, last_key: int | None) -> list[list[int]]:
    read = con.execute
    pages, cursor = [], None
    while True:
        after = decode_cursor(cursor)
        found = keyset(read, "k FROM t", Filters("ws = ?", "a"), "k", after, page_size + 1, last_key=last_key)
        page, cursor = page_of(found, page_size)
        pages.append([k for (k,) in page])
        if cursor is None:
            return pages


@settings(max_examples=50, deadline=None)
@given(rows, st.integers(1, 30))
def test_windowed_pages_equal_plain_pages(table, page_size):
    con = duckdb.connect(":memory:")
    source = pa.table(  # noqa: F841 - read by name in the SQL below
        {
            "k": pa.array([k for k, _ in table], pa.int64()),
            "ws": pa.array([ws for _, ws in table], pa.string()),
        }
    )
    con.execute("CREATE TABLE t AS SELECT * FROM source")
    last_key = max((k for k, _ in table), default=0)
    plain = all_pages(con, page_size, None)
    assert all_pages(con, page_size, last_key) == plain
    assert [k for page in plain for k in page] == sorted(k for k, ws in table if ws == "a")
