"""Scripted scenarios for the example definitions: how an author unit-tests a definition.

Every file in ``tests/scripts/`` is named ``<example>--<scenario>.json`` and runs against
``toolkit/examples/<example>.json`` with :func:`toolkit.simulate.run_script`. A file is a
simulator script (``input``, ``actions``, ``expect`` — see :mod:`toolkit.simulate.script`)
plus two keys the script loader does not know, which this module strips before running it:

* ``description`` — one or two sentences: the scenario and the rule of the spec it shows;
* ``checks`` — what to assert beyond ``expect`` (below).

Expectations come from the spec (semantics §5, §6; api-v2 §3, §6), not from a recording of
what the engine happens to do. Where the engine disagrees, the part that disagrees is marked
``xfail(strict=True)`` in :data:`KNOWN_ENGINE_BUGS` below, so a fix turns it into an XPASS.

Each script gives these tests: ``expect`` (``run.mismatches() == []``), ``errors`` (the script
actions the engine refused are exactly those listed in ``checks.errors``, none by default),
``checks`` (everything else in ``checks``), the event-log rules every run keeps (§5, §6) and the
file's own shape. The module also checks that every example has a script and runs scripts
through ``collab simulate --script`` (whose strict loader needs ``description`` and ``checks``
stripped, like :func:`run_script`).

The checks language
-------------------
A step is named ``"<nodeId>#<n>"``: the n-th step created for that node (creation order,
1-based; the same numbering as a script action's ``occurrence``). Every key is optional.

``stepStatuses``  ``{"legal-review#1": "completed"}`` — the step's final status.
``decisions``     ``{"legal-review#2": "approve"}`` — the step's ``output.decision``.
``stepCounts``    ``{"publish": 0}`` — how many steps the node got (0: never created).
``createdBy``     ``{"draft#2": "editor-review#1"}`` — the step was created by an edge (or a loop
                  restart) fired by that step: its id is ``<parent stepId>__to__<nodeId>`` (§5.2).
``stepFields``    ``{"draft#2": {"input.previousAttempts[0].rejectedBy": "bob@brand"}}`` — values
                  at paths into the step. A path starts with ``stepId``, ``status``, ``iteration``,
                  ``input``, ``output`` or ``error`` and continues with ``.key`` and ``[index]``.
                  The value ``"$absent"`` asserts that the path does not exist.
``externalEventTypes``  the exact, ordered list of external event types (api-v2 §6).
``events``        a list of matchers over every event (internal ones included), each
                  ``{"type", "step"?, "atMs"?, "data"?, "count"?}``: ``step`` is a step name or
                  null (execution-level events), ``atMs`` the virtual time since dispatch,
                  ``data`` a ``{path: value}`` map as in ``stepFields`` (rooted in ``data``).
                  Without ``count`` at least one event must match; with it, exactly that many
                  (``"count": 0`` asserts absence).
``outcome``       ``{"iterations": 2, "breaches": 0}`` — fields of ``run.outcome`` not in ``expect``.
``errors``        ``[{"action": 2, "contains": "FAILED_PRECONDITION"}]`` — the refused actions, by
                  index, each message containing the text. Omitted: no action may be refused.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from toolkit import cli, examples
from toolkit.engine import EXTERNAL_TYPES, INTERNAL_TYPES, resume_key
from toolkit.simulate import run_script

SCRIPTS_DIR = Path(__file__).resolve().parents[1] / "scripts"
SCRIPTS = sorted(SCRIPTS_DIR.glob("*.json"))
EXTRA_KEYS = ("description", "checks")
CHECK_KEYS = {
    "stepStatuses",
    "decisions",
    "stepCounts",
    "createdBy",
    "stepFields",
    "externalEventTypes",
    "events",
    "outcome",
    "errors",
}
ABSENT = "$absent"

# (script name, part) -> why the engine's behaviour differs from the spec (none known today).
KNOWN_ENGINE_BUGS: dict[tuple[str, str], str] = {}


# ---------------------------------------------------------------- loading and running


def load(path: Path) -> tuple[str, dict, dict]:
    """(example name, script for run_script, checks) of one scenario file."""
    document = json.loads(path.read_text(encoding="utf-8"))
    example = path.stem.split("--", 1)[0]
    checks = document.get("checks", {})
    script = {k: v for k, v in document.items() if k not in EXTRA_KEYS}
    return example, script, checks


_RUNS: dict[Path, object] = {}


def run_of(path: Path):
    """The scripted run of one file (run once per session: three tests read it)."""
    if path not in _RUNS:
        example, script, _ = load(path)
        _RUNS[path] = run_script(examples.load(example), script)
    return _RUNS[path]


def params(part: str) -> list:
    out = []
    for path in SCRIPTS:
        reason = KNOWN_ENGINE_BUGS.get((path.stem, part))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(path, id=path.stem, marks=marks))
    return out


# ---------------------------------------------------------------- the checks language

_TOKEN = re.compile(r"([^.\[\]]+)|\[(\d+)\]")


def lookup(value, path: str):
    """The value at a ``a.b[0].c`` path, or ABSENT when some part does not exist."""
    for key, index in _TOKEN.findall(path):
        if key:
            if not isinstance(value, dict) or key not in value:
                return ABSENT
            value = value[key]
        else:
            i = int(index)
            if not isinstance(value, list) or i >= len(value):
                return ABSENT
            value = value[i]
    return value


def same(actual, expected) -> bool:
    """JSON equality that keeps true and 1 apart (as the predicates do)."""
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(actual) is type(expected) and actual == expected
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(same(actual[k], expected[k]) for k in expected)
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(same(a, e) for a, e in zip(actual, expected))
        )
    return actual == expected


class Steps:
    """Resolves ``node#n`` names against a run's final state."""

    def __init__(self, run):
        self.run = run

    def __call__(self, name: str):
        node, _, n = name.rpartition("#")
        assert node and n.isdigit(), f"step names look like 'node#1', not {name!r}"
        steps = self.run.state.steps_of(node)
        assert int(n) <= len(steps), f"{name}: the node has only {len(steps)} step(s)"
        return steps[int(n) - 1]


