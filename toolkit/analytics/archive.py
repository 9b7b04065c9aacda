"""The archive a prune writes: the pruned executions as Parquet, in the mirror's layout.

``collab prune --archive DIR`` appends one batch per prune to ``DIR`` — a folder laid out like
the server's mirror (``events/part-NNNNNNNN.parquet``, ``commands/``, ``executions/``,
``steps/``, ``definition_versions/``, and ``outbox/`` for the deliveries; ``_mirror.json``
names the files) — so ``collab sql --mirror DIR`` and :func:`~toolkit.analytics.open_mirror`
query archived executions with the same tables and views as live ones. Executions are
archived without their engine state and webhook secret, as in the mirror; each definition
version they ran is archived once.
"""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from toolkit.analytics.manifest import load_state, part_name, save_state, sql_path, table_files
from toolkit.analytics.mirror import APPEND_ONLY, PRIVATE_COLUMNS, TABLES

__all__ = ["archive_executions"]


def archive_executions(cur: duckdb.DuckDBPyConnection, folder: str | Path, ids: list[str]) -> dict[str, int]:
    """Write executions ``ids`` (read through ``cur``, a cursor of the server's database that
    nothing else uses meanwhile) and every row keyed by them as the next batch of ``folder``;
    returns rows written per table. Files first, then the state file: a crash in between
    leaves files no reader reads."""
    folder = Path(folder)
    state = load_state(folder, APPEND_ONLY)
    batch = state["batch"] + 1
    for table in TABLES + ("outbox",):
        (folder / table).mkdir(parents=True, exist_ok=True)
    cur.execute("CREATE OR REPLACE TEMP TABLE _archived_ids AS SELECT unnest(?::VARCHAR[]) AS execution_id", [ids])
    # The archived executions as a TEMP table named `executions`: it shadows the real table
    # for this cursor, so the `steps` view parses only their states.
    cur.execute(
        "CREATE OR REPLACE TEMP TABLE executions AS SELECT * FROM main.executions "
        "WHERE execution_id IN (SELECT execution_id FROM _archived_ids)"
    )
    written: list[tuple[Path, Path]] = []
    counts: dict[str, int] = {}

    def public(table: str) -> str:  # the mirror's columns of the table
        return ", ".join(r[0] for r in cur.execute(f"DESCRIBE main.{table}").fetchall() if r[0] not in PRIVATE_COLUMNS)

    try:
        columns = public("executions")
        archived = "WHERE execution_id IN (SELECT execution_id FROM _archived_ids)"
        queries = {
            "definition_versions": _new_definition_versions(
                cur, folder, state, ", ".join(f"d.{c}" for c in public("definition_versions").split(", "))
            ),
            "commands": f"SELECT {public('commands')} FROM commands {archived}",
            "events": f"SELECT {public('events')} FROM events {archived}",
            "outbox": "SELECT * FROM outbox WHERE execution_id IN (SELECT execution_id FROM _archived_ids)",
            "steps": "SELECT s.*, x.version FROM steps s JOIN temp.executions x USING (execution_id)",
            "executions": f"SELECT {columns} FROM temp.executions",
        }
        for table, query in queries.items():
            final = folder / table / part_name(batch)
            tmp = final.with_name(final.name + ".tmp")
            rows = cur.execute(f"COPY ({query}) TO '{sql_path(tmp)}' (FORMAT parquet, COMPRESSION zstd)").fetchall()
            written.append((tmp, final))
            counts[table] = int(rows[0][0]) if rows else 0
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    finally:
        cur.execute("DROP TABLE IF EXISTS temp.executions")
        cur.execute("DROP TABLE IF EXISTS temp._archived_ids")
    for tmp, final in written:
        os.replace(tmp, final)
    state["batch"] = batch
    save_state(folder, state)
    return counts


def _new_definition_versions(cur, folder: Path, state: dict, columns: str) -> str:
    """The definition versions the archived executions ran that the archive does not hold yet."""
    used = (
        f"SELECT {columns} FROM definition_versions d JOIN (SELECT DISTINCT workspace_id, definition_id, "
        "definition_version AS version FROM temp.executions) u USING (workspace_id, definition_id, version)"
    )
    held = table_files(folder, state, "definition_versions")
    if not held:
        return used
    listing = ", ".join(f"'{sql_path(p)}'" for p in held)
    return (
        f"SELECT u.* FROM ({used}) u ANTI JOIN read_parquet([{listing}], union_by_name = true) h "
        "USING (workspace_id, definition_id, version)"
    )
