"""The DuckDB store: one read-write connection owned by the writer thread, cursors for reads."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import duckdb

from toolkit.store.migrate import migrate, migrations
from toolkit.store.writer import Params, Rows, Sql, StatementObserver, Tx, Writer

T = TypeVar("T")

DEFAULT_PATH = Path("data") / "collab.duckdb"


class Store:
    """A DuckDB database with the project's schema.

    >>> store = Store(":memory:")
    >>> store.read("SELECT count(*) FROM workspaces").fetchone()
    (0,)
    >>> store.close()
    """

    dialect = "duckdb"
    shared = False  # one process owns the file: its caches need no checking

    def __init__(self, path: str | Path = DEFAULT_PATH) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        # One thread: the store's statements are point reads and small writes, for which
        # DuckDB's parallel scheduler costs more than it gains (waking its workers for every
        # statement took about a fifth of the writer thread's CPU). Concurrency comes from the
        # request threads, each running its own reads.
        self.con = duckdb.connect(self.path, config={"threads": 1})
        migrate(self.con)
        self.writer = Writer(self.con)
        self._local = threading.local()
        self._cursors: list[duckdb.DuckDBPyConnection] = []
        self._lock = threading.Lock()
        self._observe: StatementObserver | None = None

    def observe_statements(self, observer: StatementObserver | None) -> None:
        """Call ``observer(kind, seconds)`` after every statement: reads, the writer's
        statements and its commits (the server's metrics)."""
        self._observe = observer
        self.writer.observe = observer

    def cursor(self) -> duckdb.DuckDBPyConnection:
        """This thread's read cursor (DuckDB connections are not shared across threads)."""
        cur = getattr(self._local, "cursor", None)
        if cur is None:
            cur = self.con.cursor()
            self._local.cursor = cur
            with self._lock:
                self._cursors.append(cur)
        return cur

    def read(self, sql: Sql, params: Params | None = None) -> Rows:
        """Run a query on this thread's cursor; the rows are fetched (``fetchone``/``fetchall``)."""
        if self._observe is None:
            return Rows(self.cursor(), sql, params)
        began = time.perf_counter()
        try:
            return Rows(self.cursor(), sql, params)
        finally:
            self._observe("read", time.perf_counter() - began)

    def problem(self) -> str | None:
        """Why the database is not fit to serve (one line), or None: it must answer a query,
        hold every shipped migration, and still be the file at :attr:`path` (a DuckDB file
        deleted under a running server goes on taking writes that vanish with the process)."""
        if self.path != ":memory:" and not Path(self.path).exists():
            return f"database file {self.path} is gone"
        applied = {n for (n,) in self.read("SELECT number FROM schema_migrations").fetchall()}
        missing = [name for number, name, _ in migrations() if number not in applied]
        return f"migrations not applied: {', '.join(missing)}" if missing else None

    def last_key(self) -> int:
        """The largest list key handed out (executions, definitions and deliveries share them)."""
        return self.writer.keys.last

    def write(self, fn: Callable[[Tx], T]) -> T:
        """Run ``fn(tx)`` on the writer thread inside a transaction; blocks until committed."""
        return self.writer.call(fn)

    async def write_async(self, fn: Callable[[Tx], T]) -> T:
        return await self.writer.run(fn)

    def warm(self) -> None:
        """Load now what the first write would (a server at start; see :meth:`Writer.warm`)."""
        self.writer.warm()

    def close(self) -> None:
        self.writer.close()
        with self._lock:
            for cur in self._cursors:
                try:
                    cur.close()
                except duckdb.Error:
                    pass
            self._cursors.clear()
        self.con.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
