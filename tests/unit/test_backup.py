"""collab backup / restore on a database no server holds, and what they refuse."""

from __future__ import annotations

import os
import subprocess

import duckdb
from api.support import collab_bin
from test_analytics_support import LOOP, ServerRecorder

from toolkit.store import Store


def collab(*args) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "COLLAB_ADMIN_TOKEN"}  # no operator token by default
    return subprocess.run([collab_bin(), *args], capture_output=True, text=True, timeout=300, env=env)


def test_backup_of_a_stopped_servers_file_restores_with_every_row_and_counters(tmp_path):
    db = tmp_path / "server.duckdb"
    r = ServerRecorder(db)
    r.define(LOOP)
    waiting = r.dispatch("loop-review")
    r.close()
    backup, restored = tmp_path / "b.duckdb", tmp_path / "restored.duckdb"
    assert collab("backup", "--db", str(db), "--to", str(backup)).returncode == 0
    proc = collab("restore", "--from", str(backup), "--db", str(restored))
    assert proc.returncode == 0, proc.stderr
    assert "1 executions" in proc.stdout
    with duckdb.connect(str(db), read_only=True) as a, duckdb.connect(str(restored), read_only=True) as b:
        for table in ("executions", "events", "commands", "definition_versions", "workspaces", "schema_migrations"):
            query = f"SELECT * FROM {table} ORDER BY ALL"
            assert a.execute(query).fetchall() == b.execute(query).fetchall(), table
    # sequences carry on where they were: a new user number does not repeat one in the copy
    with Store(restored) as store:
        before = store.read("SELECT nextval('user_seq')").fetchone()[0]
    with duckdb.connect(str(db), read_only=True) as a:
        assert before > a.execute("SELECT coalesce(max(seq), 0) FROM users").fetchall()[0][0]
    assert waiting


def test_backup_and_restore_refuse_to_overwrite_or_restore_what_is_not_a_backup(tmp_path):
    db = tmp_path / "server.duckdb"
    Store(db).close()
    taken = tmp_path / "taken.duckdb"
    taken.write_bytes(b"")
    proc = collab("backup", "--db", str(db), "--to", str(taken))
    assert proc.returncode == 2 and "exists: choose a new file" in proc.stderr
    proc = collab("restore", "--from", str(db), "--db", str(taken))
    assert proc.returncode == 2 and "exists" in proc.stderr
    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE notes (x INTEGER)")
    proc = collab("restore", "--from", str(other), "--db", str(tmp_path / "new.duckdb"))
    assert proc.returncode == 2 and "is not a collab database" in proc.stderr
    assert not (tmp_path / "new.duckdb").exists()
    proc = collab("backup", "--server", "http://127.0.0.1:9", "--to", str(tmp_path / "x.duckdb"))
    assert proc.returncode == 2 and "--admin-token" in proc.stderr
