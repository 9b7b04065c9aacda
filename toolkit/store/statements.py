"""SQL statements parsed once, for the hot read paths.

DuckDB parses a statement's text on every ``execute``; for a long query (count annotations is
a UNION of five scans) parsing costs as much as a fifth of the whole call. A parsed
:class:`duckdb.Statement` runs with new parameter values each time without that step, on any
connection or cursor of any database (it is only the syntax tree; binding and planning still
happen per call, against the current catalog).

>>> from toolkit.store import Store
>>> with Store(":memory:") as store:
...     store.read(parsed("SELECT count(*) FROM workspaces WHERE dev = $dev"), {"dev": True}).fetchone()
(0,)
"""

from __future__ import annotations

import functools
import threading

import duckdb

_lock = threading.Lock()


@functools.lru_cache(maxsize=128)
def parsed(sql: str) -> duckdb.Statement:
    """The one statement in ``sql``, parsed (and kept: the same text is parsed once)."""
    with _lock:  # the module's default connection parses; it is not shared across threads
        (statement,) = duckdb.extract_statements(sql)
    return statement
