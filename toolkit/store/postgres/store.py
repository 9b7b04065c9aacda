"""The PostgreSQL store: a connection pool, one transaction per write job, retried on conflict.

Where DuckDB funnels every write through one thread, PostgreSQL takes them from every thread of
every process at once. A write job ``fn(tx)`` runs in the caller's thread, in its own
transaction on a pooled connection; it reads what it needs (an execution row ``FOR UPDATE``
serialises commands on one execution across processes), buffers its inserts and
version-checked updates, and they are written at the end of the job, before the commit. A
conflict — a version check that failed, a serialisation failure, a deadlock, or a unique
constraint another process won (two dispatches with one idempotency key) — rolls the job back
and runs it again from the start; the client never sees it. A database that cannot be reached
is :class:`StoreUnavailable`, which the API answers as 503 ``UNAVAILABLE``.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import random
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
import psycopg.errors
from psycopg_pool import ConnectionPool, PoolTimeout

from toolkit.errors import ApiError, ErrorCode
from toolkit.store.migrate import migrations
from toolkit.store.postgres.migrate import migrate
from toolkit.store.postgres.sql import pyformat
from toolkit.store.writer import ConcurrentChange, Params, Row, Rows, Sql, StatementObserver

T = TypeVar("T")

# A job that keeps conflicting this often is not unlucky: something is wrong; say so.
MAX_ATTEMPTS = 30
STATEMENT_TIMEOUT_MS = 30_000
CONNECT_TIMEOUT_S = 5

# What another transaction can make a job's transaction fail with, to be run again.
_CONFLICTS = (
    ConcurrentChange,
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.UniqueViolation,
)


class StoreUnavailable(ApiError):
    """The database cannot be reached (or answered too late): try again later (503)."""

    retry_after_s = 1

    def __init__(self, message: str) -> None:
        super().__init__(ErrorCode.UNAVAILABLE, message)


def is_url(db: str) -> bool:
    """Whether ``--db`` names a PostgreSQL database rather than a DuckDB file.

    >>> is_url("postgresql://localhost/collab"), is_url("postgres://h/db"), is_url("data/collab.duckdb")
    (True, True, False)
    """
    return db.startswith(("postgresql://", "postgres://"))


def _text(sql: Sql) -> str:
    return sql if isinstance(sql, str) else str(sql.query)  # a parsed DuckDB statement's text


def _rows(cur: psycopg.Cursor[Any]) -> Rows:
    rows = Rows.__new__(Rows)
    list.__init__(rows, cur.fetchall() if cur.description is not None else ())
    return rows


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


class PgTx:
    """What a write job sees on PostgreSQL; the same surface as DuckDB's :class:`~toolkit.store.writer.Tx`."""

    __slots__ = ("con", "dirty", "_appends", "_updates", "_on_rollback", "_after_commit", "_observe")

    def __init__(self, con: psycopg.Connection[Any], observe: StatementObserver | None = None) -> None:
        self.con = con
        self._observe = observe
        self.dirty = False
        self._appends: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
        self._updates: dict[tuple[str, tuple[str, ...]], dict[Any, Row]] = {}
        self._on_rollback: list[Callable[[], None]] = []
        self._after_commit: list[Callable[[], None]] = []

    def execute(self, sql: Sql, params: Params | None = None) -> Rows:
        text = _text(sql)
        if not text.lstrip().upper().startswith(("SELECT", "WITH")):
            self.dirty = True
        began = time.perf_counter()
        with self.con.cursor() as cur:
            cur.execute(pyformat(text) if params is not None else text, params)
            rows = _rows(cur)
        self._took(began)
        return rows

    def _took(self, began: float) -> None:
        if self._observe is not None:
            self._observe("write", time.perf_counter() - began)

    def append(self, table: str, columns: tuple[str, ...], rows: list[Row]) -> None:
        if rows:
            self.dirty = True
            self._appends.setdefault((table, columns), []).extend(rows)

    def update(self, table: str, columns: tuple[str, ...], row: Row) -> None:
        """Version-checked update, as DuckDB's ``Tx.update``: ``columns`` are ``(key,
        "expected_version", *columns to set)``; several updates of one key collapse into one."""
        self.dirty = True
        bucket = self._updates.setdefault((table, columns), {})
        previous = bucket.get(row[0])
        bucket[row[0]] = row if previous is None else (row[0], previous[1]) + tuple(row[2:])

    def next_key(self) -> int:
        """The next list key, from a sequence every process shares."""
        row = self.execute("SELECT nextval('list_keys')").fetchone()
        assert row is not None
        return int(row[0])

    def on_rollback(self, hook: Callable[[], None]) -> None:
        self._on_rollback.append(hook)

    def after_commit(self, hook: Callable[[], None]) -> None:
        self._after_commit.append(functools.partial(contextvars.copy_context().run, hook))

    def flush(self) -> None:
        """Write the buffered inserts (one batch per table), then the version-checked updates."""
        with self.con.cursor() as cur:
            for (table, columns), rows in self._appends.items():
                began = time.perf_counter()
                marks = ", ".join(["%s"] * len(columns))
                cur.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", rows)
                self._took(began)
            for (table, columns), bucket in self._updates.items():
                key, _expected, *rest = columns
                sets = ", ".join(f"{c} = %s" for c in rest)
                sql = f"UPDATE {table} SET {sets} WHERE {key} = %s AND version = %s"
                for row in bucket.values():
                    began = time.perf_counter()
                    cur.execute(sql, [*row[2:], row[0], row[1]])
                    self._took(began)
                    if cur.rowcount != 1:
                        raise ConcurrentChange(f"{table} {row[0]} changed concurrently")
        self._appends.clear()
        self._updates.clear()


