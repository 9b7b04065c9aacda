"""The Parquet mirror of a PostgreSQL database that several server processes serve.

The folder has the layout, state file, readers (:func:`~toolkit.analytics.open_mirror`) and
compaction of the DuckDB server's mirror (:mod:`toolkit.analytics.mirror`); what differs is
who writes it and how new rows are found.

* **One writer at a time.** Every process started with ``collab serve --mirror DIR`` runs a
  :class:`SharedMirror` on ``DIR``; before each sync it takes or renews the lease
  ``("mirror", DIR)`` (``leases`` table, ``--lease-seconds``). Only the holder syncs and compacts;
  the others try again at their next sync, and one of them takes over once the holder has
  stopped (it gives the lease up) or died (the lease runs out). On taking over it re-reads the
  folder's state, which the previous holder left complete (files first, state file last).
* **New rows by transaction.** The marks are a transaction id: each sync copies the rows of the
  transactions that ended since the last one (:func:`toolkit.store.postgres.eventlog.pull_since`),
  which holds however many processes commit and in whatever order; at most :data:`CHUNK`
  commands' worth a batch, several batches a sync while the mirror is behind.

The folder must be one place for all the processes given it (one machine, or shared storage);
give ``--mirror`` to the processes that can write it.
"""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pyarrow.parquet as pq

from toolkit.analytics.manifest import load_state, part_name, save_state
from toolkit.analytics.mirror import APPEND_ONLY, TABLES, Mirror, MirrorError
from toolkit.store.postgres import eventlog

__all__ = ["SharedMirror", "LEASE_MS", "CHUNK"]

LEASE_MS = 30_000  # the holder renews every sync (5 s); a dead holder's turn passes within this
# Commands (with their events, executions and steps) one batch reads at most: about 1-2 s of
# reading, so that a first sync of a large database is many short batches, none of which holds
# the lease long enough to lose it.
CHUNK = 10_000
MIN_CHUNK = 100
CONNECT_TIMEOUT_S = 5


class SharedMirror(Mirror):
    """The mirror of the PostgreSQL database at ``url`` in ``folder``, written by whichever
    process holds its lease. ``sync()`` returns rows exported per table (nothing when another
    process holds the lease); ``start``/``stop``/``compact`` are :class:`Mirror`'s."""

    def __init__(
        self, url: str, folder: str | Path, owner: str | None = None, *, lease_ms: int = LEASE_MS, chunk: int = CHUNK
    ) -> None:
        self.url = url
        self.lease_ms = lease_ms
        self.chunk = chunk
        self.owner = owner or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._con: psycopg.Connection[Any] | None = None
        self.holding = False
        self._open_folder(folder)
        self.key = str(self.folder.resolve())

    def _connection(self) -> psycopg.Connection[Any]:
        if self._con is None or self._con.closed:
            self._con = psycopg.connect(
                self.url, connect_timeout=CONNECT_TIMEOUT_S, options="-c statement_timeout=120000"
            )
        return self._con

    def _sync(self) -> dict[str, int]:
        try:
            return self._sync_held()
        except psycopg.OperationalError:
            self._drop_connection()  # the next sync connects again
            raise

    def _sync_held(self) -> dict[str, int]:
        """Sync batch after batch while a batch leaves rows behind and a quarter of the lease has
        not gone by, so that a mirror far behind catches up without a sync ever holding the
        lease for long."""
        began = time.monotonic()
        counts: dict[str, int] = {}
        while True:
            written, more = self._sync_chunk()
            for table, n in written.items():
                counts[table] = counts.get(table, 0) + n
            if not more or (time.monotonic() - began) * 1000 > self.lease_ms / 4:
                return counts

    def _sync_chunk(self) -> tuple[dict[str, int], bool]:
        """One batch: the rows of about ``self.chunk`` commands committed since the last one;
        whether more were left for the next (``self.chunk`` halves after a batch too slow to
        write)."""
        con = self._connection()
        claimed = time.monotonic()
        if not eventlog.claim_lease(con, "mirror", self.key, self.owner, _now_ms(), self.lease_ms):
            self.holding = False
            return {}, False
        if not self.holding:  # another process may have written the folder meanwhile
            self.state = load_state(self.folder, APPEND_ONLY)
            self._discard_unrecorded()
            self.holding = True
        lo = self.state["marks"].get("txid")
        try:
            eventlog.snapshot(con)
            hi = eventlog.snapshot_xmin(con)
            upto = eventlog.window_end(con, lo, hi, self.chunk) if lo is None or hi > lo else hi
            tables = eventlog.pull_since(con, lo, upto) if lo is None or upto > lo else {}
        finally:
            con.rollback()
        if (time.monotonic() - claimed) * 1000 > self.lease_ms / 2:
            # Another process may take the lease over soon: leave this batch to whoever holds it,
            # and read less at a time, so that a batch fits in the lease.
            self.chunk = max(MIN_CHUNK, self.chunk // 2)
            raise MirrorError(
                f"a sync took longer than half the mirror's lease; not writing it (next: {self.chunk} commands)"
            )
        batch = self.batch + 1
        written = []
        counts = {}
        try:
            for table in TABLES:
                rows = tables.get(table)
                if rows is None or (rows.num_rows == 0 and self._has_files(table)):
                    continue
                final = self.folder / table / part_name(batch)
                tmp = final.with_name(final.name + ".tmp")
                pq.write_table(rows, tmp, compression="zstd")
                written.append((tmp, final))
                counts[table] = rows.num_rows
        except BaseException:
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            raise
        for tmp, final in written:
            os.replace(tmp, final)
        if written or lo != upto:
            self.state["marks"]["txid"] = upto
            if written:
                self.state["batch"] = batch
            save_state(self.folder, self.state)
        return {table: n for table, n in counts.items() if n}, upto < hi

    def compact(self, *, now_ms: int, exclude=(), grace_ms: int | None = None) -> dict:
        """:meth:`Mirror.compact`, by the lease holder only (others return nothing done)."""
        if not self.holding:
            return {"merged": 0, "written": 0, "deleted": 0}
        if grace_ms is None:
            return super().compact(now_ms=now_ms, exclude=exclude)
        return super().compact(now_ms=now_ms, exclude=exclude, grace_ms=grace_ms)

    def rebase(self) -> None:
        """Nothing to do: deleting rows moves no transaction id."""

    def close(self) -> None:
        with self._lock:
            if self.holding and self._con is not None and not self._con.closed:
                try:
                    eventlog.release_lease(self._con, "mirror", self.key, self.owner)
                except psycopg.Error:
                    pass  # the lease runs out by itself
            self.holding = False
            self._drop_connection()

    def _drop_connection(self) -> None:
        if self._con is not None:
            try:
                self._con.close()
            except psycopg.Error:
                pass
            self._con = None


def _now_ms() -> int:
    return int(time.time() * 1000)
