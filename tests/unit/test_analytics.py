"""The event-log views (semantics §12): exact numbers on small hand-checked logs, and the same
answers on a simulation's database, a server's database file and the server's Parquet mirror.

Times below are milliseconds since dispatch (every execution is dispatched at EPOCH_MS).
"""

from __future__ import annotations

import duckdb
import pytest
from test_analytics_support import LOOP, LOOP_ID, SCRIPTS, SLA, ServerRecorder, eid, simulated_log

from toolkit.analytics import VIEWS, attach, open_db, open_mirror
from toolkit.analytics.mirror import Mirror
from toolkit.simulate import EPOCH_MS, simulate
from toolkit.simulate.results import connect

T = EPOCH_MS


@pytest.fixture(scope="module")
def sim():
    con = simulated_log()
    yield con
    con.close()


def rows(con, sql: str, params=None) -> list[tuple]:
    return con.execute(sql, params).fetchall() if params is not None else con.execute(sql).fetchall()


# ---------------------------------------------------------------------------- hand-checked: scripted runs


def test_step_durations(sim):
    got = rows(
        sim,
        "SELECT node_id, iteration, status, decision, started_at - $t, completed_at - $t, duration_ms "
        "FROM step_durations WHERE execution_id = $e ORDER BY started_at, completed_at, step_id",
        {"t": T, "e": eid("A1")},
    )
    assert got == [
        ("draft", 1, "completed", "approve", 0, 0, 0),
        ("review", 1, "completed", "reject", 0, 60_000, 60_000),
        ("draft", 2, "completed", "approve", 60_000, 60_000, 0),
        ("review", 2, "completed", "approve", 60_000, 150_000, 90_000),
        ("publish", 1, "completed", "approve", 150_000, 150_000, 0),
    ]
    got = rows(
        sim,
        "SELECT node_id, status, duration_ms FROM step_durations WHERE execution_id = $e ORDER BY started_at, step_id",
        {"e": eid("B3")},
    )
    assert got == [("intake", "completed", 0), ("check", "cancelled", 5_000)]


def test_execution_summary(sim):
    got = {
        r[0]: r[1:]
        for r in rows(
            sim,
            "SELECT execution_id, status, failure_reason, started_at - $t, ended_at - $t, cycle_time_ms, steps, "
            "iterations, loops, breaches, failed_steps, cancelled_steps FROM execution_summary",
            {"t": T},
        )
    }
    assert got == {
        eid("A1"): ("completed", None, 0, 150_000, 150_000, 5, 2, 1, 0, 0, 0),
        eid("A2"): ("completed", None, 0, 20_000, 20_000, 5, 2, 1, 0, 0, 0),
        eid("B1"): ("completed", None, 0, 60_000, 60_000, 3, 1, 0, 1, 0, 0),
        eid("B2"): ("completed", None, 0, 30_000, 30_000, 3, 1, 0, 0, 0, 0),
        eid("B3"): ("cancelled", None, 0, 5_000, 5_000, 2, 1, 0, 0, 0, 1),
    }
    # the simulator's own outcome table agrees
    assert rows(
        sim,
        "SELECT count(*) FROM execution_summary s JOIN outcomes o USING (execution_id) "
        "WHERE s.status <> o.status OR s.cycle_time_ms <> o.cycle_time_ms OR s.steps <> o.steps "
        "OR s.iterations <> o.iterations OR s.breaches <> o.breaches",
    ) == [(0,)]


def test_reviewer_latency(sim):
    got = rows(
        sim,
        "SELECT execution_id, node_id, iteration, reviewer_id, decision, mandatory, reason, "
        "awaiting_at - $t, decided_at - $t, latency_ms FROM reviewer_latency "
        "ORDER BY execution_id, decided_at, reviewer_id",
        {"t": T},
    )
    assert got == [
        (eid("A1"), "review", 1, "ann", "reject", True, "too long", 0, 60_000, 60_000),
        (eid("A1"), "review", 2, "bob", "approve", False, None, 60_000, 90_000, 30_000),
        (eid("A1"), "review", 2, "ann", "approve", True, None, 60_000, 150_000, 90_000),
        (eid("A2"), "review", 1, "ann", "reject", True, None, 0, 10_000, 10_000),
        (eid("A2"), "review", 2, "ann", "reject", True, None, 10_000, 20_000, 10_000),
        (eid("B2"), "check", 1, "cat", "approve", True, None, 0, 30_000, 30_000),
    ]


