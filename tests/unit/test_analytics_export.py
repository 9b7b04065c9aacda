"""Exports (Parquet, CSV, XES, OCEL 2.0) and the `collab sql` / `collab events export` commands.

The process-mining formats are checked with pm4py's own readers. pm4py is a development
dependency (the ``bench`` extra); without it those tests are skipped, saying so.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
import warnings

import duckdb
import pyarrow.parquet as pq
import pytest
from test_analytics_support import SCRIPTS, eid, simulated_log

from toolkit.analytics import event_table, export, step_log
from toolkit.cli import main
from toolkit.simulate import EPOCH_MS


def pm4py_or_skip():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            import pm4py
        except ImportError:
            pytest.skip(
                "pm4py is not installed: `pip install pm4py` (it is in the bench extra) to check "
                "that pm4py reads the XES and OCEL exports"
            )
    return pm4py


@pytest.fixture(scope="module")
def sim_db(tmp_path_factory):
    """The scripted executions of SCRIPTS in a database file."""
    path = tmp_path_factory.mktemp("export") / "sim.duckdb"
    con = simulated_log()
    con.execute(f"ATTACH '{path}' AS out")
    for table in ("executions", "steps", "events", "outcomes"):
        con.execute(f"CREATE TABLE out.{table} AS SELECT * FROM {table}")
    con.execute("DETACH out")
    con.close()
    return path


@pytest.fixture
def con(sim_db):
    from toolkit.analytics import open_db

    connection = open_db(sim_db)
    yield connection
    connection.close()


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------- library


def test_event_table_and_parquet_csv_exports(con, tmp_path):
    table = event_table(con, execution_id=eid("A1"))
    n = con.execute("SELECT count(*) FROM events WHERE execution_id = ?", [eid("A1")]).fetchall()[0][0]
    assert table.num_rows == n
    assert table.column_names == [
        "execution_id",
        "definition_id",
        "definition_version",
        "seq",
        "event_id",
        "type",
        "step_id",
        "node_id",
        "timestamp",
        "time",
        "correlation_id",
        "external",
        "data",
    ]
    assert table.column("seq").to_pylist() == list(range(1, n + 1))
    nodes = dict(zip(table.column("type").to_pylist(), table.column("node_id").to_pylist()))
    assert nodes["execution.dispatched"] is None and nodes["step.started"] in {"draft", "review", "publish"}

    counts = export(con, "parquet", tmp_path / "loop.parquet", definition_id="loop-review")
    total = con.execute(
        "SELECT count(*) FROM events e JOIN executions x USING (execution_id) WHERE x.definition_id = 'loop-review'"
    ).fetchall()[0][0]
    assert counts == {"executions": 2, "events": total}
    assert pq.read_table(tmp_path / "loop.parquet").num_rows == total

    counts = export(con, "csv", tmp_path / "b2.csv", execution_id=eid("B2"))
    with open(tmp_path / "b2.csv", newline="") as fh:
        records = list(csv.DictReader(fh))
    assert len(records) == counts["events"] and records[0]["type"] == "execution.dispatched"
    assert json.loads(records[0]["data"])["definitionId"] == "sla-check"

    with pytest.raises(LookupError, match="no executions of definition nope"):
        export(con, "csv", tmp_path / "x.csv", definition_id="nope")
    with pytest.raises(ValueError, match="unknown export format"):
        export(con, "xml", tmp_path / "x.xml")


def test_step_log_orders_each_case_by_time_start_before_end(con):
    frame = step_log(con, execution_id=eid("A1"))
    got = list(zip(frame["concept:name"], frame["lifecycle:transition"], frame["timestamp_ms"] - EPOCH_MS))
    assert got == [
        ("draft", "start", 0),
        ("draft", "complete", 0),
        ("review", "start", 0),
        ("review", "complete", 60_000),
        ("draft", "start", 60_000),
        ("draft", "complete", 60_000),
        ("review", "start", 60_000),
        ("review", "complete", 150_000),
        ("publish", "start", 150_000),
        ("publish", "complete", 150_000),
    ]
    assert str(frame["time:timestamp"].dt.tz) == "UTC"
    assert set(frame["case:status"]) == {"completed"}


@pytest.mark.filterwarnings("ignore")
def test_pm4py_reads_the_xes_export(con, tmp_path):
    pm4py = pm4py_or_skip()
    path = tmp_path / "all.xes"
    assert (
        main(
            [
                "events",
                "export",
                "--db",
                con.execute("PRAGMA database_list").fetchall()[0][2],
                "--definition",
                "loop-review",
                "--to",
                "xes",
                str(path),
            ]
        )
        == 0
    )
    log = pm4py.read_xes(str(path), show_progress_bar=False)
    assert log["case:concept:name"].nunique() == 2
    starts = log[log["lifecycle:transition"] == "start"]
    assert starts["concept:name"].value_counts().to_dict() == {"draft": 4, "review": 4, "publish": 1, "escalate": 1}
    assert (log["lifecycle:transition"] == "complete").sum() == 10
    # pm4py's own statistics on the export are the views' answers
    dfg, start_activities, _ = pm4py.discover_dfg(starts)
    ours = {
        (a, b): n
        for a, b, n in con.execute(
            "SELECT from_node_id, to_node_id, transitions FROM directly_follows WHERE definition_id = 'loop-review'"
        ).fetchall()
    }
    assert dict(dfg) == ours
    assert dict(start_activities) == {"draft": 2}
    durations = sorted(pm4py.get_all_case_durations(log))
    cycle = sorted(
        ms / 1000
        for (ms,) in con.execute(
            "SELECT cycle_time_ms FROM execution_summary WHERE definition_id = 'loop-review'"
        ).fetchall()
    )
    assert durations == cycle == [20.0, 150.0]
    case = log[log["case:concept:name"] == eid("A2")]
    assert set(case["case:status"]) == {"completed"} and set(case["case:definitionId"]) == {"loop-review"}


@pytest.mark.filterwarnings("ignore")
def test_pm4py_reads_the_ocel_export(con, tmp_path):
    pm4py = pm4py_or_skip()
    path = tmp_path / "all.jsonocel"
    counts = export(con, "ocel", path)  # no selection: every execution
    ocel = pm4py.read_ocel2_json(str(path))
    n_events = con.execute("SELECT count(*) FROM events").fetchall()[0][0]
    n_steps = con.execute("SELECT count(*) FROM steps").fetchall()[0][0]
    assert counts == {"executions": len(SCRIPTS), "events": n_events, "objects": len(SCRIPTS) + n_steps + 4}
    assert len(ocel.events) == n_events
    assert ocel.objects["ocel:type"].value_counts().to_dict() == {"step": n_steps, "execution": len(SCRIPTS), "user": 4}
    assert set(ocel.events["ocel:activity"]) == {
        t for (t,) in con.execute("SELECT DISTINCT type FROM events").fetchall()
    }
    relations = ocel.relations
    reviewers = relations[relations["ocel:qualifier"] == "reviewer"]
    assert sorted(reviewers["ocel:oid"].unique()) == ["user:ann", "user:bob", "user:cat"]
    assert len(reviewers) == con.execute("SELECT count(*) FROM reviewer_latency").fetchall()[0][0]
    # every event is related to its execution
    per_execution = relations[relations["ocel:qualifier"] == "execution"]
    assert len(per_execution) == n_events
    # the actor of a cancellation is a user object too
    assert "user:system:execution-cancel" in set(ocel.objects["ocel:oid"])


# ---------------------------------------------------------------------------- collab sql


def test_collab_sql_formats(sim_db, tmp_path, capsys):
    db = str(sim_db)
    query = "SELECT definition_id, from_node_id, to_node_id, transitions FROM directly_follows ORDER BY ALL"
    code, out, err = run(capsys, "sql", query, "--db", db)
    assert code == 0 and err == ""
    lines = out.splitlines()
    assert lines[0].split() == ["definition_id", "from_node_id", "to_node_id", "transitions"]
    assert lines[2].split() == ["loop-review", "draft", "review", "4"]
    assert lines[-1] == "(7 rows)"

    code, out, _ = run(capsys, "sql", query, "--db", db, "--format", "csv")
    assert out.splitlines()[:2] == ["definition_id,from_node_id,to_node_id,transitions", "loop-review,draft,review,4"]

    code, out, _ = run(
        capsys,
        "sql",
        "SELECT status, count(*) AS n FROM execution_summary GROUP BY 1 ORDER BY 1",
        "--db",
        db,
        "--format",
        "json",
    )
    assert json.loads(out) == [{"status": "cancelled", "n": 1}, {"status": "completed", "n": 4}]

    out_file = tmp_path / "latency.parquet"
    code, out, _ = run(
        capsys, "sql", "SELECT * FROM reviewer_latency", "--db", db, "--format", "parquet", "--out", str(out_file)
    )
    assert code == 0 and out == ""
    assert pq.read_table(out_file).num_rows == 6

    csv_file = tmp_path / "x.csv"
    assert run(capsys, "sql", "SELECT 1 AS a", "--db", db, "--format", "csv", "--out", str(csv_file))[0] == 0
    assert csv_file.read_text() == "a\n1\n"


def test_collab_sql_errors(sim_db, tmp_path, capsys):
    code, _, err = run(capsys, "sql", "SELECT * FROM no_such_view", "--db", str(sim_db))
    assert code == 1 and "no_such_view" in err
    code, _, err = run(capsys, "sql", "SELECT 1", "--db", str(sim_db), "--format", "parquet")
    assert code == 2 and "--out" in err
    with pytest.raises(SystemExit) as exc:
        main(["sql", "SELECT 1", "--db", str(tmp_path / "missing.duckdb")])
    assert exc.value.code == 2
    with pytest.raises(SystemExit) as exc:
        main(["sql", "SELECT 1", "--mirror", str(tmp_path)])
    assert exc.value.code == 2
    assert "no event mirror" in capsys.readouterr().err
    # read-only: a query cannot change the file
    code, _, err = run(capsys, "sql", "CREATE TABLE t (a INTEGER)", "--db", str(sim_db))
    assert code == 1 and "read-only" in err.lower()


def test_collab_sql_on_a_running_servers_mirror(tmp_path, capsys):
    from test_analytics_support import LOOP, ServerRecorder

    from toolkit.analytics import Mirror

    recorder = ServerRecorder(tmp_path / "live.duckdb")
    recorder.define(LOOP)
    recorder.play("loop-review", SCRIPTS["A1"][1])
    mirror = Mirror(recorder.store, tmp_path / "events")
    mirror.sync()
    # another process cannot open the live file: the server holds it
    proc = subprocess.run(
        [sys.executable, "-m", "toolkit.cli", "sql", "SELECT 1", "--db", str(tmp_path / "live.duckdb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--mirror" in proc.stderr
    code, out, _ = run(
        capsys,
        "sql",
        "SELECT status, cycle_time_ms, loops FROM execution_summary",
        "--mirror",
        str(tmp_path / "events"),
        "--format",
        "json",
    )
    assert code == 0 and json.loads(out) == [{"status": "completed", "cycle_time_ms": 150_000, "loops": 1}]
    mirror.close()
    recorder.close()


# ---------------------------------------------------------------------------- collab events export


def test_collab_events_export(sim_db, tmp_path, capsys):
    for fmt in ("parquet", "csv", "ocel", "xes"):
        out = tmp_path / f"a1.{fmt}"
        code, text, err = run(
            capsys, "events", "export", "--db", str(sim_db), "--execution", eid("A1"), "--to", fmt, str(out)
        )
        assert code == 0 and err == "" and out.stat().st_size > 0, fmt
        assert "of 1 execution(s) written to" in text
    assert json.loads((tmp_path / "a1.ocel").read_text())["objectTypes"][0]["name"] == "execution"
    assert (tmp_path / "a1.xes").read_text().count("<trace>") == 1
    code, _, err = run(
        capsys, "events", "export", "--db", str(sim_db), "--definition", "nope", "--to", "csv", str(tmp_path / "n.csv")
    )
    assert code == 1 and "no executions of definition nope" in err
    with pytest.raises(SystemExit) as exc:  # exactly one of --execution / --definition
        main(["events", "export", "--db", str(sim_db), "--to", "csv", str(tmp_path / "n.csv")])
    assert exc.value.code == 2
    capsys.readouterr()


def test_duckdb_can_read_the_parquet_export_back(con, tmp_path):
    export(con, "parquet", tmp_path / "all.parquet")
    back = duckdb.connect()
    n = back.execute(f"SELECT count(*), count(DISTINCT execution_id) FROM '{tmp_path / 'all.parquet'}'").fetchall()
    back.close()
    assert n == [(con.execute("SELECT count(*) FROM events").fetchall()[0][0], len(SCRIPTS))]


@pytest.mark.filterwarnings("ignore")
def test_pm4py_on_the_interval_log_gives_the_views_answers(con):
    pm4py = pm4py_or_skip()
    intervals = step_log(con, definition_id="loop-review", intervals=True)
    assert (
        len(intervals)
        == con.execute(
            "SELECT count(*) FROM steps s JOIN executions x USING (execution_id) WHERE x.definition_id = 'loop-review'"
        ).fetchall()[0][0]
    )
    dfg = dict(pm4py.discover_dfg(intervals)[0])
    ours = {
        (a, b): n
        for a, b, n in con.execute(
            "SELECT from_node_id, to_node_id, transitions FROM directly_follows WHERE definition_id = 'loop-review'"
        ).fetchall()
    }
    assert dfg == ours
    medians = pm4py.get_service_time(intervals, aggregation_measure="median", start_timestamp_key="start_timestamp")
    p50 = dict(
        con.execute(
            "SELECT node_id, quantile_cont(duration_ms, 0.5) / 1000 FROM step_durations d "
            "JOIN executions x USING (execution_id) WHERE x.definition_id = 'loop-review' "
            "GROUP BY node_id"
        ).fetchall()
    )
    assert medians == pytest.approx(p50)
