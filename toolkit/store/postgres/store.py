"""The PostgreSQL store: a connection pool, one transaction per write job, retried on conflict.

Where DuckDB funnels every write through one thread, PostgreSQL takes them from every thread of
every process at once. A write job ``fn(tx)`` runs in the caller's thread, in its own
transaction on a pooled connection; it reads what it needs (an execution row ``FOR UPDATE``
serialises commands on one execution across processes), buffers its inserts and
version-checked updates, and they are written at the end of the job, in one round trip with
the COMMIT. A conflict — a version check that failed, a serialisation failure, a deadlock, or a unique
constraint another process won (two dispatches with one idempotency key) — rolls the job back
and runs it again from the start; the client never sees it. A database that cannot be reached
is :class:`StoreUnavailable`, which the API answers as 503 ``UNAVAILABLE`` with ``Retry-After``.

Database trouble is bounded in time: a connection attempt gives up after
``CONNECT_TIMEOUT_S``, waiting for a pooled connection after ``POOL_TIMEOUT_S`` (and after
``TROUBLE_POOL_TIMEOUT_S`` once the database was found unreachable, so that requests during an
outage are refused at once instead of queueing), a statement after its statement timeout. A
connection the database dropped (a restart) is found out by the statement that uses it; the pool
discards it, and the job, which has written nothing, runs again on another connection. The
pool keeps trying to reconnect every second or two, so service resumes by itself.
"""

from __future__ import annotations

import asyncio
import functools
import random
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from typing import Any, TypeVar

import psycopg
import psycopg.errors
from psycopg_pool import ConnectionPool, PoolTimeout

from toolkit.errors import ApiError, ErrorCode
from toolkit.store.migrate import migrations
from toolkit.store.postgres.migrate import migrate
from toolkit.store.postgres.sql import pyformat
from toolkit.store.writer import Buffered, Params, Rows, Sql, StatementObserver

T = TypeVar("T")

# A job that keeps conflicting this often is not unlucky: something is wrong; say so.
MAX_ATTEMPTS = 30
# A request's statements take milliseconds; one that runs for seconds is stuck on a lock or on
# a database in trouble, and holding its connection longer only spreads the trouble.
STATEMENT_TIMEOUT_MS = 10_000
LOCK_TIMEOUT_MS = 5_000
# A transaction left open by a frozen process (not a dead one: the kernel closes those sockets)
# releases its row locks after this.
IDLE_IN_TRANSACTION_MS = 30_000
CONNECT_TIMEOUT_S = 3
POOL_TIMEOUT_S = 3.0
TROUBLE_POOL_TIMEOUT_S = 0.5
# The pool retries a failed connection after 1 s, then 2 s, and so on until this runs out; then
# the next request that waits starts over at 1 s. Short, so an outage of any length is noticed
# to be over within a couple of seconds.
RECONNECT_TIMEOUT_S = 2.0

# What another transaction can make a job's transaction fail with, to be run again.
_CONFLICTS = (
    psycopg.errors.SerializationFailure,
    psycopg.errors.DeadlockDetected,
    psycopg.errors.UniqueViolation,
)


class StoreUnavailable(ApiError):
    """The database cannot be reached (or answered too late): try again later (503, with
    ``Retry-After: retry_after_s``)."""

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


