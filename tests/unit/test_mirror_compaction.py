"""Compaction of the Parquet mirror (issue 16, item 7): an aged mirror of 10,000 syncs becomes
one file per table and day with the same answers, and a reader querying the mirror while it is
compacted sees every row exactly once."""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path

import duckdb
import pytest

from toolkit.analytics import open_mirror
from toolkit.analytics.compact import GRACE_MS, apply, compact, delete_retired
from toolkit.analytics.manifest import load_state
from toolkit.analytics.mirror import APPEND_ONLY, TABLES, Mirror
from toolkit.store import Store

_BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "mirror_age.py"
_spec = importlib.util.spec_from_file_location("mirror_age", _BENCH)
mirror_age = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mirror_age)

NOW = 1_770_000_000_000


def files(folder: Path, table: str) -> list[str]:
    return sorted(p.name for p in (folder / table).iterdir())


def answers(con) -> dict:
    return {name: con.execute(sql).fetchall() for name, sql in mirror_age.QUERIES.items()}


def truth(written: dict) -> dict:
    """The queries' answers on the rows the builder wrote, held in memory: the mirror's tables
    are those rows, executions and steps as of each execution's newest version."""
    con = duckdb.connect()
    for table, rows in written.items():
        con.register(f"all_{table}", rows)
    for table in ("events", "commands", "definition_versions"):
        con.execute(f"CREATE VIEW {table} AS SELECT * FROM all_{table}")
    con.execute(
        "CREATE VIEW executions AS SELECT * FROM all_executions "
        "QUALIFY version = max(version) OVER (PARTITION BY execution_id)"
    )
    con.execute(
        "CREATE VIEW steps AS SELECT * FROM all_steps QUALIFY version = max(version) OVER (PARTITION BY execution_id)"
    )
    try:
        return answers(con)
    finally:
        con.close()


def compact_folder(folder: Path, now_ms: int) -> dict:
    """What :meth:`Mirror.compact` does, on a folder no database feeds (built directly)."""
    state = load_state(folder, APPEND_ONLY)
    change = compact(folder, state, TABLES, now_ms=now_ms)
    apply(folder, state, change)
    return {**change, "deleted": delete_retired(folder, state, now_ms - GRACE_MS)}


@pytest.mark.slow
def test_ten_thousand_syncs_compact_to_one_file_per_table_and_day_with_the_same_answers(tmp_path):
    folder = tmp_path / "events"
    expected = truth(mirror_age.build_aged_mirror(folder, 10_000))
    assert len(files(folder, "events")) == 10_000
    assert expected["events per type"] == [(t, 10_000) for t in sorted(mirror_age.TYPES)]

    report = compact_folder(folder, NOW)
    assert report["merged"] == sum(len(files(folder, t)) for t in TABLES) - report["written"]
    assert report["deleted"] == 0
    reader = open_mirror(folder)
    assert answers(reader) == expected
    # the parts stay for the readers that listed them until the grace period ends, then go
    report = compact_folder(folder, NOW + GRACE_MS + 1)
    assert report["deleted"] >= 10_000
    for table in TABLES:
        assert len(files(folder, table)) == 1, (table, files(folder, table))
        assert files(folder, table)[0].startswith("day-")
    assert answers(reader) == expected, "the open reader follows the compacted files"
    reader.close()


def _insert_events(store: Store, start: int, n: int) -> None:
    store.write(
        lambda tx: tx.execute(
            "INSERT INTO events SELECT NULL, 'ws', 'x' || (i % 7), i, 'ev' || i, 'step.completed', "
            "NULL, i, 'c', true, '{}', NULL "
            "FROM range(?, ?) t(i)",
            [start, start + n],
        )
    )


def test_a_reader_sees_every_row_exactly_once_while_the_mirror_is_compacted(tmp_path):
    """Syncs, compactions and a reader thread querying in a loop, all at once: each answer
    holds events 0 … n-1, each once (n only grows)."""
    store = Store(tmp_path / "live.duckdb")
    folder = tmp_path / "events"
    mirror = Mirror(store, folder)
    written = 0
    for _ in range(100):  # an aged mirror: one part per sync
        _insert_events(store, written, 3)
        written += 3
        mirror.sync()

    seen: list[tuple] = []
    problems: list[str] = []
    compacting = threading.Event()
    overlapped = [0]
    stop = threading.Event()

    def reader() -> None:
        con = open_mirror(folder)
        try:
            while not stop.is_set():
                during = compacting.is_set()
                n, distinct, top = con.execute(
                    "SELECT count(*), count(DISTINCT event_id), max(seq) FROM events"
                ).fetchall()[0]
                if during and compacting.is_set():
                    overlapped[0] += 1
                if not (n == distinct == top + 1):
                    problems.append(f"{n} rows, {distinct} distinct, last seq {top}")
                if seen and n < seen[-1][0]:
                    problems.append(f"rows went from {seen[-1][0]} down to {n}")
                seen.append((n, distinct))
        except Exception as exc:  # noqa: BLE001 - a failed query is a finding
            problems.append(repr(exc))
        finally:
            con.close()

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for round_ in range(4):
            compacting.set()
            worker = threading.Thread(target=mirror.compact, kwargs={"now_ms": NOW + round_})
            worker.start()
            for _ in range(10):  # syncs carry on during the compaction
                _insert_events(store, written, 3)
                written += 3
                mirror.sync()
            worker.join()
            compacting.clear()
    finally:
        stop.set()
        thread.join()
    assert not problems, problems[:5]
    assert overlapped[0] > 0, "the reader never queried while a compaction ran"
    assert seen[-1][0] <= written
    final = open_mirror(folder)
    assert final.execute("SELECT count(*), count(DISTINCT event_id) FROM events").fetchall() == [(written, written)]
    final.close()
    # a new Mirror on the folder (the server restarted) keeps the compacted files and carries on
    mirror.close()
    again = Mirror(store, folder)
    _insert_events(store, written, 3)
    again.sync()
    final = open_mirror(folder)
    assert final.execute("SELECT count(*), count(DISTINCT event_id) FROM events").fetchall() == [(written + 3,) * 2]
    assert any(name.startswith("day-") for name in files(folder, "events"))
    final.close()
    again.close()
    store.close()
