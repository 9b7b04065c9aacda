"""Compaction of a Parquet mirror folder: one file per table and day instead of one per sync.

The server syncs its mirror every few seconds, one file per table per sync: ~17,000 files a
day, and a query opens every one of them. :func:`compact` merges the parts (and any earlier
compacted file of the same day) into ``day-YYYY-MM-DD-gNNNNNN.parquet`` per table, the day
being the UTC day the part was written. For ``executions`` and ``steps``, which hold a new
snapshot of an execution whenever it changes, only each execution's newest snapshot in the
merged files is kept (the readers' views keep the newest one anyway).

Readers never see a row twice or miss one, because they read only the files the state file
names (:mod:`toolkit.analytics.manifest`): the new files are written and renamed into place
first, then one ``os.replace`` of the state file swaps the parts for them. The replaced files
are *retired* — listed with the time they were replaced and deleted by a later compaction
once ``grace_ms`` has passed — so a reader that listed them just before the swap still finds
them while its query runs.

``exclude`` drops every row of those executions (what a prune removed from the database):
the compacted files holding any are rewritten without them.
"""

from __future__ import annotations

import os
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import pyarrow as pa

from toolkit.analytics.manifest import parts_after, save_state, sql_path

__all__ = ["compact", "apply", "delete_retired", "GRACE_MS"]

GRACE_MS = 15 * 60 * 1000  # how long a replaced file stays for readers that listed it
_NEWEST = {
    "executions": "QUALIFY row_number() OVER (PARTITION BY execution_id ORDER BY version DESC) = 1",
    "steps": "QUALIFY version = max(version) OVER (PARTITION BY execution_id)",
}


def _day(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC).strftime("%Y-%m-%d")


def _listing(files: list[Path]) -> str:
    return "[" + ", ".join(f"'{sql_path(p)}'" for p in files) + "]"


def compact(folder: Path, state: dict, tables: tuple[str, ...], *, now_ms: int, exclude=()) -> dict:
    """Write the compacted files of ``folder`` as of ``state`` (a snapshot: syncs may carry on
    meanwhile, their parts come after ``state["batch"]``) and return the change to make to the
    state — :func:`apply` makes it. The new files are in place but no reader reads them until
    the state file names them."""
    folder = Path(folder)
    compacted = state["compacted"]
    generation = compacted["generation"] + 1
    upto = state["batch"]
    files_now = {table: list(compacted["files"].get(table, [])) for table in tables}
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    written: list[tuple[Path, Path]] = []
    retired: list[str] = []
    merged = 0
    try:
        if exclude:
            con.register("_excluded", pa.table({"execution_id": pa.array(list(exclude), pa.string())}))
        for table in tables:
            files = files_now[table]
            by_day: dict[str, list[Path]] = defaultdict(list)
            for name in files:
                by_day[name[4:14]].append(folder / table / name)
            touched = set()
            for _, part in parts_after(folder, table, compacted["upto"], upto):
                day = _day(part)
                by_day[day].append(part)
                touched.add(day)
                merged += 1
            keyed = bool(exclude) and table != "definition_versions"
            if keyed:
                touched |= _days_holding(con, by_day, touched)
            for day in sorted(touched):
                sources = by_day[day]
                name = f"day-{day}-g{generation:06d}.parquet"
                final = folder / table / name
                tmp = final.with_name(name + ".tmp")
                where = "WHERE execution_id NOT IN (SELECT execution_id FROM _excluded)" if keyed else ""
                con.execute(
                    f"COPY (SELECT * FROM read_parquet({_listing(sources)}, union_by_name = true) {where} "
                    f"{_NEWEST.get(table, '')}) TO '{sql_path(tmp)}' (FORMAT parquet, COMPRESSION zstd)"
                )
                written.append((tmp, final))
                retired += [f"{table}/{p.name}" for p in sources]
                files[:] = sorted([n for n in files if n[4:14] != day] + [name])
    except BaseException:
        for tmp, _ in written:
            tmp.unlink(missing_ok=True)
        raise
    finally:
        con.close()
    for tmp, final in written:
        os.replace(tmp, final)
    return {
        "upto": upto,
        "generation": generation,
        "files": files_now,
        "retired": [[path, now_ms] for path in retired],
        "merged": merged,
        "written": len(written),
    }


def apply(folder: Path, state: dict, change: dict) -> None:
    """Make a :func:`compact` change to ``state`` (the mirror's current one) and save it: the
    one moment readers switch from the parts to the compacted files."""
    state["compacted"] = {"upto": change["upto"], "generation": change["generation"], "files": change["files"]}
    state["retired"] = state["retired"] + change["retired"]
    save_state(folder, state)


def _days_holding(con, by_day: dict[str, list[Path]], already: set[str]) -> set[str]:
    """The days whose compacted files hold a row of an excluded execution."""
    days = set()
    for day, files in by_day.items():
        if day in already:
            continue
        hit = con.execute(
            f"SELECT 1 FROM read_parquet({_listing(files)}, union_by_name = true) "
            "WHERE execution_id IN (SELECT execution_id FROM _excluded) LIMIT 1"
        ).fetchall()
        if hit:
            days.add(day)
    return days


def delete_retired(folder: Path, state: dict, before_ms: int) -> int:
    """Delete the files retired before ``before_ms`` and forget them (the state is saved again
    when any was); returns how many were deleted."""
    keep, deleted = [], 0
    for path, at in state["retired"]:
        if at <= before_ms:
            (folder / path).unlink(missing_ok=True)
            deleted += 1
        else:
            keep.append([path, at])
    if deleted:
        state["retired"] = keep
        save_state(folder, state)
    return deleted