class PgTx(Buffered):
    """What a write job sees on PostgreSQL: :class:`~toolkit.store.writer.Buffered` and
    ``execute`` on the job's own connection, in its transaction.

    The connection is in autocommit mode (so that reads outside jobs are one round trip
    each); the job's transaction is opened by its first statement, with ``BEGIN`` sent in the
    same round trip as that statement (psycopg would send it alone, one round trip more).

    Where several statements share a round trip (``BEGIN`` and the first statement; a flush),
    they go as one query string, their parameters bound by psycopg on the client
    (:class:`psycopg.ClientCursor`, which quotes each value as a literal). A pipeline would
    save the same round trips, but psycopg lets go of the GIL and takes it back several times
    for each statement of a pipeline: on a loaded server each of those is a hand-off between
    threads, and a flush sent as one string made fewer than half as many, with a third less
    CPU (docs/decisions.md, "One query string per round trip")."""

    __slots__ = ("_con", "begun", "committing")

    def __init__(self, con: psycopg.Connection[Any], observe: StatementObserver | None = None) -> None:
        super().__init__(observe)
        self._con = con
        self.begun = False
        self.committing = False  # the COMMIT is sent: a lost connection leaves its outcome unknown

    @property
    def con(self) -> psycopg.Connection[Any]:
        """The job's connection, its transaction open (for work beyond ``execute``, such as
        reading Arrow tables in the job's snapshot)."""
        if not self.begun:
            self._con.execute("BEGIN")
            self.begun = True
        return self._con

    @property
    def broken(self) -> bool:
        """Whether the database dropped the job's connection."""
        return self._con.broken

    def execute(self, sql: Sql, params: Params | None = None) -> Rows:
        text = _text(sql)
        if not text.lstrip().upper().startswith(("SELECT", "WITH")):
            self.dirty = True
        began = time.perf_counter()
        query = pyformat(text) if params is not None else text
        if self.begun:
            with self._con.cursor() as cur:
                cur.execute(query, params)
                rows = _rows(cur)
        else:
            with psycopg.ClientCursor(self._con) as opening:
                opening.execute("BEGIN; " + query, params)
                self.begun = True
                opening.nextset()  # past BEGIN's result, to the statement's
                rows = _rows(opening)
        self._took(began)
        return rows

    def next_key(self) -> int:
        """The next list key, from a sequence every process shares."""
        row = self.execute("SELECT nextval('list_keys')").fetchone()
        assert row is not None
        return int(row[0])

    def next_keys(self, n: int) -> list[int]:
        """``n`` next list keys, ascending, drawn in one round trip (an outbox row needs one
        for each external event of a command)."""
        if n == 0:
            return []
        rows = self.execute("SELECT nextval('list_keys') FROM generate_series(1, ?)", [n]).fetchall()
        return sorted(int(key) for (key,) in rows)

    def flush(self, commit: bool = False) -> bool:
        """Write the buffered inserts (one multi-row insert per table), then the
        version-checked updates, all in one query string: one round trip to the database for
        the lot, where a statement at a time costs one each (a decision's update and two
        inserts: three). With ``commit``, the job's ``COMMIT`` ends the string, one round trip
        more saved; returns whether it did (only when there was something to write).

        Each update checks its own row count in the database (``collab_expect_one``,
        migration 015): a stale version raises ``serialization_failure`` there, and PostgreSQL
        runs none of the string's later statements, the ``COMMIT`` included; the job runs
        again. Any other error (a unique constraint another process won) is raised the same
        way."""
        if not self._appends and not self._updates:
            return False
        began = time.perf_counter()
        statements: list[str] = [] if self.begun else ["BEGIN"]
        params: list[Any] = []
        for (table, columns), rows in self._appends.items():
            head, values = _insert(table, columns)
            statements.append(head + ", ".join([values] * len(rows)))
            for row in rows:
                params.extend(row)
        for (table, columns), bucket in self._updates.items():
            update = _checked_update(table, columns)
            for row in bucket.values():
                statements.append(update)
                params.extend(_checked_params(table, row))
        if commit:
            statements.append("COMMIT")
            self.committing = True
        with psycopg.ClientCursor(self._con) as cur:
            cur.execute("; ".join(statements), params)
        self.begun = True
        if not commit:  # with the COMMIT, the round trip is the commit's (observed by the store)
            self._took(began)
        self._appends.clear()
        self._updates.clear()
        return commit


@functools.lru_cache(maxsize=256)
def _insert(table: str, columns: tuple[str, ...]) -> tuple[str, str]:
    """``(head, row)`` of a multi-row insert: ``head`` then ``row`` once per row, comma-joined.
    Cached per table and columns, not per row count: a job of many rows must not leave its
    long statement in the cache."""
    return f"INSERT INTO {table} ({', '.join(columns)}) VALUES ", f"({', '.join(['%s'] * len(columns))})"


@functools.lru_cache(maxsize=256)
def _checked_update(table: str, columns: tuple[str, ...]) -> str:
    """A version-checked update that raises when its row is not at the expected version."""
    key, _expected, *rest = columns
    sets = ", ".join(f"{c} = %s" for c in rest)
    return (
        f"WITH changed AS (UPDATE {table} SET {sets} WHERE {key} = %s AND version = %s RETURNING 1) "
        "SELECT collab_expect_one((SELECT count(*) FROM changed), %s)"
    )


def _checked_params(table: str, row: tuple[Any, ...]) -> list[Any]:
    return [*row[2:], row[0], row[1], f"{table} {row[0]}"]


class _NoQueue:
    """PostgreSQL has no writer queue; readiness asks the database itself instead."""

    def depth(self) -> int:
        return 0

    def submit(self, fn: Callable[[Any], object]) -> Future[None]:
        """Done at once: there is no writer to wait for (readiness's writer probe)."""
        done: Future[None] = Future()
        done.set_result(None)
        return done


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
        pool_timeout_s: float = POOL_TIMEOUT_S,
    ) -> None:
        self.path = url
        self.url = url
        self._observe: StatementObserver | None = None
        self.writer = _NoQueue()
        self.pool_timeout_s = pool_timeout_s
        self._trouble = False  # the last attempt to reach the database failed
        options = (
            f"-c statement_timeout={statement_timeout_ms} -c lock_timeout={min(LOCK_TIMEOUT_MS, statement_timeout_ms)}"
            f" -c idle_in_transaction_session_timeout={IDLE_IN_TRANSACTION_MS}"
        )
        # Autocommit: a read is one statement, one round trip (a transaction around it would add
        # a BEGIN and a COMMIT); a write job opens its own transaction (PgTx).
        # tcp_user_timeout: a database host that vanishes without closing the socket (a network
        # partition) fails the statement waiting on it within seconds, not minutes of TCP retries.
        kwargs = {
            "autocommit": True,
            "options": options,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "tcp_user_timeout": CONNECT_TIMEOUT_S * 1000,
        }
        try:
            # Without the timeouts: a migration may take its time, and waits for another process's.
            with psycopg.connect(url, connect_timeout=CONNECT_TIMEOUT_S) as con:
                migrate(con)
        except psycopg.Error as exc:
            raise StoreUnavailable(f"cannot use the database {_safe(url)}: {_one_line(exc)}") from None
        self.pool = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs=kwargs,
            timeout=pool_timeout_s,
            reconnect_timeout=RECONNECT_TIMEOUT_S,
            name="collab",
            open=True,
        )
        self._closed = threading.Event()

    def observe_statements(self, observer: StatementObserver | None) -> None:
        """Call ``observer(kind, seconds)`` after every statement and commit (the server's metrics)."""
        self._observe = observer

    @contextmanager
    def _connection(self) -> Iterator[psycopg.Connection[Any]]:
        timeout = TROUBLE_POOL_TIMEOUT_S if self._trouble else self.pool_timeout_s
        with self.pool.connection(timeout=timeout) as con:
            yield con

    def _unavailable(self, exc: Exception) -> StoreUnavailable:
        self._trouble = True
        return StoreUnavailable(f"database unavailable: {_one_line(exc)}")

    def read(self, sql: Sql, params: Params | None = None) -> Rows:
        """Run a query outside any write transaction; the rows are fetched."""
        text = _text(sql)
        began = time.perf_counter()
        for dropped in range(self.pool.max_size + 1):
            con: psycopg.Connection[Any] | None = None
            try:
                with self._connection() as con, con.cursor() as cur:
                    cur.execute(pyformat(text) if params is not None else text, params)
                    rows = _rows(cur)
                break
            except psycopg.DataError as exc:
                raise _unstorable(exc) from None
            except (psycopg.OperationalError, PoolTimeout) as exc:
                if con is not None and con.broken and dropped < self.pool.max_size:
                    continue  # a connection the database dropped: the next one is probably new
                raise self._unavailable(exc) from None
        self._trouble = False
        if self._observe is not None:
            self._observe("read", time.perf_counter() - began)
        return rows

    def write(self, fn: Callable[[PgTx], T]) -> T:
        """Run ``fn(tx)`` in a transaction and commit; on a conflict with another transaction,
        roll back and run it again (a job must therefore decide from what it reads in ``tx``).

        A connection found dropped before the commit was sent is replaced and the job run again
        (nothing of it was written); one lost during the commit is :class:`StoreUnavailable`, as
        is a database that cannot be reached: whether that commit happened is not known, but it
        happened whole or not at all."""
        attempt = dropped = 0
        while attempt < MAX_ATTEMPTS:
            tx: PgTx | None = None
            try:
                with self._connection() as con:
                    tx = PgTx(con, self._observe)
                    try:
                        result = fn(tx)
                        # The COMMIT rides with the buffered writes when the connection has
                        # answered this job already; sent first on a pooled connection, the
                        # database may have dropped since, and a job whose outcome is unknown
                        # cannot be run again.
                        began = time.perf_counter()
                        if not tx.flush(commit=tx.begun):
                            began = time.perf_counter()  # the flush was observed as a write
                            tx.committing = True
                            con.commit()
                        if self._observe is not None:
                            self._observe("commit", time.perf_counter() - began)
                    except BaseException:
                        if not con.broken:
                            con.rollback()
                        raise
            except _CONFLICTS:
                _rolled_back(tx)
                attempt += 1
                time.sleep(random.uniform(0, 0.002 * attempt))  # noqa: S311 - jitter, not secrecy
                continue
            except (psycopg.OperationalError, PoolTimeout) as exc:
                _rolled_back(tx)
                if tx is not None and tx.broken and not tx.committing and dropped < self.pool.max_size:
                    dropped += 1
                    continue
                raise self._unavailable(exc) from None
            except psycopg.DataError as exc:
                _rolled_back(tx)
                raise _unstorable(exc) from None
            except BaseException:
                _rolled_back(tx)
                raise
            self._trouble = False
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

    def warm(self) -> None:
        """Nothing to load ahead (the DuckDB store's first write loads pyarrow; this one's does not)."""

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            self.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _unstorable(exc: psycopg.DataError) -> ApiError:
    """A value a request carried that PostgreSQL cannot hold: bad input, not a server fault.
    The one DuckDB takes and PostgreSQL refuses is text with a NUL character (U+0000)."""
    if "NUL" in str(exc):
        return ApiError(ErrorCode.INVALID_ARGUMENT, "data: text may not contain the NUL character (U+0000)")
    return ApiError(ErrorCode.INVALID_ARGUMENT, f"data: a value the database cannot store ({_one_line(exc)[:200]})")


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
