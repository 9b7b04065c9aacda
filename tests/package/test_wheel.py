"""The built wheel, installed (not editable) into a fresh venv, works from outside the checkout:
every file of the source tree is in it, `collab` lints, simulates and serves, and a separate
project that depends on it type-checks against our annotations (py.typed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import textwrap
import tomllib
import zipfile
from pathlib import Path

import httpx
import pytest
from api.support import DECIDE, DEF_CREATE, Api
from processes import free_port, wait_until_ready

from package.support import ROOT, checkout_files

pytestmark = pytest.mark.slow

PACKAGES = ("toolkit", "server")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def source_files() -> list[str]:
    """Every file of the packages that git tracks or would track (new files included, ignored
    ones such as __pycache__ not), relative to the checkout."""
    files = [f for f in checkout_files() if f.split("/", 1)[0] in PACKAGES]
    assert any(f.endswith(".sql") for f in files) and "toolkit/py.typed" in files
    return files


def test_the_wheel_and_the_sdist_carry_every_file_of_the_packages(dist):
    wheel_names = set(zipfile.ZipFile(dist.wheel).namelist())
    missing = [f for f in source_files() if f not in wheel_names]
    assert missing == [], f"missing from the wheel (add them to package-data in pyproject.toml): {missing}"
    with tarfile.open(dist.sdist) as tar:
        top = f"collab_workflows-{VERSION}/"
        sdist_names = {m.name.removeprefix(top) for m in tar.getmembers()}
    missing = [f for f in (*source_files(), "LICENSE", "README.md", "pyproject.toml") if f not in sdist_names]
    assert missing == [], f"missing from the sdist: {missing}"


def test_the_wheel_declares_its_license_and_python(dist):
    with zipfile.ZipFile(dist.wheel) as zf:
        info = f"collab_workflows-{VERSION}.dist-info"
        metadata = zf.read(f"{info}/METADATA").decode()
        assert zf.read(f"{info}/licenses/LICENSE") == (ROOT / "LICENSE").read_bytes()
    assert "License-Expression: Apache-2.0" in metadata.splitlines()
    assert "Requires-Python: >=3.11" in metadata.splitlines()
    assert "Classifier: Typing :: Typed" in metadata.splitlines()


# One interpreter start for what the tests ask the installed package (each start costs seconds):
# its version, where toolkit and server were imported from, a packaged example's path, and every
# module under toolkit.widgets imported (walked, so a module added later is covered too).
PROBE = """
import importlib, json, pkgutil
import server, toolkit, toolkit.engine.run, toolkit.widgets
from toolkit import examples
widgets = {m.name: importlib.import_module(m.name).__file__
           for m in pkgutil.walk_packages(toolkit.widgets.__path__, "toolkit.widgets.")}
print(json.dumps({"version": toolkit.__version__, "toolkit": toolkit.__file__, "server": server.__file__,
                  "engine": toolkit.engine.run.__file__,
                  "example": str(examples.path("parallel-review")), "widgets": widgets}))