def step_field(step, path: str):
    root, _, rest = path.partition(".")
    head, bracket, tail = root.partition("[")
    roots = {
        "stepId": step.step_id,
        "status": step.status,
        "iteration": step.iteration,
        "input": step.input,
        "output": step.output,
        "error": step.error,
    }
    assert head in roots, f"a step field path starts with one of {sorted(roots)}, not {path!r}"
    value = roots[head]
    remainder = (bracket + tail if bracket else "") + ("." + rest if rest else "")
    return lookup(value, remainder) if remainder else value


def event_matches(event, matcher: dict, step_of, started_at: int) -> bool:
    if event.type != matcher["type"]:
        return False
    if "step" in matcher:
        wanted = matcher["step"]
        if (wanted is None and event.step_id is not None) or (
            wanted is not None and event.step_id != step_of(wanted).step_id
        ):
            return False
    if "atMs" in matcher and event.timestamp - started_at != matcher["atMs"]:
        return False
    return all(same(lookup(event.data, path), value) for path, value in matcher.get("data", {}).items())


def assert_checks(run, checks: dict) -> None:
    """Assert every check except ``errors`` (see the module docstring)."""
    unknown = set(checks) - CHECK_KEYS
    assert not unknown, f"unknown check keys {sorted(unknown)}"
    step_of = Steps(run)
    failures = []

    for name, status in checks.get("stepStatuses", {}).items():
        if step_of(name).status != status:
            failures.append(f"{name}: status {step_of(name).status!r}, expected {status!r}")
    for name, decision in checks.get("decisions", {}).items():
        got = (step_of(name).output or {}).get("decision")
        if got != decision:
            failures.append(f"{name}: decision {got!r}, expected {decision!r}")
    for node, count in checks.get("stepCounts", {}).items():
        got = len(run.state.steps_of(node))
        if got != count:
            failures.append(f"{node}: {got} step(s), expected {count}")
    for name, parent in checks.get("createdBy", {}).items():
        step = step_of(name)
        wanted = f"{step_of(parent).step_id}__to__{step.node_id}"
        if step.step_id != wanted:
            failures.append(f"{name}: step id {step.step_id!r}, expected {wanted!r} (created by {parent})")
    for name, fields in checks.get("stepFields", {}).items():
        step = step_of(name)
        for path, value in fields.items():
            got = step_field(step, path)
            if not same(got, value):
                failures.append(f"{name}.{path}: {got!r}, expected {value!r}")
    if "externalEventTypes" in checks:
        got = [e.type for e in run.external_events]
        if got != checks["externalEventTypes"]:
            failures.append(f"external event types {got}, expected {checks['externalEventTypes']}")
    started = run.state.started_at
    for matcher in checks.get("events", []):
        hits = [e for e in run.events if event_matches(e, matcher, step_of, started)]
        if ("count" in matcher and len(hits) != matcher["count"]) or ("count" not in matcher and not hits):
            near = [(e.seq, e.step_id, e.timestamp - started, e.data) for e in run.events if e.type == matcher["type"]]
            failures.append(f"{len(hits)} event(s) match {matcher}; events of that type: {near}")
    for key, value in checks.get("outcome", {}).items():
        if run.outcome[key] != value:
            failures.append(f"outcome.{key}: {run.outcome[key]!r}, expected {value!r}")
    assert not failures, "\n".join(failures)


