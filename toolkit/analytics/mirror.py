"""The append-only Parquet mirror of a running server's event log (semantics §12 (c)).

DuckDB lets one process open a database file read-write, or several read-only, never both:
analysts cannot open a live server's file. The server therefore copies what it committed
into Parquet files in the background — :class:`Mirror`, whose :meth:`Mirror.sync` the server
calls every few seconds and at shutdown — and :func:`open_mirror` gives any other process a
DuckDB connection with the same tables and views over those files.

Layout of ``folder`` (``data/events`` next to the server's database)::

    events/part-00000001.parquet        one file per table per sync that found new rows
    commands/…  definition_versions/…   (append-only tables, as on the server)
    executions/…  steps/…               (snapshots of the executions that changed)
    _mirror.json                        the batch number and high-water marks

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
next :class:`Mirror` deletes before it syncs again, so no row is ever mirrored twice.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

import duckdb

from toolkit.analytics.views import attach

__all__ = ["Mirror", "MirrorError", "open_mirror", "TABLES"]

STATE_FILE = "_mirror.json"
# Export order: an execution's newest row goes last, after the rows that reference it.
APPEND_ONLY = ("definition_versions", "commands", "events")
SNAPSHOTS = ("steps", "executions")
TABLES = APPEND_ONLY + SNAPSHOTS
_PART = re.compile(r"^part-(\d{8})\.parquet$")
_PRIVATE = ("state", "webhook_secret")  # engine state (large) and a secret stay out of the mirror


class MirrorError(RuntimeError):
    """The mirror and the database disagree (a different or rewound database file)."""


def _part_name(batch: int) -> str:
    return f"part-{batch:08d}.parquet"


def _sql_path(path: Path) -> str:
    return str(path).replace("'", "''")


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
        self.folder = Path(folder)
        self.folder.mkdir(parents=True, exist_ok=True)
        for table in TABLES:
            (self.folder / table).mkdir(exist_ok=True)
        self._cursor = con.cursor()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.batch, self.marks = self._load_state()
        self._discard_unrecorded()
        self.last_error: BaseException | None = None

    # ------------------------------------------------------------------ state

    def _load_state(self) -> tuple[int, dict[str, int]]:
        path = self.folder / STATE_FILE
        if not path.exists():
            return 0, {table: 0 for table in APPEND_ONLY}
        state = json.loads(path.read_text(encoding="utf-8"))
        marks = {table: int(state["marks"].get(table, 0)) for table in APPEND_ONLY}
        return int(state["batch"]), marks

    def _save_state(self) -> None:
        path = self.folder / STATE_FILE
        tmp = path.with_name(STATE_FILE + ".tmp")
        tmp.write_text(json.dumps({"format": 1, "batch": self.batch, "marks": self.marks}, indent=1),
                       encoding="utf-8")
        os.replace(tmp, path)

    def _discard_unrecorded(self) -> None:
        """Delete temporary files and parts of batches the state file does not record."""
        for table in TABLES:
            for entry in (self.folder / table).iterdir():
                match = _PART.match(entry.name)
                if entry.name.endswith(".tmp") or (match and int(match.group(1)) > self.batch):
                    entry.unlink()

    def _has_parts(self, table: str) -> bool:
        return any(_PART.match(p.name) for p in (self.folder / table).iterdir())

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
        marks = dict(self.marks)
        cur.execute("BEGIN TRANSACTION")
        try:
            ends = dict(zip(APPEND_ONLY, cur.execute(
                "SELECT " + ", ".join(f"(SELECT coalesce(max(rowid) + 1, 0) FROM {t})" for t in APPEND_ONLY)
            ).fetchall()[0]))
            for table in APPEND_ONLY:
                lo, hi = marks[table], ends[table]
                if hi < lo:
                    raise MirrorError(f"{table} has {hi} rows but {lo} were mirrored: {self.folder} was made from "
                                      "another database (move the folder away to start a new mirror)")
                query = f"SELECT * FROM {table} WHERE rowid >= {lo} AND rowid < {hi}"
                n = self._copy(cur, table, query, batch, hi > lo, written)
                if n != hi - lo:
                    raise MirrorError(f"{table}: expected {hi - lo} new rows, read {n}")
                counts[table] = n
                marks[table] = hi
            changed = (f"SELECT DISTINCT execution_id FROM commands "
                       f"WHERE rowid >= {self.marks['commands']} AND rowid < {ends['commands']}")
            any_changed = ends["commands"] > self.marks["commands"]
            # The changed executions, as a TEMP table named `executions`: it shadows the real
            # table for this cursor, so the server's `steps` view (which parses each execution's
            # state) reads only these executions.
            columns = self._columns(cur, "executions")
            cur.execute(f"CREATE OR REPLACE TEMP TABLE executions AS "
                        f"SELECT * FROM main.executions WHERE execution_id IN ({changed})")
            try:
                stray = cur.execute("SELECT count(*) FROM steps WHERE execution_id NOT IN "
                                    "(SELECT execution_id FROM temp.executions)").fetchall()[0][0]
                if stray:
                    raise MirrorError("the steps view did not read the changed executions only")
                counts["steps"] = self._copy(
                    cur, "steps", "SELECT s.*, x.version FROM steps s JOIN temp.executions x "
                                  "ON x.execution_id = s.execution_id", batch, any_changed, written)
                counts["executions"] = self._copy(cur, "executions", f"SELECT {columns} FROM temp.executions",
                                                  batch, any_changed, written)
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
        if written:
            for tmp, final in written:
                os.replace(tmp, final)
            self.batch = batch
            self.marks = marks
            self._save_state()
        return {table: n for table, n in counts.items() if n}

    def _columns(self, cur, table: str) -> str:
        names = [r[0] for r in cur.execute(f"DESCRIBE {table}").fetchall()]
        return ", ".join(n for n in names if n not in _PRIVATE)

    def _copy(self, cur, table: str, query: str, batch: int, has_rows: bool, written: list) -> int:
        """COPY ``query`` to this batch's file of ``table``; skipped when there is nothing new,
        unless the table has no file yet (the first file also fixes the table's schema)."""
        if not has_rows and self._has_parts(table):
            return 0
        final = self.folder / table / _part_name(batch)
        tmp = final.with_name(final.name + ".tmp")
        rows = cur.execute(f"COPY ({query}) TO '{_sql_path(tmp)}' (FORMAT parquet, COMPRESSION zstd)").fetchall()
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

    def __enter__(self) -> "Mirror":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def open_mirror(folder: str | Path) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection (in memory) over the Parquet mirror in ``folder``, with tables
    ``executions``, ``steps``, ``events``, ``commands``, ``definition_versions`` and every
    analytics view. Files the server adds later are seen
    by later queries (each query lists the folder again)."""
    folder = Path(folder)
    missing = [t for t in TABLES if not (folder / t).is_dir() or not any(
        _PART.match(p.name) for p in (folder / t).iterdir())]
    if missing:
        raise FileNotFoundError(f"no event mirror in {folder} (missing {', '.join(missing)}): "
                                "the server writes it; a first sync creates it")
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")

    def parts(table: str) -> str:
        return f"read_parquet('{_sql_path(folder / table)}/part-*.parquet', union_by_name = true)"

    for table in APPEND_ONLY:
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM {parts(table)}")
    con.execute(f"CREATE VIEW executions AS SELECT * FROM {parts('executions')} "
                "QUALIFY row_number() OVER (PARTITION BY execution_id ORDER BY version DESC) = 1")
    con.execute(f"CREATE VIEW steps AS SELECT * EXCLUDE (version) FROM {parts('steps')} "
                "QUALIFY version = max(version) OVER (PARTITION BY execution_id)")
    return attach(con)