def test_loop_iterations(sim):
    got = rows(
        sim,
        "SELECT execution_id, loop_id, iteration, started_at - $t, ended_at - $t, duration_ms, outcome "
        "FROM loop_iterations ORDER BY execution_id, iteration",
        {"t": T},
    )
    assert got == [
        (eid("A1"), LOOP_ID, 1, 0, 60_000, 60_000, "restarted"),
        (eid("A1"), LOOP_ID, 2, 60_000, 150_000, 90_000, "final"),
        (eid("A2"), LOOP_ID, 1, 0, 10_000, 10_000, "restarted"),
        (eid("A2"), LOOP_ID, 2, 10_000, 20_000, 10_000, "exhausted"),
    ]
    entry = rows(
        sim,
        "SELECT l.iteration, s.node_id FROM loop_iterations l JOIN steps s "
        "ON s.execution_id = l.execution_id AND s.step_id = l.entry_step_id WHERE l.execution_id = $e "
        "ORDER BY 1",
        {"e": eid("A1")},
    )
    assert entry == [(1, "draft"), (2, "draft")]


def test_sla_breaches(sim):
    got = rows(
        sim,
        "SELECT execution_id, node_id, iteration, sla_ms, started_at - $t, deadline_at - $t, "
        "breached_at - $t, late_ms FROM sla_breaches",
        {"t": T},
    )
    assert got == [(eid("B1"), "check", 1, 60_000, 0, 60_000, 60_000, 0)]


def test_directly_follows(sim):
    got = rows(sim, "SELECT definition_id, from_node_id, to_node_id, transitions FROM directly_follows ORDER BY ALL")
    assert got == [
        ("loop-review", "draft", "review", 4),
        ("loop-review", "review", "draft", 2),
        ("loop-review", "review", "escalate", 1),
        ("loop-review", "review", "publish", 1),
        ("sla-check", "check", "done", 1),
        ("sla-check", "check", "page", 1),
        ("sla-check", "intake", "check", 3),
    ]
    pairs = rows(
        sim,
        "SELECT from_node_id, to_node_id, from_started_at - $t, to_started_at - $t FROM step_transitions "
        "WHERE execution_id = $e ORDER BY from_started_at, to_started_at",
        {"t": T, "e": eid("A1")},
    )
    assert pairs == [
        ("draft", "review", 0, 0),
        ("review", "draft", 0, 60_000),
        ("draft", "review", 60_000, 60_000),
        ("review", "publish", 60_000, 150_000),
    ]


# ---------------------------------------------------------------------------- hand-checked: inserted rows


def test_ordering_ties_running_steps_and_a_loop_exhausted_at_once():
    """Steps that start together are ordered by end (still waiting: last), then node id, then
    step id; a running execution has no cycle time; a loop exhausted in iteration 1 has an
    unknown start."""
    con = connect(None)
    # rows as a server has them: without the simulator's exec_key, step_index and definition_key
    con.execute(
        "ALTER TABLE executions DROP COLUMN exec_key; ALTER TABLE executions DROP COLUMN definition_key; "
        "ALTER TABLE steps DROP COLUMN exec_key; ALTER TABLE steps DROP COLUMN step_index; "
        "ALTER TABLE steps DROP COLUMN definition_key"
    )
    con.execute("INSERT INTO executions VALUES (0, 't', 'd', 1, 'running', NULL, 't', 100, NULL, NULL)")
    steps = [
        ("s_a", "a", 100, 100),
        ("s_c", "c", 100, 500),
        ("y1", "d", 100, 300),
        ("s_w", "w", 100, None),
        ("s_e", "e", 100, 300),
        ("x2", "d", 100, 300),
        ("s_b", "b", 100, 300),
    ]
    for sid, node, start, end in steps:
        con.execute(
            "INSERT INTO steps VALUES (0, 't', ?, ?, 'agent', ?, NULL, 1, ?, ?, NULL, NULL, '{}')",
            [sid, node, "running" if end is None else "completed", start, end],
        )
    con.execute(
        "INSERT INTO events VALUES (0, 't', 1, 'evt_t_1', 'loop.exhausted', NULL, 400, 't', true, "
        '\'{"loopId": "L", "iteration": 1, "lastRejectedBy": "x", "lastRejectionReason": null}\')'
    )
    attach(con)
    chain = dict(rows(con, "SELECT from_step_id, to_step_id FROM step_transitions"))
    assert chain == {"s_a": "s_b", "s_b": "x2", "x2": "y1", "y1": "s_e", "s_e": "s_c", "s_c": "s_w"}
    assert rows(con, "SELECT from_node_id, to_node_id, transitions FROM directly_follows ORDER BY ALL") == [
        ("a", "b", 1),
        ("b", "d", 1),
        ("c", "w", 1),
        ("d", "d", 1),
        ("d", "e", 1),
        ("e", "c", 1),
    ]
    assert rows(con, "SELECT node_id, duration_ms FROM step_durations WHERE node_id IN ('c', 'w') ORDER BY 1") == [
        ("c", 400),
        ("w", None),
    ]
    assert rows(con, "SELECT status, cycle_time_ms, steps, iterations, loops FROM execution_summary") == [
        ("running", None, 7, 1, 0)
    ]
    assert rows(con, "SELECT status, ended_at, cycle_time_ms FROM execution_outcomes") == [("running", None, None)]
    assert rows(
        con, "SELECT loop_id, iteration, entry_step_id, started_at, ended_at, duration_ms, outcome FROM loop_iterations"
    ) == [("L", 1, None, None, 400, None, "exhausted")]


