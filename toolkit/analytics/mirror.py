"""The append-only Parquet mirror of a running server's event log (semantics §12 (c)).

DuckDB lets one process open a database file read-write, or several read-only, never both:
analysts cannot open a live server's file. The server therefore copies what it committed
into Parquet files in the background — :class:`Mirror`, whose :meth:`Mirror.sync` the server
calls every few seconds and at shutdown — and :func:`open_mirror` gives any other process a
DuckDB connection with the same tables and views over those files.

Layout of ``folder`` (``data/events`` next to the server's database)::

    events/part-00000001.parquet        one file per table per sync that found new rows
    events/day-2026-11-24-g000003.parquet   parts merged by a compaction: one per table and day
    commands/…  definition_versions/…   (append-only tables, as on the server)
    executions/…  steps/…               (snapshots of the executions that changed)
    _mirror.json                        batch number, high-water marks, the files readers read

What each sync exports, read in ONE snapshot (a read transaction on the server's own
database instance, so it never blocks the writer):

* ``events``, ``commands``, ``definition_versions`` are append-only: the rows whose ``rowid``
  is at or past the table's high-water mark. DuckDB numbers the rows of an append-only table
  densely in commit order, and the store commits through one writer, so a snapshot always
  holds rows ``0 … n-1``; each sync checks that it got exactly ``n - mark`` rows.
* ``executions`` is updated in place: every committed change of an execution also appends a
  row to ``commands``, so the executions named by the new commands are exported again, whole
  (without ``state`` and ``webhook_secret``), and so are their steps — the rows of the
  server's own ``steps`` view for just those executions, tagged with the execution
  ``version``. The mirror's ``executions`` view keeps the highest version of each execution,
  and its ``steps`` view the steps of that version: what the server's tables say.

Files are written under a temporary name and renamed into place, then ``_mirror.json`` is
replaced; a crash between the two leaves files of a batch the state does not know, which the
next :class:`Mirror` deletes before it syncs again, so no row is ever mirrored twice. Readers
read only the files the state file names (:mod:`toolkit.analytics.manifest`), and
:meth:`Mirror.compact` merges the parts into one file per table and day
(:mod:`toolkit.analytics.compact`), so an aged mirror stays as fast to query as a new one.

Pruning (:mod:`toolkit.services.retention`) deletes rows, and DuckDB renumbers the rowids of a
table whose deleted rows it vacuums at a checkpoint; each sync therefore checks that the last
row it mirrored still sits just below its mark (its *fingerprint*, the row's key) and finds it
again when it moved. A prune syncs first and calls :meth:`Mirror.rebase` after it deleted;
from then on the rowids past a mark may have gaps (rows deleted at the end of a table keep
their numbers), so a sync no longer expects exactly ``end - mark`` new rows.
"""

from __future__ import annotations

import copy
import os
import threading
from pathlib import Path

import duckdb

from toolkit.analytics import compact as compaction
from toolkit.analytics.manifest import (
    COMPACTED,
    PART,
    STATE_FILE,
    load_state,
    part_name,
    save_state,
    sql_path,
    table_files,
)
from toolkit.analytics.views import attach

__all__ = ["Mirror", "MirrorError", "MirrorConnection", "open_mirror", "server_mirror", "TABLES", "PRIVATE_COLUMNS"]

# Export order: an execution's newest row goes last, after the rows that reference it.
APPEND_ONLY = ("definition_versions", "commands", "events")
SNAPSHOTS = ("steps", "executions")
TABLES = APPEND_ONLY + SNAPSHOTS
# Engine state (large) and a secret stay out of the mirror, and so does the bookkeeping of the
# PostgreSQL mirror (which transaction wrote a row).
PRIVATE_COLUMNS = ("state", "webhook_secret", "txid")
# What identifies a row of each append-only table (its fingerprint).
ROW_KEYS = {
    "definition_versions": ("workspace_id", "definition_id", "version"),
    "commands": ("execution_id", "version"),
    "events": ("event_id",),
}


class MirrorError(RuntimeError):
    """The mirror and the database disagree (a different or rewound database file)."""


