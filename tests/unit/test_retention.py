"""Retention (issue 16, item 5): `prune` removes finished executions past the cut-off with every
row keyed by them, archives them where `collab sql --mirror` reads them, keeps the server's
mirror in step, never touches a running execution; --dry-run changes nothing."""

from __future__ import annotations

import json
import subprocess
import time

import duckdb
import pytest
from api.support import collab_bin
from faults.audit import INVARIANTS
from test_analytics_support import LOOP, ServerRecorder

from toolkit.analytics import Mirror, open_mirror
from toolkit.services.context import Services
from toolkit.services.retention import parse_age, prune
from toolkit.store import Store

DAY = 86_400_000


def build(db, start: int) -> tuple[ServerRecorder, dict[str, str]]:
    """Executions of LOOP at ``start`` + …: two that finished on day 0 (approved; cancelled),
    one dispatched on day 0 still waiting for its reviewer, one finished on day 100."""
    r = ServerRecorder(db, start=start)
    r.define(LOOP)
    ids = {"old-done": r.at(0).dispatch("loop-review")}
    r.at(60_000).decide(ids["old-done"], "review", "ann", "approve")
    ids["old-cancelled"] = r.at(0).dispatch("loop-review")
    r.at(120_000).cancel(ids["old-cancelled"])
    ids["old-waiting"] = r.at(0).dispatch("loop-review")
    ids["new-done"] = r.at(100 * DAY).dispatch("loop-review")
    r.at(100 * DAY + 60_000).decide(ids["new-done"], "review", "ann", "approve")
    return r, ids


def rows_of(con, execution_ids) -> dict[str, int]:
    marks = ", ".join(f"'{e}'" for e in execution_ids)
    return {
        t: con.execute(f"SELECT count(*) FROM {t} WHERE execution_id IN ({marks})").fetchall()[0][0]
        for t in ("executions", "events", "commands", "steps", "outbox")
    }


def audit(con) -> None:
    """The fault harness's offline invariants (tests/faults/audit.py) hold on the file."""
    for what, _, query in INVARIANTS:
        assert con.execute(query + " LIMIT 5").fetchall() == [], what


def reopen(recorder: ServerRecorder, db) -> None:
    """The server restarted: a new store and services on the same file, same workspace and clock."""
    recorder.store.close()
    recorder.store = Store(db)
    recorder.services = Services(recorder.store, clock=recorder.clock)


def test_prune_removes_old_finished_executions_with_their_rows_and_leaves_waiting_ones(tmp_path):
    db = tmp_path / "server.duckdb"
    r, ids = build(db, start=1_767_225_600_000)
    old = [ids["old-done"], ids["old-cancelled"]]
    kept = [ids["old-waiting"], ids["new-done"]]
    live = r.store.cursor()
    before_old, before_kept = rows_of(live, old), rows_of(live, kept)
    assert all(before_old[t] for t in ("executions", "events", "commands", "steps"))

    report = prune(r.store, older_than_ms=90 * DAY, now_ms=r.start + 100 * DAY + DAY)
    assert report.executions == 2
    assert {t: report.rows[t] for t in before_old} == before_old
    assert rows_of(live, old) == dict.fromkeys(before_old, 0)
    assert rows_of(live, kept) == before_kept
    audit(live)

    # the waiting execution is still decidable after a restart, and then ends as usual
    reopen(r, db)
    r.at(100 * DAY + DAY).decide(ids["old-waiting"], "review", "ann", "approve")
    assert r.view(ids["old-waiting"])["status"] == "completed"
    # once it is old enough it goes too: the cut-off counts from its end, not its start
    assert prune(r.store, older_than_ms=90 * DAY, now_ms=r.start + 150 * DAY).executions == 0
    assert prune(r.store, older_than_ms=90 * DAY, now_ms=r.start + 192 * DAY).executions == 2
    r.close()


def test_prune_keeps_the_mirror_in_step_even_when_rowids_are_renumbered(tmp_path):
    """Enough events that DuckDB vacuums the deleted ones at the checkpoint (renumbering rowids):
    the mirror drops the pruned executions and then mirrors new rows exactly once."""
    db = tmp_path / "server.duckdb"
    r, ids = build(db, start=1_767_225_600_000)
    # 300,000 filler events, two of every three of a finished old execution, the rest of a waiting one
    r.store.write(
        lambda tx: tx.execute(
            "INSERT INTO events SELECT NULL, 'ws', CASE WHEN i % 3 <> 0 THEN ? ELSE ? END, 1000 + i, 'fill' || i, "
            "'step.started', NULL, i, 'c', false, '{}', NULL FROM range(300000) t(i)",
            [ids["old-done"], ids["old-waiting"]],
        )
    )
    folder = tmp_path / "events"
    mirror = Mirror(r.store, folder)
    mirror.sync()
    report = prune(r.store, older_than_ms=90 * DAY, now_ms=r.start + 101 * DAY, mirror=mirror)
    assert report.executions == 2 and report.mirror["written"] > 0
    live = r.store.cursor()
    assert live.execute("SELECT max(rowid) + 1 > count(*) FROM events").fetchall() == [(False,)], (
        "the checkpoint vacuumed the deleted rows (renumbered): the case this test is about"
    )

    view = open_mirror(folder)

    def same() -> None:
        for table in ("executions", "events", "commands", "steps"):
            query = f"SELECT execution_id, count(*) FROM {table} GROUP BY 1 ORDER BY 1"
            assert view.execute(query).fetchall() == live.execute(query).fetchall(), table

    same()
    # the mirror carries on: new rows once each, whichever rowids they got
    r.at(101 * DAY).decide(ids["old-waiting"], "review", "ann", "approve")
    r.at(101 * DAY).dispatch("loop-review")
    mirror.sync()
    same()
    mirror.close()
    view.close()
    r.close()


