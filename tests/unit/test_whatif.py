"""What-if: the recorded version against a candidate under the policy fitted to the log."""

from __future__ import annotations

import copy
import json

import pytest

from toolkit import examples
from toolkit.cli import main
from toolkit.simulate import simulate, whatif

TRUE = {"reviewers": {"alice@legal": {"approve": 0.7}, "bob@brand": {"approve": 0.8}}}


@pytest.fixture(scope="module")
def log_db(tmp_path_factory):
    path = tmp_path_factory.mktemp("whatif") / "log.duckdb"
    simulate(examples.load("parallel-review"), runs=600, seed=3, policy=TRUE, db=path).con.close()
    return path


def _variant(**changes) -> dict:
    body = copy.deepcopy(examples.load("parallel-review"))
    for edge in body["edges"]:
        if "loop" in edge and "maxIterations" in changes:
            edge["loop"]["maxIterations"] = changes["maxIterations"]
    if "name" in changes:
        body["name"] = changes["name"]
    return body


def test_a_known_difference_is_flagged(log_db):
    result = whatif(
        log_db,
        "parallel-review",
        _variant(maxIterations=1),
        definition=examples.load("parallel-review"),
        runs=200,
        replications=5,
    )
    # one round instead of three: every rejection now fails the execution
    assert {"share.failed", "share.completed", "iterations.mean"} <= set(result.flagged)
    recorded, candidate, _ = result.comparison["share.failed"]
    assert candidate.low > recorded.high
    assert "DIFFERS" in result.table() and "**yes**" in result.markdown()
    assert "more steps per run" in result.heatmap().source


def test_a_no_op_change_is_not_flagged(log_db):
    result = whatif(
        log_db,
        "parallel-review",
        _variant(name="Renamed only"),
        definition=examples.load("parallel-review"),
        runs=200,
        replications=5,
    )
    assert result.flagged == []
    assert result.comparison["cycle_time_ms.p50"][0] == result.comparison["cycle_time_ms.p50"][1]


def test_cli_calibrate_writes_a_policy_collab_simulate_runs(log_db, tmp_path, capsys):
    out, report = tmp_path / "policy.json", tmp_path / "report.json"
    assert (
        main(
            [
                "calibrate",
                "--db",
                str(log_db),
                "--definition",
                "parallel-review",
                "--out",
                str(out),
                "--report",
                str(report),
            ]
        )
        == 0
    )
    assert "reviewer alice@legal: approve" in capsys.readouterr().out
    assert json.loads(report.read_text())["reviewers"]["alice@legal"]["approve"]["n"] > 0
    definition = tmp_path / "v1.json"
    definition.write_text(json.dumps(examples.load("parallel-review")))
    assert main(["simulate", str(definition), "--policy", str(out), "--runs", "50"]) == 0
    assert "50 runs" in capsys.readouterr().out


def test_cli_whatif_prints_json_and_needs_the_recorded_definition(log_db, tmp_path, capsys):
    v1, v2 = tmp_path / "v1.json", tmp_path / "v2.json"
    v1.write_text(json.dumps(examples.load("parallel-review")))
    v2.write_text(json.dumps(_variant(maxIterations=1)))
    args = [
        "whatif",
        "--db",
        str(log_db),
        "--definition",
        "parallel-review",
        "--against",
        str(v2),
        "--runs",
        "100",
        "--replications",
        "3",
    ]
    assert main(args) == 2
    assert "--definition-file" in capsys.readouterr().err
    assert main(args + ["--definition-file", str(v1), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"]["iterations.mean"]["differs"] is True
    assert data["metrics"]["iterations.mean"]["candidate"]["mean"] == 1.0


def test_cli_calibrate_refuses_an_unknown_definition(log_db, tmp_path, capsys):
    assert main(["calibrate", "--db", str(log_db), "--definition", "nope", "--out", str(tmp_path / "p.json")]) == 2
    assert "no execution of definition 'nope'" in capsys.readouterr().err


def test_cli_calibrate_reads_expected_resolutions_from_the_definition_file(tmp_path, capsys):
    log = tmp_path / "panel.duckdb"
    definition = examples.load("blocking-agent-quorum")
    simulate(definition, runs=100, seed=4, db=log).con.close()
    body, report = tmp_path / "panel.json", tmp_path / "report.json"
    body.write_text(json.dumps(definition))
    args = ["calibrate", "--db", str(log), "--definition", "blocking-agent-quorum", "--out", str(tmp_path / "p.json")]
    assert main(args + ["--report", str(report), "--definition-file", str(body)]) == 0
    latency = json.loads(report.read_text())["resolutions"]["safety-panel"]["latency"]
    assert (latency["expectedResolutions"], latency["expectedFrom"]) == (3, "definition")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    assert main(args + ["--definition-file", str(broken)]) == 1
    assert "not valid JSON" in capsys.readouterr().err