class _NoQueue:
    """PostgreSQL has no writer queue; readiness asks the database itself instead."""

    def depth(self) -> int:
        return 0


class PostgresStore:
    """A PostgreSQL database with the project's schema, shared with any number of processes.

    ``PostgresStore(url)`` connects (one line of error and :class:`StoreUnavailable` when it
    cannot), creates or migrates the schema under an advisory lock, and opens a pool.
    """

    dialect = "postgres"
    shared = True  # other processes write too: caches must be checked against the database

    def __init__(
        self,
        url: str,
        *,
        min_size: int = 2,
        max_size: int = 16,
        statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
        pool_timeout_s: float = 10.0,
    ) -> None:
        self.path = url
        self.url = url
        self._observe: StatementObserver | None = None
        self.writer = _NoQueue()
        options = f"-c statement_timeout={statement_timeout_ms} -c lock_timeout={statement_timeout_ms}"
        kwargs = {"options": options, "connect_timeout": CONNECT_TIMEOUT_S}
        try:
            with psycopg.connect(url, **kwargs) as con:  # type: ignore[arg-type]
                migrate(con)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot use the database {_safe(url)}: {_one_line(exc)}") from None
        self.pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs=kwargs,
            timeout=pool_timeout_s,
            reconnect_timeout=3600,
            check=ConnectionPool.check_connection,
            name="collab",
            open=True,
        )
        self._closed = threading.Event()

    def observe_statements(self, observer: StatementObserver | None) -> None:
        """Call ``observer(kind, seconds)`` after every statement and commit (the server's metrics)."""
        self._observe = observer

    def read(self, sql: Sql, params: Params | None = None) -> Rows:
        """Run a query outside any write transaction; the rows are fetched."""
        text = _text(sql)
        began = time.perf_counter()
        try:
            with self.pool.connection() as con, con.cursor() as cur:
                cur.execute(pyformat(text) if params is not None else text, params)
                rows = _rows(cur)
        except (psycopg.OperationalError, PoolTimeout) as exc:
            raise StoreUnavailable(f"database unavailable: {_one_line(exc)}") from None
        if self._observe is not None:
            self._observe("read", time.perf_counter() - began)
        return rows

    def write(self, fn: Callable[[PgTx], T]) -> T:
        """Run ``fn(tx)`` in a transaction and commit; on a conflict with another transaction,
        roll back and run it again (a job must therefore decide from what it reads in ``tx``)."""
        for attempt in range(MAX_ATTEMPTS):
            tx: PgTx | None = None
            try:
                with self.pool.connection() as con:
                    tx = PgTx(con, self._observe)
                    try:
                        result = fn(tx)
                        tx.flush()
                        began = time.perf_counter()
                        con.commit()
                        if self._observe is not None:
                            self._observe("commit", time.perf_counter() - began)
                    except BaseException:
                        con.rollback()
                        raise
            except _CONFLICTS:
                _rolled_back(tx)
                time.sleep(random.uniform(0, 0.002 * (attempt + 1)))  # noqa: S311 - jitter, not secrecy
                continue
            except (psycopg.OperationalError, PoolTimeout) as exc:
                _rolled_back(tx)
                raise StoreUnavailable(f"database unavailable: {_one_line(exc)}") from None
            except BaseException:
                _rolled_back(tx)
                raise
            for hook in tx._after_commit:
                hook()
            return result
        raise ApiError(ErrorCode.ABORTED, f"the change conflicted with others {MAX_ATTEMPTS} times in a row; try again")

    async def write_async(self, fn: Callable[[PgTx], T]) -> T:
        return await asyncio.to_thread(self.write, fn)

    def last_key(self) -> int | None:
        """None: PostgreSQL pages by key through its indexes, without windows."""
        return None

    def problem(self) -> str | None:
        """Why the database is not fit to serve (one line), or None."""
        try:
            applied = {n for (n,) in self.read("SELECT number FROM schema_migrations").fetchall()}
        except ApiError as exc:
            return exc.message
        missing = [name for number, name, _ in migrations("toolkit.store.postgres") if number not in applied]
        return f"migrations not applied: {', '.join(missing)}" if missing else None

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _rolled_back(tx: PgTx | None) -> None:
    if tx is not None:
        for hook in reversed(tx._on_rollback):
            hook()


def _safe(url: str) -> str:
    """The URL without its password, for messages and logs.

    >>> _safe("postgresql://app:s3cret@db.example:5432/collab")
    'postgresql://app:***@db.example:5432/collab'
    """
    head, sep, rest = url.partition("://")
    creds, at, host = rest.rpartition("@")
    if not at or ":" not in creds:
        return url
    user = creds.split(":", 1)[0]
    return f"{head}{sep}{user}:***@{host}"