"""


@pytest.fixture(scope="module")
def probe(installed) -> dict:
    proc = installed.run(installed.python, "-c", PROBE)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_the_installed_package_comes_from_the_venv_and_knows_its_version(installed, probe):
    version = installed.run(installed.collab, "--version")
    assert (version.returncode, version.stdout) == (0, f"collab {VERSION}\n"), version.stderr
    assert probe["version"] == VERSION
    for module_file in (probe["toolkit"], probe["server"], probe["engine"]):
        assert Path(module_file).is_relative_to(installed.venv / "lib"), module_file


@pytest.mark.skipif(os.environ.get("COLLAB_COMPILE") == "0", reason="COLLAB_COMPILE=0: a pure-Python build")
def test_the_wheel_carries_the_compiled_engine(dist, probe):
    """The wheel is built as setup.py says: the engine compiled by mypyc, for this platform."""
    assert "-none-any" not in dist.wheel.name, dist.wheel.name
    assert not probe["engine"].endswith(".py"), probe["engine"]


def test_without_a_c_compiler_the_wheel_is_the_pure_python_package(dist, tmp_path):
    """A machine that cannot compile still builds a working package: the same modules, from their
    sources (here the sdist built with CC=false, a compiler that always fails)."""
    env = {**os.environ, "CC": "false"}
    proc = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(dist.sdist)],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, f"python -m build failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    assert "the package runs as pure Python" in proc.stdout + proc.stderr
    (wheel,) = tmp_path.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.endswith(".so")], names
    assert "toolkit/engine/run.py" in names and "toolkit/simulate/driver.py" in names


def _example(installed, probe) -> Path:
    path = Path(probe["example"])
    assert path.is_relative_to(installed.venv) and path.is_file(), path
    return path


def test_lint_and_simulate_a_packaged_example(installed, probe):
    example = _example(installed, probe)
    lint = installed.run(installed.collab, "lint", str(example), "--json")
    assert lint.returncode == 0, lint.stdout + lint.stderr
    assert json.loads(lint.stdout) == []
    db = installed.outside / "runs.duckdb"
    sim = installed.run(installed.collab, "simulate", str(example), "--runs", "40", "--seed", "7", "--db", str(db))
    assert sim.returncode == 0, sim.stdout + sim.stderr
    # the analytics views (a packaged .sql file) over the simulation's tables (another one)
    sql = installed.run(
        installed.collab, "sql", "SELECT count(*) AS n FROM execution_summary", "--db", str(db), "--format", "json"
    )
    assert sql.returncode == 0, sql.stderr
    assert json.loads(sql.stdout) == [{"n": 40}]


def _serve(installed, db: Path) -> tuple[subprocess.Popen, int]:
    """The installed `collab serve` on ``db``, ready; a few tries (a free port can be taken between
    the probe and the bind)."""
    log_path = installed.outside / "serve.log"
    for _ in range(3):
        port = free_port()
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(
                [
                    installed.collab,
                    "serve",
                    "--db",
                    str(db),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(port),
                    "--log-level",
                    "warning",
                ],
                cwd=installed.outside,
                env=installed.env(),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        if wait_until_ready(proc, f"http://127.0.0.1:{port}/openapi.json", 120):
            return proc, port
        proc.kill()
        proc.wait()
    raise AssertionError(f"the installed server did not start:\n{log_path.read_text(errors='replace')}")


def test_serve_a_new_database_create_dispatch_decide(installed, probe):
    db = installed.outside / "served" / "collab.duckdb"
    create = installed.run(installed.collab, "workspace", "create", "--db", str(db), "--json")
    assert create.returncode == 0, create.stderr
    creds = json.loads(create.stdout)
    proc, port = _serve(installed, db)
    try:
        headers = {"x-service-api-key": creds["apiKey"], "x-service-auth-token": creds["authToken"]}
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60) as client:
            api = Api(client)
            body = json.loads(_example(installed, probe).read_text())
            assert api.ok(DEF_CREATE, body)["version"] == 1
            execution_id = api.dispatch("parallel-review")
            waiting = [s for s in api.execution(execution_id)["steps"] if s["status"] == "waiting"]
            assert [s["nodeId"] for s in waiting] == ["legal-review", "brand-review"]
            for step, reviewer in zip(waiting, ("alice@legal", "bob@brand")):
                api.ok(
                    DECIDE,
                    {
                        "executionId": execution_id,
                        "stepId": step["stepId"],
                        "reviewerId": reviewer,
                        "decision": "approve",
                    },
                )
            final = api.execution(execution_id)
            assert final["status"] == "completed"
            assert [e["type"] for e in api.events(execution_id)][-1] == "execution.completed"
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_every_widget_module_imports(installed, probe):
    widgets = ROOT / "toolkit" / "widgets"
    in_source = {
        ".".join(("toolkit", "widgets", *p.relative_to(widgets).with_suffix("").parts)).removesuffix(".__init__")
        for p in widgets.rglob("*.py")
    } - {"toolkit.widgets"}
    assert set(probe["widgets"]) == in_source
    assert all(Path(f).is_relative_to(installed.venv) for f in probe["widgets"].values()), probe["widgets"]


# ------------------------------------------------------------ typing, from a consumer project

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