# ---------------------------------------------------------------- one test per script and part


@pytest.mark.parametrize("path", params("expect"))
def test_script_meets_its_expectation(path):
    assert run_of(path).mismatches() == []


@pytest.mark.parametrize("path", params("errors"))
def test_script_actions_are_refused_only_where_expected(path):
    run = run_of(path)
    wanted = load(path)[2].get("errors", [])
    got = [(index, message) for index, message in run.errors]
    assert [index for index, _ in got] == [w["action"] for w in wanted], got
    for (index, message), w in zip(got, wanted):
        assert w["contains"] in message, (index, message)


@pytest.mark.parametrize("path", params("checks"))
def test_script_checks(path):
    assert_checks(run_of(path), load(path)[2])


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in SCRIPTS])
def test_scripted_run_keeps_the_event_log_rules(path):
    """Rules every run obeys whatever the scenario (semantics §5.1, §5.3, §5.10, §6)."""
    run = run_of(path)
    events, state = run.events, run.state
    seqs = [e.seq for e in events]
    assert seqs[0] == 1 and all(a < b for a, b in zip(seqs, seqs[1:]))
    assert all(a.timestamp <= b.timestamp for a, b in zip(events, events[1:]))
    assert {e.type for e in events} <= EXTERNAL_TYPES | INTERNAL_TYPES
    for e in events:  # null stepId: execution events, and loop.exhausted of a group source (§5.10)
        if e.type.startswith("execution."):
            assert e.step_id is None, e
        elif e.type != "loop.exhausted":
            assert e.step_id in state.steps, e
    terminal = Counter(
        e.step_id for e in events if e.type in ("step.completed", "step.failed", "step.cancelled", "step.breached")
    )
    assert max(terminal.values(), default=1) == 1, "a step became terminal twice"
    assert set(terminal) == {s.step_id for s in state.steps.values() if s.terminal}
    for e in events:
        if e.type == "step.awaiting-approval":
            assert e.data["resumeKey"] == resume_key(state.execution_id, e.step_id)
            step = state.steps[e.step_id]
            if step.node_type == "human" and step.status == "completed" and step.overridden is None:
                assert step.output["resumeKey"] == e.data["resumeKey"]
    dispatched = events[0]
    assert dispatched.type == "execution.dispatched"
    roots = [sid for sid in state.steps if "__to__" not in sid]
    assert dispatched.data["rootStepIds"] == roots and all(sid.startswith("step_") for sid in roots)
    if state.status != "running":
        assert all(s.terminal for s in state.steps.values())
        assert events[-1].type == f"execution.{state.status}"
    else:
        assert not any(e.type.startswith("execution.") and e.type != "execution.dispatched" for e in events)


# ---------------------------------------------------------------- the files themselves


def test_every_example_has_a_script():
    covered = {path.stem.split("--", 1)[0] for path in SCRIPTS}
    assert set(examples.names()) - covered == set()


@pytest.mark.parametrize("path", [pytest.param(p, id=p.stem) for p in SCRIPTS])
def test_script_file_is_well_formed(path):
    example, _, scenario = path.stem.partition("--")
    assert example in examples.names() and scenario, "name files <example>--<scenario>.json"
    document = json.loads(path.read_text(encoding="utf-8"))
    assert set(document) <= {"description", "input", "actions", "expect", "checks"}
    assert document["description"].strip()
    assert set(document["expect"]) == {"status", "failureReason", "path"}
    assert set(document.get("checks", {})) <= CHECK_KEYS
    assert set(document["checks"].get("externalEventTypes", [])) <= EXTERNAL_TYPES


