"""The engine and the simulator's inner loop compiled by mypyc (setup.py) behave exactly as their
sources: the same seed gives the same log, byte for byte, whichever is imported."""

from __future__ import annotations

import importlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Run in a fresh interpreter: simulate parallel-review and sla-escalation (loops, quorum, SLA
# breaches, agent failures) and print a digest of every stored event and step, and where the
# engine was imported from. With "pure", a path hook placed first imports the package's modules
# from their sources even where a compiled module sits beside them.
SCRIPT = """
import hashlib, importlib.machinery as m, json, sys
root, pure = sys.argv[1], sys.argv[2] == "pure"
if pure:
    def source_only(path):
        if not path.startswith(root + "/toolkit"):
            raise ImportError(path)
        return m.FileFinder(path, (m.SourceFileLoader, m.SOURCE_SUFFIXES))
    sys.path_hooks.insert(0, source_only)
    sys.path_importer_cache.clear()
from toolkit import examples
from toolkit.simulate import simulate
import toolkit.engine.run, toolkit.simulate.driver
digest = hashlib.sha256()
for name in ("parallel-review", "sla-escalation"):
    result = simulate(examples.load(name), runs=300, seed=11, progress=False)
    for table in ("events", "steps", "executions"):
        digest.update(repr(result.con.execute(f"SELECT * FROM {table} ORDER BY ALL").fetchall()).encode())
    result.con.close()
print(json.dumps({"digest": digest.hexdigest(),
                  "files": [toolkit.engine.run.__file__, toolkit.simulate.driver.__file__]}))
"""


def run(mode: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(ROOT), mode], capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compiled(module) -> bool:
    return module.__file__.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))


@pytest.mark.skipif(os.environ.get("COLLAB_COMPILE") == "0", reason="COLLAB_COMPILE=0: a pure-Python build")
def test_the_build_compiled_the_engine_and_the_simulator():
    for name in ("toolkit.engine.run", "toolkit.engine.state", "toolkit.simulate.driver", "toolkit.simulate.records"):
        assert compiled(importlib.import_module(name)), name


def test_compiled_and_pure_python_give_the_same_log():
    default, pure = run("default"), run("pure")
    assert all(f.endswith(".py") for f in pure["files"]), pure["files"]
    if os.environ.get("COLLAB_COMPILE") != "0":
        assert not any(f.endswith(".py") for f in default["files"]), default["files"]
    assert default["digest"] == pure["digest"]