class Mirror:
    """Copies newly committed rows of a server database into ``folder`` as Parquet.

    ``source`` is a :class:`toolkit.store.Store` or a DuckDB connection to the server's
    database; the mirror reads through its own cursor of it. ``sync()`` is thread-safe and
    returns the number of rows it exported per table (tables with none are left out)::

        mirror = Mirror(store, "data/events")
        mirror.sync()            # every few seconds, and once more at shutdown
        mirror.close()

    or let it run on its own thread: ``mirror.start(interval=5.0)`` … ``mirror.stop()``
    (which syncs a last time and closes).
    """

    def __init__(self, source, folder: str | Path) -> None:
        con = source.con if hasattr(source, "con") and hasattr(source, "writer") else source
        if not isinstance(con, duckdb.DuckDBPyConnection):
            raise TypeError(f"Mirror needs a Store or a DuckDB connection, not {type(source).__name__}")
        self._cursor = con.cursor()
        self._open_folder(folder)

    def _open_folder(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            (self.folder / table).mkdir(exist_ok=True)
        self._lock = threading.Lock()  # held by a sync and by each change of the state
        self._compacting = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.state = load_state(self.folder, APPEND_ONLY)
        self._discard_unrecorded()
        self.last_error: BaseException | None = None

    @property
    def batch(self) -> int:
        return self.state["batch"]

    @property
    def marks(self) -> dict[str, int]:
        return self.state["marks"]

    # ------------------------------------------------------------------ state

    def _discard_unrecorded(self) -> None:
        """Delete temporary files, parts of batches and compacted files the state does not record."""
        known = {path for table in TABLES for path in table_files(self.folder, self.state, table)}
        known |= {self.folder / path for path, _ in self.state["retired"]}
        for table in TABLES:
            for entry in (self.folder / table).iterdir():
                part = PART.match(entry.name)
                stray = (part and int(part.group(1)) > self.batch) or (
                    COMPACTED.match(entry.name) and entry not in known
                )
                if entry.name.endswith(".tmp") or stray:
                    entry.unlink()

    def _has_files(self, table: str) -> bool:
        return bool(table_files(self.folder, self.state, table))

    def _fingerprint(self, cur, table: str, rowid: int) -> list | None:
        row = cur.execute(f"SELECT {', '.join(ROW_KEYS[table])} FROM {table} WHERE rowid = {int(rowid)}").fetchall()
        return list(row[0]) if row else None

    def _checked_marks(self, cur) -> dict[str, int]:
        """The marks, each moved to just past its fingerprint row when a checkpoint that vacuumed
        deleted rows renumbered the table."""
        marks = dict(self.marks)
        for table, fingerprint in self.state["fingerprints"].items():
            mark = marks.get(table, 0)
            if not mark or fingerprint is None or self._fingerprint(cur, table, mark - 1) == fingerprint:
                continue
            keys = ROW_KEYS[table]
            found = cur.execute(
                f"SELECT rowid FROM {table} WHERE " + " AND ".join(f"{k} = ?" for k in keys), fingerprint
            ).fetchall()
            if not found:
                raise MirrorError(
                    f"{table}: the last row mirrored is not in the database: {self.folder} was made "
                    "from another database, or rows were deleted behind its back (move the folder "
                    "away to start a new mirror)"
                )
            marks[table] = found[0][0] + 1
        return marks

    def rebase(self) -> None:
        """Take the database's current rows as mirrored. Only right after a sync, with no write
        in between (a prune does both on the writer thread): after rows were deleted, the marks
        of the append-only tables become their new ends."""
        with self._lock:
            cur = self._cursor
            cur.execute("BEGIN TRANSACTION")
            try:
                for table in APPEND_ONLY:
                    end = cur.execute(f"SELECT coalesce(max(rowid) + 1, 0) FROM {table}").fetchall()[0][0]
                    self.state["marks"][table] = end
                    self.state["fingerprints"][table] = self._fingerprint(cur, table, end - 1) if end else None
                self.state["pruned"] = True
            finally:
                cur.execute("COMMIT")
            save_state(self.folder, self.state)

    def compact(
        self, *, now_ms: int, exclude: list[str] | tuple[str, ...] = (), grace_ms: int = compaction.GRACE_MS
    ) -> dict:
        """Merge the parts into one file per table and day, leave out the rows of the executions
        in ``exclude`` (pruned ones), and delete files replaced more than ``grace_ms`` ago;
        returns ``{"merged", "written", "deleted"}``. Syncs carry on while it merges; readers
        see every row exactly once throughout (see :mod:`toolkit.analytics.compact`)."""
        with self._compacting:
            with self._lock:
                snapshot = copy.deepcopy(self.state)
            change = compaction.compact(self.folder, snapshot, TABLES, now_ms=now_ms, exclude=exclude)
            with self._lock:
                if change["written"]:  # else nothing changed: readers keep their views
                    compaction.apply(self.folder, self.state, change)
                deleted = compaction.delete_retired(self.folder, self.state, now_ms - grace_ms)
            return {"merged": change["merged"], "written": change["written"], "deleted": deleted}

    # ------------------------------------------------------------------ sync

    def sync(self) -> dict[str, int]:
        """Export every row committed since the last sync; returns rows per table."""
        with self._lock:
            return self._sync()

    def _sync(self) -> dict[str, int]:
        cur = self._cursor
        batch = self.batch + 1
        written: list[tuple[Path, Path]] = []
        counts: dict[str, int] = {}
        fingerprints = dict(self.state["fingerprints"])
        cur.execute("BEGIN TRANSACTION")
        try:
            marks = self._checked_marks(cur)
            start = dict(marks)
            ends = dict(
                zip(
                    APPEND_ONLY,
                    cur.execute(
                        "SELECT " + ", ".join(f"(SELECT coalesce(max(rowid) + 1, 0) FROM {t})" for t in APPEND_ONLY)
                    ).fetchall()[0],
                )
            )
            for table in APPEND_ONLY:
                lo, hi = marks[table], ends[table]
                if hi < lo:
                    raise MirrorError(
                        f"{table} has {hi} rows but {lo} were mirrored: {self.folder} was made from "
                        "another database (move the folder away to start a new mirror)"
                    )
                query = f"SELECT {self._columns(cur, table)} FROM {table} WHERE rowid >= {lo} AND rowid < {hi}"
                n = self._copy(cur, table, query, batch, hi > lo, written)
                # Rowids are dense until a prune deletes rows: then rows deleted at the end
                # leave gaps past the mark (their numbers are not reused).
                if n > hi - lo or (n < hi - lo and not self.state["pruned"]):
                    raise MirrorError(f"{table}: expected {hi - lo} new rows, read {n}")
                counts[table] = n
                marks[table] = hi
                if hi > lo:
                    fingerprints[table] = self._fingerprint(cur, table, hi - 1)
            changed = (
                f"SELECT DISTINCT execution_id FROM commands "
                f"WHERE rowid >= {start['commands']} AND rowid < {ends['commands']}"
            )
            any_changed = ends["commands"] > start["commands"]
            # The changed executions, as a TEMP table named `executions`: it shadows the real
            # table for this cursor, so the server's `steps` view (which parses each execution's
            # state) reads only these executions.
            columns = self._columns(cur, "executions")
            cur.execute(
                f"CREATE OR REPLACE TEMP TABLE executions AS "
                f"SELECT * FROM main.executions WHERE execution_id IN ({changed})"
            )
            try:
                stray = cur.execute(
                    "SELECT count(*) FROM steps WHERE execution_id NOT IN (SELECT execution_id FROM temp.executions)"
                ).fetchall()[0][0]
                if stray:
                    raise MirrorError("the steps view did not read the changed executions only")
                counts["steps"] = self._copy(
                    cur,
                    "steps",
                    "SELECT s.*, x.version FROM steps s JOIN temp.executions x ON x.execution_id = s.execution_id",
                    batch,
                    any_changed,
                    written,
                )
                counts["executions"] = self._copy(
                    cur, "executions", f"SELECT {columns} FROM temp.executions", batch, any_changed, written
                )
            finally:
                cur.execute("DROP TABLE IF EXISTS temp.executions")
            cur.execute("COMMIT")
        except BaseException:
            try:
                cur.execute("ROLLBACK")
            except duckdb.Error:
                pass
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            raise
        if written or marks != self.marks:
            for tmp, final in written:
                os.replace(tmp, final)
            self.state.update(batch=batch if written else self.batch, marks=marks, fingerprints=fingerprints)
            save_state(self.folder, self.state)
        return {table: n for table, n in counts.items() if n}

    def _columns(self, cur, table: str) -> str:
        names = [r[0] for r in cur.execute(f"DESCRIBE {table}").fetchall()]
        return ", ".join(n for n in names if n not in PRIVATE_COLUMNS)

    def _copy(self, cur, table: str, query: str, batch: int, has_rows: bool, written: list) -> int:
        """COPY ``query`` to this batch's file of ``table``; skipped when there is nothing new,
        unless the table has no file yet (the first file also fixes the table's schema)."""
        if not has_rows and self._has_files(table):
            return 0
        final = self.folder / table / part_name(batch)
        tmp = final.with_name(final.name + ".tmp")
        rows = cur.execute(f"COPY ({query}) TO '{sql_path(tmp)}' (FORMAT parquet, COMPRESSION zstd)").fetchall()
        written.append((tmp, final))
        return int(rows[0][0]) if rows else 0

    # ------------------------------------------------------------------ background thread

    def start(self, interval: float = 5.0) -> None:
        """Sync every ``interval`` seconds on a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return
        self._stopping.clear()

        def loop() -> None:
            while not self._stopping.wait(interval):
                try:
                    self.sync()
                    self.last_error = None
                except Exception as exc:  # noqa: BLE001 - keep mirroring; the next sync retries
                    self.last_error = exc

        self._thread = threading.Thread(target=loop, name="collab-mirror", daemon=True)
        self._thread.start()

    def stop(self) -> dict[str, int]:
        """Stop the thread, sync a last time and close; returns the last sync's counts."""
        if self._thread is not None:
            self._stopping.set()
            self._thread.join()
            self._thread = None
        try:
            return self.sync()
        finally:
            self.close()

    def close(self) -> None:
        with self._lock:
            try:
                self._cursor.close()
            except duckdb.Error:
                pass

    def __enter__(self) -> Mirror:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class MirrorConnection:
    """A DuckDB connection (in memory) over a mirror folder, with tables ``executions``,
    ``steps``, ``events``, ``commands``, ``definition_versions`` (and ``outbox`` in a prune's
    archive) and every analytics view. Before each statement it looks at the folder's state
    file and, when a sync or a compaction replaced it, points the tables at the files it now
    names: later statements see rows the server added, and never a row twice. Everything else
    is the DuckDB connection's own (``con.raw`` is that connection)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.raw = duckdb.connect()
        self.raw.execute("SET enable_progress_bar = false")
        self._seen: tuple | None = None
        self.refresh()
        attach(self.raw)

    def refresh(self) -> None:
        """Re-read the state file if it changed since the last statement."""
        try:
            st = os.stat(self.folder / STATE_FILE)
        except FileNotFoundError:
            raise FileNotFoundError(
                f"no event mirror in {self.folder} (no {STATE_FILE}): the server writes it; a first sync creates it"
            ) from None
        seen = (st.st_ino, st.st_mtime_ns, st.st_size)
        if seen == self._seen:
            return
        state = load_state(self.folder, APPEND_ONLY)
        files = {table: table_files(self.folder, state, table) for table in TABLES + ("outbox",)}
        missing = [t for t in TABLES if not files[t]]
        if missing:
            raise FileNotFoundError(
                f"no event mirror in {self.folder} (missing {', '.join(missing)}): "
                "the server writes it; a first sync creates it"
            )

        def scan(table: str) -> str:
            names = ", ".join(f"'{sql_path(p)}'" for p in files[table])
            return f"read_parquet([{names}], union_by_name = true)"

        for table in APPEND_ONLY + (("outbox",) if files["outbox"] else ()):
            self.raw.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM {scan(table)}")
        self.raw.execute(
            f"CREATE OR REPLACE VIEW executions AS SELECT * FROM {scan('executions')} "
            "QUALIFY row_number() OVER (PARTITION BY execution_id ORDER BY version DESC) = 1"
        )
        self.raw.execute(
            f"CREATE OR REPLACE VIEW steps AS SELECT * EXCLUDE (version) FROM {scan('steps')} "
            "QUALIFY version = max(version) OVER (PARTITION BY execution_id)"
        )
        self._seen = seen

    def execute(self, *args, **kwargs):
        self.refresh()
        return self.raw.execute(*args, **kwargs)

    def sql(self, *args, **kwargs):
        self.refresh()
        return self.raw.sql(*args, **kwargs)

    query = sql

    def __getattr__(self, name: str):
        return getattr(self.raw, name)

    def close(self) -> None:
        self.raw.close()

    def __enter__(self) -> MirrorConnection:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_mirror(folder: str | Path) -> MirrorConnection:
    """A connection over the Parquet mirror in ``folder`` (see :class:`MirrorConnection`):
    the same tables and views as a server's database, and the files the server adds later
    are seen by later statements."""
    folder = Path(folder)
    if not (folder / STATE_FILE).exists():
        missing = [t for t in TABLES if not (folder / t).is_dir()]
        raise FileNotFoundError(
            f"no event mirror in {folder} (missing {', '.join(missing) or STATE_FILE}): "
            "the server writes it; a first sync creates it"
        )
    return MirrorConnection(folder)


def server_mirror(store, folder: str | Path | None = None, lease_ms: int | None = None) -> Mirror | None:
    """The mirror a server keeps of its store, not started: on DuckDB in ``folder``, by default
    ``events/`` next to the database file (none for ``:memory:``); on PostgreSQL only when a
    ``folder`` is given, written by one process at a time, under a lease of ``lease_ms``
    (:class:`toolkit.analytics.shared_mirror.SharedMirror`)."""
    if store.dialect == "postgres":
        if folder is None:
            return None
        from toolkit.analytics.shared_mirror import LEASE_MS, SharedMirror  # psycopg is the `postgres` extra

        return SharedMirror(store.url, folder, lease_ms=lease_ms or LEASE_MS)
    if folder is None:
        if str(store.path) == ":memory:":
            return None
        folder = Path(store.path).parent / "events"
    return Mirror(store, folder)
