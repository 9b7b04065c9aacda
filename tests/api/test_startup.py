"""Starting `collab serve` where it cannot run is one line on stderr and a non-zero exit."""

from __future__ import annotations

import subprocess

from processes import free_port

from api.support import collab_bin, serve_fresh


def test_a_second_server_on_a_held_duckdb_file_says_so_in_one_line(tmp_path):
    first = serve_fresh(tmp_path, "held", backend="duckdb")
    try:
        proc = subprocess.run(
            [collab_bin(), "serve", "--db", str(first.db), "--port", str(free_port())],
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        first.stop()
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"collab: cannot open {first.db}") and "stop it first" in lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr
