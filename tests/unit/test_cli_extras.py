"""A `collab` command whose extra is not installed says which extra to install (no traceback)."""

from __future__ import annotations

import re
import subprocess
import sys

from toolkit.cli import extra_providing

# Run `collab serve` in an interpreter where the named top-level modules cannot be imported, as
# in an install without the extra that brings them.
WITHOUT = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` now raises ModuleNotFoundError
from toolkit.cli import main
sys.exit(main(sys.argv[2:]))
"""


def test_extras_are_read_from_the_package_metadata():
    assert extra_providing("uvicorn") == "server"
    assert extra_providing("starlette") == "server"
    assert extra_providing("ipywidgets") == "notebook"
    assert extra_providing("duckdb") is None  # a dependency of every install
    assert extra_providing("no_such_module") is None


def test_serve_without_the_server_extra_names_the_extra(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            WITHOUT,
            "starlette,uvicorn",
            "serve",
            "--db",
            str(tmp_path / "x.duckdb"),
            "--port",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stdout == ""
    # which of the two the server imports first is its business
    assert re.fullmatch(
        r"collab serve: needs (starlette|uvicorn), which the 'server' extra installs: "
        r"pip install 'collab-workflows\[server\]'\n",
        proc.stderr,
    ), proc.stderr


def test_a_missing_module_no_extra_provides_is_not_disguised(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT, "duckdb", "sql", "SELECT 1", "--db", str(tmp_path / "x.duckdb")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    assert "ModuleNotFoundError" in proc.stderr and "extra installs" not in proc.stderr
