"""The single writer: one thread owns the write connection and commits jobs in groups.

DuckDB allows one read-write process and, inside it, optimistic concurrency in which plain
appends never conflict — so two requests could both "reach quorum". Funnelling every write
through one thread serialises them (per execution and globally), and lets the writer commit
several queued jobs in one transaction (group commit): each caller is answered only after
the commit that holds its job.

A job is ``fn(tx) -> result``. It may raise :class:`~toolkit.errors.ApiError` *before* it
writes (validation, engine preconditions); that error goes back to its caller and the rest
of the group commits. Anything else — or an ApiError after a write — rolls the group back,
and each job is then retried alone, so one bad job never takes others down with it.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

import duckdb

from toolkit.errors import ApiError
from toolkit.store.statements import parsed

if TYPE_CHECKING:
    import pyarrow as pa

MAX_GROUP = 64
MAX_UPDATE_ROWS = 64  # rows per UPDATE statement (its text grows with them)

# Called with (kind, seconds) after each statement, kind "read", "write" or "commit" (metrics).
StatementObserver = Callable[[str, float], None]

# A statement's parameters: positional (``?``) or named (``$name``).
Params = Sequence[Any] | Mapping[str, Any]
# A stored row: its columns' values, as DuckDB returns them.
Row = tuple[Any, ...]
# SQL text, or a statement parsed once (toolkit.store.statements) for a hot read path.
Sql = str | duckdb.Statement

T = TypeVar("T")


class Rows(list[Row]):
    """A statement's rows, fetched at once: DuckDB refuses new work on a connection whose
    last result was not read to the end, so no result is ever left half-read."""

    def __init__(self, con: duckdb.DuckDBPyConnection, sql: Sql, params: Params | None = None) -> None:
        result = con.execute(sql, params) if params is not None else con.execute(sql)
        super().__init__(result.fetchall() if result.description is not None else ())

    def fetchone(self) -> Row | None:
        return self[0] if self else None

    def fetchall(self) -> list[Row]:
        return list(self)


class Buffered:
    """What a write job sees on either backend, but the statements: ``append`` for rows that
    can wait for the end of the job (or the group), ``update`` for version-checked row updates,
    also written at the end, and rollback / after-commit hooks for in-memory caches the job
    touched. :class:`Tx` (DuckDB) and ``PgTx`` (PostgreSQL) add ``execute``, ``next_key`` and
    ``flush``."""

    __slots__ = ("dirty", "_appends", "_updates", "_on_rollback", "_after_commit", "_observe")

    def __init__(self, observe: StatementObserver | None = None) -> None:
        self._observe = observe
        self.dirty = False
        self._appends: dict[tuple[str, tuple[str, ...]], list[Row]] = {}
        self._updates: dict[tuple[str, tuple[str, ...]], dict[Any, Row]] = {}
        self._on_rollback: list[Callable[[], None]] = []
        self._after_commit: list[Callable[[], None]] = []

    def _took(self, began: float) -> None:
        if self._observe is not None:
            self._observe("write", time.perf_counter() - began)

    def append(self, table: str, columns: tuple[str, ...], rows: list[Row]) -> None:
        if rows:
            self.dirty = True
            self._appends.setdefault((table, columns), []).extend(rows)

    def update(self, table: str, columns: tuple[str, ...], row: Row) -> None:
        """Version-checked update: ``columns`` are ``(key, "expected_version", *columns to set)``;
        the row whose key is ``row[0]`` and whose ``version`` is ``row[1]`` gets the rest (which
        should include its new ``version``). Several updates of one key in one group collapse
        into one: the first's expected version, the last's values."""
        self.dirty = True
        bucket = self._updates.setdefault((table, columns), {})
        previous = bucket.get(row[0])
        bucket[row[0]] = row if previous is None else (row[0], previous[1]) + tuple(row[2:])

    def on_rollback(self, hook: Callable[[], None]) -> None:
        self._on_rollback.append(hook)

    def after_commit(self, hook: Callable[[], None]) -> None:
        """``hook`` runs after the commit, in the context of the job that registered it (so
        the request id of the request behind the job reaches the work the commit starts)."""
        self._after_commit.append(functools.partial(contextvars.copy_context().run, hook))


class Tx(Buffered):
    """What a job sees on DuckDB: :class:`Buffered` and ``execute`` on the writer's connection.
    Each table's buffered rows get one bulk insert per commit, since every statement costs
    DuckDB far more than a row does."""

    __slots__ = ("con", "_keys")

    def __init__(
        self, con: duckdb.DuckDBPyConnection, keys: KeySource | None = None, observe: StatementObserver | None = None
    ) -> None:
        super().__init__(observe)
        self.con = con
        self._keys = keys

    def execute(self, sql: str, params: Params | None = None) -> Rows:
        if not sql.lstrip().upper().startswith("SELECT"):
            self.dirty = True
        began = time.perf_counter()
        rows = Rows(self.con, sql, params)
        self._took(began)
        return rows

    def next_key(self) -> int:
        """The next list key (creation order for paging), without a statement: the writer is
        the only one handing them out, and a rolled-back key is simply never used."""
        assert self._keys is not None  # the Writer gives every Tx its KeySource
        return self._keys.next()

    def next_keys(self, n: int) -> list[int]:
        """``n`` next list keys, ascending."""
        return [self.next_key() for _ in range(n)]

    def flush(self) -> None:
        """Write what the group buffered: inserts first (a new row may be updated in the same
        group), each table in one statement, then the version-checked updates, row by row."""
        # DuckDB reads the Arrow tables straight from the local variables named in the SQL
        # (a replacement scan): cheaper than registering a view per statement.
        for (table, columns), rows in self._appends.items():
            _append = _arrow(columns, rows)  # noqa: F841 - read by name in the SQL below
            began = time.perf_counter()
            self.con.execute(f"INSERT INTO {table} ({', '.join(columns)}) SELECT * FROM _append")
            self._took(began)
        # Updates go in one statement per table, each row's values chosen by its key with CASE,
        # and the rows found by `key IN (…)`, which DuckDB serves from the key's index (a join
        # with the batch, or a version condition beside the key, scans row groups instead: a cost
        # that grows with every execution ever stored). The version check is inside the statement:
        # a stale row makes it fail (DuckDB's error()), a missing one is not counted.
        for (table, columns), bucket in self._updates.items():
            key, _expected, *rest = columns
            at = rest.index("version") + 2  # the new version's place in a row
            rows = list(bucket.values())
            for start in range(0, len(rows), MAX_UPDATE_ROWS):
                chunk = rows[start : start + MAX_UPDATE_ROWS]
                params: list[Any] = []
                for index in range(2, len(columns)):
                    if index != at:
                        for row in chunk:
                            params += (row[0], row[index])
                for row in chunk:
                    params += (row[0], row[1], row[at])
                params += [row[0] for row in chunk]
                began = time.perf_counter()
                try:
                    ((count,),) = self.con.execute(
                        _checked_update(table, key, tuple(rest), len(chunk)), params
                    ).fetchall()
                except duckdb.InvalidInputException as exc:
                    if _STALE not in str(exc):
                        raise
                    count = -1
                self._took(began)
                if count != len(chunk):
                    keys = ", ".join(str(row[0]) for row in chunk)
                    raise ConcurrentChange(f"{table} {keys}: changed concurrently")
        self._appends.clear()
        self._updates.clear()


_STALE = "collab: stale version"


@functools.lru_cache(maxsize=256)
def _checked_update(table: str, key: str, columns: tuple[str, ...], n: int) -> duckdb.Statement:
    """``UPDATE`` of ``columns`` (one is ``version``) in ``n`` rows found by ``key``, parsed once
    per shape. Its parameters: for each column but ``version``, (key, value) of each row; then
    (key, expected version, new version) of each row; then the ``n`` keys. It fails (``_STALE``)
    unless every row is at its expected version."""

    def by_key(then: str) -> str:
        return f"CASE {key} " + " ".join(f"WHEN ? THEN {then}" for _ in range(n)) + " END"

    sets = [f"{c} = {by_key('?')}" for c in columns if c != "version"]
    sets.append(f"version = {by_key(f'(CASE WHEN version = ? THEN ? ELSE error({_STALE!r}) END)')}")
    keys = ", ".join("?" for _ in range(n))
    return parsed(f"UPDATE {table} SET {', '.join(sets)} WHERE {key} IN ({keys})")


class ConcurrentChange(Exception):
    """A version check failed: another writer changed the row since it was read."""


def _arrow(columns: tuple[str, ...], rows: list[Row]) -> pa.Table:
    # Imported at the first append: a command that appends nothing (`collab workspace create`)
    # does not pay for pyarrow and the pandas glue its first table loads.
    import pyarrow as pa

    return pa.table(dict(zip(columns, (list(c) for c in zip(*rows)))))


class KeySource:
    """Monotonic keys, resumed after the largest stored one at start-up."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        row = con.execute(
            "SELECT greatest((SELECT coalesce(max(list_key), 0) FROM executions), "
            "(SELECT coalesce(max(list_key), 0) FROM definitions), "
            "(SELECT coalesce(max(list_key), 0) FROM outbox))"
        ).fetchone()
        assert row is not None  # an aggregate without GROUP BY always answers one row
        self._last: int = row[0]

    def next(self) -> int:
        self._last += 1
        return self._last

    @property
    def last(self) -> int:
        """The largest key handed out so far (a reader's upper bound for paging windows)."""
        return self._last


