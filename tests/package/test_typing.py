"""A separate project that depends on the installed wheel type-checks against our annotations
(py.typed): mypy reports a wrong argument to ``compile_definition`` and passes a right one."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.slow

RIGHT = """\
from toolkit import examples
from toolkit.compiler import compile_definition
from toolkit.model import Definition

compiled = compile_definition(Definition.model_validate(examples.load("parallel-review")))
reveal_type(compiled)
first: dict[str, object] = compiled.forward_edges[0]
"""

WRONG = """\
from toolkit import examples
from toolkit.compiler import compile_definition

compiled = compile_definition(examples.load("parallel-review"))
count: int = compiled.loops
"""


def test_mypy_in_a_consumer_project_sees_our_annotations(installed, tmp_path):
    project = tmp_path / "consumer"
    project.mkdir()
    (project / "right.py").write_text(RIGHT)
    (project / "wrong.py").write_text(WRONG)
    (project / "mypy.ini").write_text(
        textwrap.dedent("""\
        [mypy]
        strict = True
        """)
    )
    # mypy from the project's venv, resolving imports in the fresh venv the wheel is installed in
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--python-executable",
            installed.python,
            "--cache-dir",
            str(tmp_path / "mypy-cache"),
            "right.py",
            "wrong.py",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert 'right.py:6: note: Revealed type is "toolkit.compiler.Compiled"' in lines, proc.stdout
    errors = [line for line in lines if ": error:" in line]
    assert errors == [
        'wrong.py:4: error: Argument 1 to "compile_definition" has incompatible type "dict[Any, Any]"; '
        'expected "Definition"  [arg-type]',
        'wrong.py:5: error: Incompatible types in assignment (expression has type "list[dict[Any, Any]]", '
        'variable has type "int")  [assignment]',
    ], proc.stdout