def collab(*args, ok: bool = True) -> subprocess.CompletedProcess:
    proc = subprocess.run([collab_bin(), *args], capture_output=True, text=True, timeout=300)
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def test_collab_prune_archives_what_it_removes_where_collab_sql_mirror_reads_it(tmp_path):
    db = tmp_path / "server.duckdb"
    now = int(time.time() * 1000)
    r, ids = build(db, start=now - 100 * DAY - 3_600_000)  # "new-done" ended an hour ago
    old = sorted([ids["old-done"], ids["old-cancelled"]])
    con = r.store.cursor()
    events = con.execute(
        "SELECT execution_id, count(*) FROM events WHERE execution_id IN (?, ?) GROUP BY 1 ORDER BY 1", old
    ).fetchall()
    r.close()
    archive = tmp_path / "archive"

    dry = collab("prune", "--db", str(db), "--older-than", "90d", "--dry-run", "--json")
    assert json.loads(dry.stdout)["executions"] == 2
    assert sorted(json.loads(dry.stdout)["executionIds"]) == old
    assert json.loads(dry.stdout)["rows"]["events"] == sum(n for _, n in events)
    with duckdb.connect(str(db), read_only=True) as check:
        assert check.execute("SELECT count(*) FROM executions").fetchall() == [(4,)], "a dry run removes nothing"
    assert not archive.exists()

    done = collab("prune", "--db", str(db), "--older-than", "90d", "--archive", str(archive))
    assert "removed 2 finished execution(s)" in done.stdout
    query = collab(
        "sql",
        "--mirror",
        str(archive),
        "--format",
        "json",
        "SELECT execution_id, count(*) AS n FROM events GROUP BY 1 ORDER BY 1",
    )
    assert [(row["execution_id"], row["n"]) for row in json.loads(query.stdout)] == events
    query = collab(
        "sql",
        "--mirror",
        str(archive),
        "--format",
        "json",
        "SELECT execution_id, status, steps FROM execution_summary ORDER BY 1",
    )
    assert [(row["execution_id"], row["status"]) for row in json.loads(query.stdout)] == [
        (i, "completed" if i == ids["old-done"] else "cancelled") for i in old
    ]
    # a second prune appends to the archive; the definition version is archived once
    collab("prune", "--db", str(db), "--older-than", "1s", "--archive", str(archive))
    with open_mirror(archive) as view:
        assert view.execute("SELECT count(*) FROM executions").fetchall() == [(3,)]
        assert view.execute("SELECT count(*) FROM definition_versions").fetchall() == [(1,)]
        assert view.execute("SELECT count(*) FROM outbox").fetchall() == [(0,)]
    with duckdb.connect(str(db), read_only=True) as check:
        assert check.execute("SELECT execution_id, status FROM executions").fetchall() == [
            (ids["old-waiting"], "running")
        ]
        audit(check)


def test_ages_and_refusals():
    assert parse_age("90d") == 90 * DAY and parse_age("12h") == 12 * 3_600_000 and parse_age("45s") == 45_000
    for bad in ("", "90", "0d", "-1d", "1w", "d"):
        with pytest.raises(ValueError, match="positive age such as 90d"):
            parse_age(bad)
    proc = collab("prune", "--db", "nowhere.duckdb", "--older-than", "soon", ok=False)
    assert proc.returncode == 2 and "--older-than: 'soon' is not a positive age" in proc.stderr
    proc = collab("serve", "--db", "nowhere.duckdb", "--retention", "0d", ok=False)
    assert proc.returncode == 2 and "--retention" in proc.stderr and "not a positive age" in proc.stderr


def test_the_mirror_carries_on_when_a_prune_removed_the_newest_rows(tmp_path):
    """The last rows of `events` and `commands` belong to a pruned execution: their rowids are
    not reused, so the next rows come after a gap the mirror must step over."""
    db = tmp_path / "server.duckdb"
    r, ids = build(db, start=1_767_225_600_000)
    mirror = Mirror(r.store, tmp_path / "events")
    mirror.sync()
    assert prune(r.store, older_than_ms=90 * DAY, now_ms=r.start + 200 * DAY, mirror=mirror).executions == 3
    r.at(200 * DAY).decide(ids["old-waiting"], "review", "ann", "approve")
    mirror.sync()
    live = r.store.cursor()
    with open_mirror(tmp_path / "events") as view:
        for table in ("executions", "events", "commands", "steps"):
            query = f"SELECT execution_id, count(*) FROM {table} GROUP BY 1 ORDER BY 1"
            assert view.execute(query).fetchall() == live.execute(query).fetchall(), table
    mirror.close()
    r.close()
