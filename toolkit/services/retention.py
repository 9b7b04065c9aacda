"""Retention: remove finished executions older than a cut-off, with everything keyed by them.

:func:`prune` is what ``collab prune`` runs on a stopped server's file (DuckDB admits one
process per file) or on a PostgreSQL database while its servers run, and what the server's
background loop runs with ``collab serve --retention 90d``. It never touches a running
execution (one waiting for a reviewer, an agent or a timer): only ``completed``, ``failed``
and ``cancelled`` ones whose end is older than the cut-off, and not while one of their
webhook deliveries is still pending.

On DuckDB each round runs on the store's writer thread between two commits
(``Writer.exclusive``), so no request writes meanwhile: the Parquet mirror is synced first (everything committed is
mirrored), the round's executions are archived (``archive``), deleted in one transaction, the
database checkpointed (DuckDB vacuums the deleted rows now, renumbering rowids while the mirror
knows why) and the mirror's marks moved to the new ends. Rounds hold at most ``round_size``
executions, so writes never wait long. After the last round the mirror is compacted without
the pruned executions' rows, so it keeps matching the database.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from toolkit.analytics.archive import archive_executions
from toolkit.store import retention as sql

__all__ = ["PruneReport", "parse_age", "prune"]

log = logging.getLogger("collab.retention")

ROUND_SIZE = 2000
_UNITS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_AGE = re.compile(r"^\s*(\d+)\s*([smhd])\s*$")


def parse_age(text: str, what: str = "age") -> int:
    """``"90d"``, ``"12h"``, ``"30m"`` or ``"45s"`` in milliseconds.

    >>> parse_age("90d")
    7776000000
    """
    match = _AGE.match(text or "")
    if not match or int(match.group(1)) == 0:
        raise ValueError(f"{what}: {text!r} is not a positive age such as 90d, 12h, 30m or 45s")
    return int(match.group(1)) * _UNITS[match.group(2)]


@dataclass
class PruneReport:
    cutoff_ms: int
    dry_run: bool
    executions: int = 0
    rows: dict[str, int] = field(default_factory=dict)  # removed (or, dry run, to remove) per table
    archived: dict[str, int] = field(default_factory=dict)  # rows written to the archive per table
    mirror: dict | None = None  # the mirror's compaction, when there is one
    execution_ids: list[str] = field(default_factory=list)  # dry run: the executions that would go

    def add(self, counts: dict[str, int], into: dict[str, int]) -> None:
        for table, n in counts.items():
            into[table] = into.get(table, 0) + n

    def to_json(self) -> dict:
        out = {
            "cutoffMs": self.cutoff_ms,
            "dryRun": self.dry_run,
            "executions": self.executions,
            "rows": self.rows,
            "archived": self.archived,
            "mirror": self.mirror,
        }
        if self.dry_run:
            out["executionIds"] = self.execution_ids
        return out


def prune(
    store,
    *,
    older_than_ms: int,
    now_ms: int,
    archive: str | Path | None = None,
    dry_run: bool = False,
    mirror=None,
    round_size: int = ROUND_SIZE,
) -> PruneReport:
    """Remove the finished executions of ``store`` that ended before ``now_ms - older_than_ms``
    (see the module docstring); ``archive`` first writes them to that folder
    (:func:`toolkit.analytics.archive.archive_executions`), ``dry_run`` only counts them,
    ``mirror`` (a :class:`toolkit.analytics.Mirror` of the store) is kept in step."""
    if older_than_ms <= 0:
        raise ValueError("older_than_ms must be positive")
    report = PruneReport(cutoff_ms=now_ms - older_than_ms, dry_run=dry_run)
    if dry_run:
        ids = sql.finished_before(store.read, report.cutoff_ms)
        report.executions, report.execution_ids = len(ids), ids
        if ids:
            report.rows = (
                sql.count_rows_shared(store.read, ids) if store.shared else sql.count_rows(store.cursor(), ids)
            )
        return report
    if store.shared:
        return _prune_shared(store, report, archive, round_size)
    pruned: list[str] = []
    while True:
        ids = store.writer.exclusive(lambda con: _round(con, report, archive, mirror, round_size))
        pruned += ids
        if len(ids) < round_size:
            break
    if mirror is not None and pruned:
        report.mirror = mirror.compact(now_ms=now_ms, exclude=pruned)
    return report


def _round(con: duckdb.DuckDBPyConnection, report: PruneReport, archive, mirror, round_size: int) -> list[str]:
    """One round, on the writer thread with no write in flight."""
    if mirror is not None:
        mirror.sync()
    cur = con.cursor()
    try:
        ids = sql.finished_before(cur.execute, report.cutoff_ms, limit=round_size)
        if not ids:
            return []
        steps = sql.count_rows(cur, ids)["steps"]
        if archive is not None:
            report.add(archive_executions(cur, archive, ids), report.archived)
    finally:
        cur.close()
    deleted = sql.delete_executions(con, ids)
    deleted["steps"] = steps
    report.add(deleted, report.rows)
    report.executions += len(ids)
    try:
        con.execute("CHECKPOINT")
    except duckdb.Error as exc:  # the mirror finds renumbered rows itself at its next sync
        log.warning("checkpoint after prune failed: %s", exc)
    if mirror is not None:
        mirror.rebase()
    return ids


def _prune_shared(store, report: PruneReport, archive, round_size: int) -> PruneReport:
    """Prune a database other processes write (PostgreSQL): each round is one write job, which
    locks its executions (a prune running at once takes others) and their deliveries, archives
    them from inside its transaction, and deletes them. The mirror is left as it is: it is the
    history the servers' analysts read (see docs/decisions.md)."""
    while True:
        ids, deleted, archived = store.write(lambda tx: _shared_round(tx, report.cutoff_ms, archive, round_size))
        if not ids:
            return report
        report.executions += len(ids)
        report.add(deleted, report.rows)
        report.add(archived, report.archived)


def _shared_round(tx, cutoff_ms: int, archive, round_size: int) -> tuple[list[str], dict, dict]:
    from toolkit.store.postgres import eventlog  # psycopg is the `postgres` extra

    ids = sql.claim_finished(tx, cutoff_ms, round_size)
    if not ids:
        return [], {}, {}
    steps = sql.count_steps_shared(tx.execute, ids)  # the other tables' counts come from the deletes
    archived: dict[str, int] = {}
    if archive is not None:
        # Read in this transaction, so the archive holds exactly what the job deletes.
        con = duckdb.connect()
        try:
            eventlog.pull(tx.con, con, ids=ids, extra=("outbox",))
            archived = archive_executions(con, archive, ids)
        finally:
            con.close()
    deleted = sql.delete_claimed(tx, ids)
    deleted["steps"] = steps
    return ids, deleted, archived