def test_known_engine_bugs_name_existing_scripts():
    stems = {p.stem for p in SCRIPTS}
    assert {name for name, _ in KNOWN_ENGINE_BUGS} <= stems
    assert {part for _, part in KNOWN_ENGINE_BUGS} <= {"expect", "errors", "checks"}


# ---------------------------------------------------------------- the checks language, on itself


def test_lookup_paths_and_absence():
    doc = {"a": {"b": [{"c": 1}, {"d": None}]}}
    assert lookup(doc, "a.b[0].c") == 1
    assert lookup(doc, "a.b[1].d") is None
    assert lookup(doc, "a.b[1].c") == ABSENT
    assert lookup(doc, "a.b[2]") == ABSENT
    assert lookup(doc, "a.x.y") == ABSENT
    assert same(True, True) and not same(1, True) and not same(True, 1) and same(1, 1.0)


def test_failed_checks_are_reported():
    path = SCRIPTS_DIR / "parallel-review--all-approve.json"
    run = run_of(path)
    with pytest.raises(AssertionError, match="publish: 1 step"):
        assert_checks(run, {"stepCounts": {"publish": 2}})
    with pytest.raises(AssertionError, match="expected 'reject'"):
        assert_checks(run, {"decisions": {"legal-review#1": "reject"}})
    with pytest.raises(AssertionError, match="match"):
        assert_checks(run, {"events": [{"type": "loop.exhausted"}]})
    with pytest.raises(AssertionError, match="input.groupOutputs.nobody"):
        assert_checks(run, {"stepFields": {"publish#1": {"input.groupOutputs.nobody": {}}}})


# ---------------------------------------------------------------- the same scripts through the CLI


def _stripped(path: Path, tmp_path: Path, **expect) -> Path:
    """A copy of a scenario file the CLI's strict script loader accepts (no description/checks)."""
    _, script, _ = load(path)
    if expect:
        script = {**script, "expect": {**script["expect"], **expect}}
    out = tmp_path / path.name
    out.write_text(json.dumps(script), encoding="utf-8")
    return out


def test_cli_runs_a_script_that_meets_its_expectation(tmp_path, capsys):
    path = SCRIPTS_DIR / "parallel-review--reject-then-approve.json"
    code = cli.main(
        ["simulate", str(examples.path("parallel-review")), "--runs", "1", "--script", str(_stripped(path, tmp_path))]
    )
    out = capsys.readouterr()
    assert code == 0, out.err
    assert out.out.startswith("completed after 180000 ms: draft > legal-review > brand-review > draft")
    assert "loop.iteration-started" in out.out and "expectation failed" not in out.err


def test_cli_fails_a_script_whose_expectation_is_wrong(tmp_path, capsys):
    path = SCRIPTS_DIR / "parallel-review--three-rejections-exhaust.json"
    code = cli.main(
        [
            "simulate",
            str(examples.path("parallel-review")),
            "--runs",
            "1",
            "--script",
            str(_stripped(path, tmp_path, status="completed", failureReason=None)),
        ]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "expectation failed: status: expected 'completed', got 'failed'" in err
    assert "expectation failed: failureReason" in err


def test_cli_json_report_of_a_script(tmp_path, capsys):
    path = SCRIPTS_DIR / "cancel-on-quorum--quorum-cancels-remaining.json"
    code = cli.main(
        [
            "simulate",
            str(examples.path("cancel-on-quorum")),
            "--runs",
            "1",
            "--json",
            "--script",
            str(_stripped(path, tmp_path)),
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    assert report["mismatches"] == []
    assert [e["action"] for e in report["scriptErrors"]] == [2]
    assert report["outcome"]["status"] == "completed"


# ---------------------------------------------------------------- simulator behaviour around scripts


def test_actions_after_the_end_are_reported():
    script = {
        "actions": [
            {"atMs": 60_000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"},
            {"atMs": 90_000, "node": "brand-review", "reviewer": "bob@brand", "decision": "approve"},
            # The execution completed at 90 s: cancelling it now is refused (FAILED_PRECONDITION).
            {"atMs": 120_000, "cancelExecution": True, "reason": "withdrawn"},
        ]
    }
    run = run_script(examples.load("parallel-review"), script)
    assert run.outcome["status"] == "completed"
    assert [index for index, _ in run.errors] == [2]
