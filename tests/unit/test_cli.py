"""Unit tests for the ``collab lint`` / ``collab compile`` command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from strategies import agent, definition, edge, human, op, var

from toolkit import examples
from toolkit.cli import main
from toolkit.compiler import compile_definition
from toolkit.model import Definition

ROOT = Path(__file__).resolve().parents[2]
CLEAN = definition(
    [human("review"), agent("publish"), agent("fix")],
    [edge("review", "publish", "approve"), edge("review", "fix", "reject")],
)
WARNS = definition([agent("a"), agent("b")], [edge("a", "b", "custom", when=op("gte", var("output.score"), 1))])
ERRORS = definition([human("review"), agent("publish")], [edge("review", "publish", "approve"), edge("publish", "x")])
SCHEMA = definition([agent("a"), {"nodeId": "b", "type": "agent", "config": {"blocking": "true"}}], [])


def write(tmp_path: Path, document, name: str = "flow.json") -> str:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return str(path)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_lint_clean_file_exits_0(tmp_path, capsys):
    path = write(tmp_path, CLEAN)
    code, out, err = run(capsys, "lint", path)
    assert (code, out, err) == (0, f"{path}: no findings\n", "")


def test_lint_warnings_only_exits_0(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, WARNS))
    assert code == 0
    assert out.startswith("warning ") and "custom-edges-may-all-be-false" in out and "node:a" in out


def test_lint_errors_exit_1_and_list_every_finding(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, ERRORS))
    assert code == 1
    lines = out.splitlines()
    assert len(lines) == 2
    assert lines[0].split()[:3] == ["error", "dangling-edge", "edge:1"]
    assert lines[1].split()[:3] == ["error", "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH", "node:review"]


def test_lint_json_output_shape(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, ERRORS), "--json")
    assert code == 1
    findings = json.loads(out)
    assert [(f["key"], f["severity"], f["where"]) for f in findings] == [
        ("dangling-edge", "error", "edge:1"),
        ("APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH", "error", "node:review"),
    ]
    assert all(list(f) == ["key", "severity", "message", "where"] and f["message"] for f in findings)


def test_lint_json_clean_is_an_empty_list(tmp_path, capsys):
    assert run(capsys, "lint", "--json", write(tmp_path, CLEAN))[:2] == (0, "[]\n")


def test_lint_schema_findings_name_the_field(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, SCHEMA), "--json")
    assert code == 1
    assert sorted(json.loads(out), key=lambda f: f["where"]) == [
        {"key": "schema", "severity": "error", "message": "field required", "where": "data.nodes[1].config.agentId"},
        {
            "key": "schema",
            "severity": "error",
            "message": "input should be a valid boolean",
            "where": "data.nodes[1].config.blocking",
        },
    ]


def test_lint_file_that_is_not_json(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, '{"definitionId": "x",,}'), "--json")
    assert code == 1
    (finding,) = json.loads(out)
    assert (finding["key"], finding["severity"], finding["where"]) == ("schema", "error", "file")
    assert finding["message"].startswith("not valid JSON") and "line 1" in finding["message"]


def test_lint_empty_file(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, ""))
    assert code == 1 and "not valid JSON" in out


def test_lint_json_that_is_not_a_definition(tmp_path, capsys):
    code, out, _ = run(capsys, "lint", write(tmp_path, [1, 2]), "--json")
    assert code == 1
    assert [(f["key"], f["where"]) for f in json.loads(out)] == [("schema", "data")]


def test_lint_accepts_the_data_envelope(tmp_path, capsys):
    bare = run(capsys, "lint", "--json", write(tmp_path, ERRORS, "bare.json"))
    wrapped = run(capsys, "lint", "--json", write(tmp_path, {"data": ERRORS}, "wrapped.json"))
    assert bare == wrapped and bare[0] == 1


def test_lint_missing_file_is_an_io_error(tmp_path, capsys):
    code = None
    with pytest.raises(SystemExit) as info:
        code = main(["lint", str(tmp_path / "nope.json")])
    assert code is None and info.value.code == 2
    assert "cannot read" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    for argv in ([], ["lint"], ["frobnicate", "x"]):
        with pytest.raises(SystemExit) as info:
            main(argv)
        assert info.value.code == 2
    capsys.readouterr()


@pytest.mark.parametrize("name", examples.names())
def test_compile_prints_the_compiled_json(name, tmp_path, capsys):
    raw = examples.load(name)
    code, out, err = run(capsys, "compile", write(tmp_path, raw))
    assert code == 0 and err == ""
    assert json.loads(out) == compile_definition(Definition.model_validate(raw)).to_json()


def test_compile_with_warnings_only_compiles(tmp_path, capsys):
    code, out, _ = run(capsys, "compile", write(tmp_path, {"data": WARNS}))
    assert code == 0 and set(json.loads(out)) == {"forwardEdges", "loops"}


def test_compile_refuses_a_definition_with_errors(tmp_path, capsys):
    code, out, err = run(capsys, "compile", write(tmp_path, ERRORS))
    assert code == 1 and out == ""
    assert "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH" in err and "dangling-edge" in err


def test_compile_not_json(tmp_path, capsys):
    code, out, err = run(capsys, "compile", write(tmp_path, "nope"))
    assert code == 1 and out == "" and "not valid JSON" in err


def _command() -> list[str]:
    script = Path(sys.executable).parent / "collab"
    return [str(script)] if script.exists() else [sys.executable, "-m", "toolkit.cli"]


def test_real_subprocess(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    bad = subprocess.run(
        [*_command(), "lint", write(tmp_path, ERRORS), "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 1, bad.stderr
    assert [f["key"] for f in json.loads(bad.stdout)] == ["dangling-edge", "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH"]
    good = subprocess.run(
        [*_command(), "compile", str(examples.path("reject-loop-exhausted"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert good.returncode == 0, good.stderr
    assert json.loads(good.stdout)["loops"][0]["loopId"] == "loop_editor-review__to__draft"


def test_simulate_into_a_database_of_another_shape_is_refused_and_left_unchanged(tmp_path, capsys):
    """--db must be a results database of this simulator: results written before
    definition_key existed, or any other tables named executions, are refused with the table and
    column named, and the file keeps what it had."""
    import duckdb

    old = tmp_path / "old.duckdb"
    with duckdb.connect(str(old)) as con:
        con.execute("CREATE TABLE executions (run INTEGER, execution_id VARCHAR, exec_key INTEGER)")
        con.execute("INSERT INTO executions VALUES (0, 'x', 0)")
    code, out, err = run(capsys, "simulate", str(examples.path("parallel-review")), "--runs", "3", "--db", str(old))
    assert code == 2 and out == ""
    assert "table executions has no column definition_id" in err and "new file" in err
    with duckdb.connect(str(old), read_only=True) as con:
        assert con.execute("SELECT * FROM executions").fetchall() == [(0, "x", 0)]
        assert con.execute("SELECT table_name FROM information_schema.tables").fetchall() == [("executions",)]
    fresh = tmp_path / "new.duckdb"
    assert run(capsys, "simulate", str(examples.path("parallel-review")), "--runs", "3", "--db", str(fresh))[0] == 0


def test_a_workspace_command_starts_without_the_linter_or_arrow(tmp_path):
    """`collab workspace create` (run by every deployment script) loads no linter, compiler,
    networkx or pyarrow: each command imports what it needs when it runs."""
    probe = (
        "import sys\n"
        "from toolkit.cli import main\n"
        f"code = main(['workspace', 'create', '--db', {str(tmp_path / 'w.duckdb')!r}, '--json'])\n"
        "heavy = ('toolkit.lint', 'toolkit.compiler', 'networkx', 'pyarrow')\n"
        "print(code, sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines()[-1] == "0 []", out.stdout + out.stderr


def test_a_server_starts_without_networkx_or_the_simulator():
    """`collab serve`'s imports (the app and its services) leave out networkx and the simulator,
    which only notebooks and `collab simulate`/`collab replay` use: each start of each process
    behind a load balancer would pay for them."""
    probe = (
        "import sys\n"
        "import server, server.app, toolkit.services.serving\n"
        "heavy = ('networkx', 'toolkit.simulate')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.splitlines()[-1] == "[]", out.stdout + out.stderr
