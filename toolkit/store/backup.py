"""Backups of a DuckDB database: a consistent copy, also while the server holds the file.

A copy is DuckDB's ``COPY FROM DATABASE`` into a new file ATTACHed to the same database
instance, inside one transaction: it is one snapshot of every table, sequence, index and view
(what a file copy of a live database is not), and the writer carries on while it runs. A
running server makes it on request (``POST /admin/backup``, :mod:`server.admin`) and streams
the file back; :func:`fetch_backup` is that request. :func:`restore` checks a backup opens as
a collab database and copies it to a new path.
"""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

if TYPE_CHECKING:
    from toolkit.store.duck import Store

__all__ = ["BackupError", "backup_beside", "backup_connection", "backup_file", "fetch_backup", "restore"]


class BackupError(RuntimeError):
    """A backup or restore that cannot be made, with the reason."""


def _fresh(path: str | Path) -> Path:
    path = Path(path)
    if path.exists():
        raise BackupError(f"{path} exists: choose a new file (a backup never overwrites one)")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def backup_connection(con: duckdb.DuckDBPyConnection, to: str | Path) -> int:
    """Copy the database ``con`` is connected to into the new file ``to`` (one snapshot);
    returns its size in bytes. ``con`` should be a cursor of its own: it runs a transaction."""
    to = _fresh(to)
    tmp = to.with_name(f".{to.name}.{uuid.uuid4().hex[:8]}.tmp")
    alias = f"backup_{uuid.uuid4().hex[:12]}"
    source = con.execute("SELECT current_database()").fetchall()[0][0]
    quoted = str(tmp).replace("'", "''")
    con.execute(f"ATTACH '{quoted}' AS {alias}")
    try:
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute(f'COPY FROM DATABASE "{source}" TO {alias}')
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    finally:
        con.execute(f"DETACH {alias}")
    if Path(f"{tmp}.wal").exists():  # the copy must be one self-contained file
        with duckdb.connect(str(tmp)) as copy:
            copy.execute("CHECKPOINT")
    try:
        os.replace(tmp, to)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return to.stat().st_size


def backup_beside(store: Store) -> Path:
    """A consistent copy of the DuckDB database ``store`` serves, in a new file next to it under
    a hidden temporary name: the caller sends it and removes it (``POST /admin/backup``)."""
    tmp = Path(store.path).parent / f".backup-{uuid.uuid4().hex}.duckdb"
    cur = store.con.cursor()  # a cursor of its own: the copy is one read snapshot
    try:
        backup_connection(cur, tmp)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        cur.close()
    return tmp


def backup_file(db: str | Path, to: str | Path) -> int:
    """Back up a database file no server holds; returns the backup's size in bytes."""
    if not Path(db).exists():
        raise BackupError(f"no database at {db}")
    try:
        con = duckdb.connect(str(db))
    except duckdb.IOException as exc:
        raise BackupError(
            f"cannot open {db}: {exc} (a running server holds it: pass --server URL and its --admin-token)"
        ) from None
    try:
        return backup_connection(con.cursor(), to)
    finally:
        con.close()


def fetch_backup(server: str, token: str | None, to: str | Path) -> int:
    """Ask the server at ``server`` for a backup (``POST /admin/backup``) and write it to ``to``."""
    import httpx

    if not token:
        raise BackupError("--admin-token (or COLLAB_ADMIN_TOKEN) is needed to ask a server for a backup")
    to = _fresh(to)
    tmp = to.with_name(f".{to.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        with httpx.stream(
            "POST", server.rstrip("/") + "/admin/backup", timeout=None, headers={"authorization": f"Bearer {token}"}
        ) as response:
            if response.status_code != 200:
                response.read()
                raise BackupError(f"the server answered {response.status_code}: {response.text}")
            with open(tmp, "wb") as out:
                for chunk in response.iter_bytes(1 << 20):
                    out.write(chunk)
                out.flush()
                os.fsync(out.fileno())
        os.replace(tmp, to)
    except httpx.HTTPError as exc:
        raise BackupError(f"cannot reach {server}: {exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return to.stat().st_size


def restore(backup: str | Path, db: str | Path) -> dict[str, int]:
    """Copy the backup ``backup`` to the new database file ``db``, after checking it is one;
    returns its executions', events' and workspaces' counts."""
    if not Path(backup).exists():
        raise BackupError(f"no backup at {backup}")
    try:
        con = duckdb.connect(str(backup), read_only=True)
    except duckdb.Error as exc:
        raise BackupError(f"{backup} is not a DuckDB database: {exc}") from None
    try:
        tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        if not {"schema_migrations", "executions", "workspaces"} <= tables:
            raise BackupError(f"{backup} is not a collab database (no schema_migrations, executions or workspaces)")
        counts = {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in ("workspaces", "executions", "events")
        }
    finally:
        con.close()
    db = _fresh(db)
    tmp = db.with_name(f".{db.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        shutil.copyfile(backup, tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.replace(tmp, db)
    finally:
        tmp.unlink(missing_ok=True)
    return counts