def test_attach_refuses_a_database_without_the_tables():
    with pytest.raises(ValueError, match="no executions, steps, events"):
        attach(duckdb.connect())


def test_open_db_is_read_only_and_leaves_the_file_unchanged(tmp_path):
    path = tmp_path / "sim.duckdb"
    simulate(LOOP, runs=3, seed=5, db=path).con.close()
    con = open_db(path)
    assert rows(con, "SELECT count(*) FROM execution_summary") == [(3,)]
    with pytest.raises(duckdb.Error):
        con.execute("CREATE TABLE x (a INTEGER)")
    con.close()
    plain = duckdb.connect(str(path), read_only=True)
    names = {r[0] for r in plain.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    plain.close()
    assert not names & set(VIEWS), "the views are TEMP views, never stored in the file"
    with pytest.raises(FileNotFoundError):
        open_db(tmp_path / "missing.duckdb")


# ---------------------------------------------------------------------------- the same on every source

STEP_IDS = {"step_id", "from_step_id", "to_step_id", "entry_step_id", "run", "correlation_id"}


def normalised(con, view: str, names: dict[str, str]) -> list[tuple]:
    """A view's rows with execution ids replaced by script names and step ids/run left out."""
    result = con.execute(f"SELECT * FROM {view}")
    columns = [d[0] for d in result.description]
    out = []
    for row in result.fetchall():
        record = dict(zip(columns, row))
        if "execution_id" in record:
            record["execution_id"] = names[record["execution_id"]]
        out.append(tuple((k, v) for k, v in record.items() if k not in STEP_IDS))
    return sorted(out, key=repr)


def record_scripts(tmp_path):
    """SCRIPTS played on a server store (file database) while a Mirror copies it."""
    recorder = ServerRecorder(tmp_path / "server.duckdb")
    recorder.define(LOOP)
    recorder.define(SLA)
    mirror = Mirror(recorder.store, tmp_path / "events")
    names = {}
    for i, (name, (definition, actions)) in enumerate(SCRIPTS.items()):
        names[recorder.play(definition["definitionId"], actions)] = name
        if i == 1:
            mirror.sync()  # the mirror grows in several batches
    mirror.sync()
    mirror.close()
    recorder.close()
    return names


def test_views_agree_on_a_simulation_a_server_file_and_its_mirror(sim, tmp_path):
    names = record_scripts(tmp_path)
    server = open_db(tmp_path / "server.duckdb")
    mirrored = open_mirror(tmp_path / "events")
    sim_names = {eid(name): name for name in SCRIPTS}
    for view in VIEWS:
        on_server = server.execute(f"SELECT * FROM {view}").fetchall()
        on_mirror = mirrored.execute(f"SELECT * FROM {view}").fetchall()
        assert sorted(on_server, key=repr) == sorted(on_mirror, key=repr), view
        assert normalised(server, view, names) == normalised(sim, view, sim_names), view
    assert len(server.execute("SELECT * FROM reviewer_latency").fetchall()) == 6
    server.close()
    mirrored.close()


def test_server_breach_fired_late_shows_how_late(tmp_path):
    recorder = ServerRecorder()
    recorder.define(SLA)
    execution = recorder.dispatch("sla-check")
    recorder.at(60_250).tick(execution)  # the timer woke 250 ms after the deadline
    con = attach(recorder.store.con.cursor())
    assert rows(con, "SELECT deadline_at - $t, breached_at - $t, late_ms FROM sla_breaches", {"t": T}) == [
        (60_000, 60_250, 250)
    ]
    con.close()
    recorder.close()


# ---------------------------------------------------------------------------- the mirror


def counts(con) -> tuple:
    return rows(
        con,
        "SELECT (SELECT count(*) FROM events), (SELECT count(DISTINCT (execution_id, seq)) FROM events), "
        "(SELECT count(*) FROM steps), (SELECT count(*) FROM commands), (SELECT count(*) FROM executions)",
    )[0]


def test_mirror_exports_each_committed_row_once_and_keeps_executions_current(tmp_path):
    recorder = ServerRecorder(tmp_path / "live.duckdb")
    recorder.define(LOOP)
    folder = tmp_path / "events"
    mirror = Mirror(recorder.store, folder)
    first = mirror.sync()
    assert first == {"definition_versions": 1}
    execution = recorder.dispatch("loop-review")
    recorder.at(60_000).decide(execution, "review", "ann", "reject")
    second = mirror.sync()
    assert second["commands"] == 2 and second["executions"] == 1 and second["events"] > 0
    assert second["steps"] == 4  # draft and review of rounds 1 and 2: the execution's steps, all of them
    view = open_mirror(folder)
    assert rows(view, "SELECT status, version FROM executions") == [("running", 2)]
    assert mirror.sync() == {}, "nothing new: nothing written"
    files_before = sorted(p.name for p in (folder / "events").iterdir())
    recorder.at(90_000).decide(execution, "review", "ann", "approve", occurrence=2)
    third = mirror.sync()
    assert third["commands"] == 1 and third["executions"] == 1 and third["steps"] == 5
    # the open connection sees the new files: every query lists the folder again
    assert rows(view, "SELECT status, version FROM executions") == [("completed", 3)]
    assert sorted(p.name for p in (folder / "events").iterdir()) == files_before + ["part-00000003.parquet"]
    live = attach(recorder.store.con.cursor())
    assert counts(view) == counts(live)
    assert counts(view)[0] == counts(view)[1], "no event mirrored twice"
    assert rows(view, "SELECT * FROM execution_summary") == rows(live, "SELECT * FROM execution_summary")
    assert rows(view, "SELECT * FROM steps ORDER BY step_id") == rows(live, "SELECT * FROM steps ORDER BY step_id")
    mirrored_columns = {r[0] for r in view.execute("DESCRIBE executions").fetchall()}
    assert "state" not in mirrored_columns and "webhook_secret" not in mirrored_columns
    mirror.close()
    view.close()
    live.close()
    recorder.close()


def test_a_new_mirror_continues_and_drops_parts_of_an_unrecorded_batch(tmp_path):
    recorder = ServerRecorder(tmp_path / "live.duckdb")
    recorder.define(LOOP)
    folder = tmp_path / "events"
    mirror = Mirror(recorder.store, folder)
    recorder.dispatch("loop-review")
    mirror.sync()
    mirror.close()
    # a crash after a part was renamed into place but before _mirror.json recorded its batch
    stray = folder / "events" / "part-00000002.parquet"
    stray.write_bytes((folder / "events" / "part-00000001.parquet").read_bytes())
    (folder / "commands" / "part-00000002.parquet.tmp").write_bytes(b"partial")
    mirror = Mirror(recorder.store, folder)
    assert not stray.exists() and not (folder / "commands" / "part-00000002.parquet.tmp").exists()
    recorder.at(1_000).dispatch("loop-review")
    assert mirror.sync()["executions"] == 1
    assert stray.exists(), "batch 2 is now the second real batch"
    view = open_mirror(folder)
    live = attach(recorder.store.con.cursor())
    assert counts(view) == counts(live)
    live.close()
    view.close()
    mirror.close()
    recorder.close()
    # the same folder against another database is refused, not silently duplicated
    other = ServerRecorder(tmp_path / "other.duckdb")
    mirror = Mirror(other.store, folder)
    with pytest.raises(Exception, match="another database"):
        mirror.sync()
    mirror.close()
    other.close()


def test_mirror_thread_syncs_in_the_background_and_at_stop(tmp_path):
    import time

    recorder = ServerRecorder(tmp_path / "live.duckdb")
    recorder.define(SLA)
    folder = tmp_path / "events"
    mirror = Mirror(recorder.store, folder)
    mirror.sync()
    mirror.start(interval=0.05)
    recorder.dispatch("sla-check")
    view = open_mirror(folder)
    deadline = time.monotonic() + 10
    while rows(view, "SELECT count(*) FROM executions") != [(1,)] and time.monotonic() < deadline:
        time.sleep(0.02)
    assert rows(view, "SELECT count(*) FROM executions") == [(1,)]
    recorder.dispatch("sla-check")
    mirror.stop()  # the last sync happens here
    assert rows(view, "SELECT count(*) FROM executions") == [(2,)]
    view.close()
    recorder.close()


def test_open_mirror_needs_a_mirror(tmp_path):
    with pytest.raises(FileNotFoundError, match="no event mirror"):
        open_mirror(tmp_path)


@pytest.fixture(autouse=True, scope="module")
def _collect_duckdb_objects():
    """Free DuckDB handles held in reference cycles while DuckDB is still loaded."""
    yield
    import gc

    gc.collect()


def test_module_examples():
    import doctest
    import importlib

    for name in ("views", "query", "replay"):  # (the package's `replay` is the function: import by name)
        module = importlib.import_module(f"toolkit.analytics.{name}")
        result = doctest.testmod(module)
        assert result.failed == 0 and result.attempted > 0, module.__name__