class _Job:
    __slots__ = ("fn", "future", "context", "exclusive")

    # fn takes a Tx, or the connection itself when exclusive
    def __init__(self, fn: Callable[[Any], Any], future: Future[Any], exclusive: bool = False) -> None:
        self.fn = fn
        self.future = future
        self.context = contextvars.copy_context()  # the submitter's (a request's id, for its logs)
        self.exclusive = exclusive  # fn(con), alone and outside any transaction


class Writer:
    """``call(fn)`` from any thread, or ``await run(fn)`` from the event loop."""

    def __init__(self, con: duckdb.DuckDBPyConnection, name: str = "collab-writer") -> None:
        self.con = con
        self.keys = KeySource(con)
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._closed = False
        self.observe: StatementObserver | None = None
        self._thread.start()

    def warm(self) -> None:
        """Pay for the first append's imports now (pyarrow, and the pandas glue its first table
        loads when pandas is installed): a server calls it at start, so no request waits."""
        _arrow(("warm",), [(1,)])

    def depth(self) -> int:
        """Jobs queued and not yet taken into a group (approximate, like any queue size)."""
        return self._queue.qsize()

    def submit(self, fn: Callable[[Tx], T]) -> Future[T]:
        if self._closed:
            raise RuntimeError("the store is closed")
        future: Future[T] = Future()
        self._queue.put(_Job(fn, future))
        return future

    def call(self, fn: Callable[[Tx], T]) -> T:
        return self.submit(fn).result()

    async def run(self, fn: Callable[[Tx], T]) -> T:
        return await asyncio.wrap_future(self.submit(fn))

    def exclusive(self, fn: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
        """Run ``fn(con)`` on the writer thread between two commits, outside any transaction,
        and return its result: no other write happens while it runs. For work that needs the
        database still (a checkpoint and file copy for a backup, a prune's delete and the
        mirror's bookkeeping around it); keep it short, every write waits for it."""
        if self._closed:
            raise RuntimeError("the store is closed")
        future: Future[T] = Future()
        self._queue.put(_Job(fn, future, exclusive=True))
        return future.result()

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._queue.put(None)
            self._thread.join()

    # ------------------------------------------------------------------ the thread

    def _loop(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if job.exclusive:
                self._run_exclusive(job)
                continue
            group = [job]
            while len(group) < MAX_GROUP:
                try:
                    nxt = self._queue.get_nowait()
                except queue.Empty:
                    break
                if nxt is None:
                    self._run_group(group)
                    return
                if nxt.exclusive:  # the group commits first, then the exclusive job runs alone
                    self._run_group(group)
                    group = []
                    self._run_exclusive(nxt)
                    break
                group.append(nxt)
            if group:
                self._run_group(group)

    def _run_exclusive(self, job: _Job) -> None:
        try:
            job.future.set_result(job.fn(self.con))
        except BaseException as exc:  # noqa: BLE001 - the caller gets every failure
            try:
                self.con.execute("ROLLBACK")  # a transaction the job left open must not hold the next group
            except duckdb.Error:
                pass
            job.future.set_exception(exc)

    def _run_group(self, group: list[_Job]) -> None:
        if len(group) > 1 and self._try_group(group):
            return
        for job in group:
            self._try_group([job], alone=True)

    def _try_group(self, group: list[_Job], alone: bool = False) -> bool:
        tx = Tx(self.con, self.keys, self.observe)
        outcomes: list[tuple[_Job, bool, Any]] = []
        self.con.execute("BEGIN")
        try:
            for job in group:
                before = tx.dirty
                tx.dirty = False
                try:
                    outcomes.append((job, True, job.context.run(job.fn, tx)))
                except ApiError as exc:
                    if tx.dirty:
                        raise
                    outcomes.append((job, False, exc))
                tx.dirty = tx.dirty or before
            tx.flush()
            began = time.perf_counter()
            self.con.execute("COMMIT")
            if self.observe is not None:
                self.observe("commit", time.perf_counter() - began)
        except BaseException as exc:  # noqa: BLE001 - every failure must reach a caller
            self._rollback(tx)
            if not alone:
                return False
            group[0].future.set_exception(exc)
            return True
        for hook in tx._after_commit:
            hook()
        for job, ok, value in outcomes:
            if ok:
                job.future.set_result(value)
            else:
                job.future.set_exception(value)
        return True

    def _rollback(self, tx: Tx) -> None:
        try:
            self.con.execute("ROLLBACK")
        except duckdb.Error:
            pass
        for hook in reversed(tx._on_rollback):
            hook()
