"""Simulator properties over random valid definitions and random policies (hypothesis).

Each example draws a lint-clean definition (``strategies.valid_definitions``) and a policy in
which every reviewer responds (``respond: 1``) but with random approve probabilities, latencies
(fixed / uniform / exponential), agent failure probabilities and outputs, and blocking-agent
success / approve probabilities, then runs ``simulate(definition, runs=3, seed=s, policy=p)``
and checks what lands in the DuckDB tables against semantics §5, §6 and §13:

* every run ends: with every reviewer responding nothing can wait for ever;
* per run, ``seq`` starts at 1 and strictly increases (internal events take numbers too);
* no step becomes terminal twice, and every terminal step did so through exactly one event;
* ``group.quorum-met``: ``total`` ≤ ``expectedSteps`` (and ≥ ``quorum``);
* loop iterations never exceed the loop's ``maxIterations``;
* external event types are those of api-v2 §6;
* the same seed gives a byte-identical events table; a different seed usually does not —
  never asserted per example (a definition may leave nothing to chance), but over the
  examples with an undecided policy in :func:`test_a_different_seed_generally_changes_the_log`.

Budget: about 15 s (each ``simulate`` call costs ~0.1 s, mostly DuckDB set-up).
"""

from __future__ import annotations

import json
from collections import Counter

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from strategies import valid_definitions

from toolkit.compiler import compile_definition
from toolkit.model import Definition
from toolkit.simulate import simulate

# api-v2 §6, spelled out here rather than imported from the engine under test.
EXTERNAL = {
    "execution.dispatched",
    "execution.completed",
    "execution.failed",
    "execution.cancelled",
    "step.awaiting-approval",
    "step.completed",
    "step.failed",
    "step.breached",
    "step.cancelled",
    "group.quorum-met",
    "loop.iteration-started",
    "loop.exhausted",
}
INTERNAL = {
    "step.scheduled",
    "step.started",
    "step.retried",
    "step.resumed",
    "step.response-recorded",
    "step.overridden",
    "parallel-group.completed",
    "idempotency.suppressed",
}
TERMINAL_EVENTS = ("step.completed", "step.failed", "step.cancelled", "step.breached")
TERMINAL = {"completed", "failed", "skipped", "cancelled", "breached"}
RUNS = 3
H = 3_600_000

USERS = ["ann", "bob", "carol", "dave", "erin"]  # the reviewers valid_definitions uses
AGENT_IDS = ["writer", "checker", "classifier", "translator", "publisher"]

# ---------------------------------------------------------------- policies

probabilities = st.sampled_from([0.0, 1.0]) | st.floats(0, 1)
latencies = st.one_of(
    st.integers(0, 2 * H).map(lambda ms: {"fixed": ms}),
    st.integers(0, 2 * H),  # a bare number: shorthand for fixed
    st.lists(st.integers(0, 2 * H), min_size=2, max_size=2).map(lambda pair: {"uniform": pair}),
    st.integers(1, H).map(lambda mean: {"exponential": mean}),
)
agent_outputs = st.lists(
    st.builds(
        lambda p, output: {"p": p, "output": output},
        st.floats(0.01, 1),
        st.sampled_from(
            [
                {"decision": "approve", "score": 0.9},
                {"decision": "approve", "score": 0.1},
                {"decision": "reject", "reason": "not good enough"},
                {"decision": "approve", "summary": "ok", "text": "Fine", "items": [1]},
                {},
            ]
        ),
    ),
    min_size=1,
    max_size=3,
)


@st.composite
def policies(draw) -> dict:
    policy = {"reviewers": {"*": {"approve": draw(probabilities), "respond": 1, "latencyMs": draw(latencies)}}}
    for user in draw(st.lists(st.sampled_from(USERS), unique=True, max_size=3)):
        policy["reviewers"][user] = {"approve": draw(probabilities), "respond": 1}
        if draw(st.booleans()):
            policy["reviewers"][user]["latencyMs"] = draw(latencies)
    agents = {"*": {"fail": draw(probabilities), "latencyMs": draw(latencies)}}
    for agent_id in draw(st.lists(st.sampled_from(AGENT_IDS), unique=True, max_size=2)):
        agents[agent_id] = {"fail": draw(probabilities), "outputs": draw(agent_outputs)}
    policy["agents"] = agents
    policy["resolutions"] = {
        "*": {"success": draw(probabilities), "approve": draw(probabilities), "latencyMs": draw(latencies)}
    }
    policy["arrivalIntervalMs"] = draw(st.integers(0, H))
    return policy


# ---------------------------------------------------------------- reading the tables


def event_rows(result) -> list[tuple]:
    return result.sql(
        "SELECT run, execution_id, seq, event_id, type, step_id, timestamp, correlation_id, "
        "external, data FROM events ORDER BY run, seq"
    ).fetchall()


def event_log(result) -> str:
    """The events table, ordered, as bytes to compare."""
    return json.dumps(event_rows(result))


def behaviour(rows: list[tuple]) -> list[tuple]:
    """What happened when, without the seeded ids (which differ between seeds by construction)."""
    return [(run, seq, type_, timestamp) for run, _, seq, _, type_, _, timestamp, _, _, _ in rows]


def max_iterations(definition: dict) -> dict[str, int]:
    compiled = compile_definition(Definition.model_validate(definition)).to_json()
    return {lp["loopId"]: lp["maxIterations"] for lp in compiled["loops"]}


def check_run_tables(result, definition: dict) -> None:
    rows = event_rows(result)
    by_run: dict[int, list[tuple]] = {}
    for row in rows:
        by_run.setdefault(row[0], []).append(row)
    assert sorted(by_run) == list(range(RUNS))

    outcome_rows = result.sql("SELECT run, status, failure_reason FROM outcomes").fetchall()
    outcomes = {run: status for run, status, _ in outcome_rows}
    assert "running" not in outcomes.values(), outcomes
    node_ids = {n["nodeId"] for n in definition["nodes"]}
    for run, status, reason in outcome_rows:  # §5.8: failed exactly when a failureReason names why
        assert status in ("completed", "failed"), (run, status)
        assert (status == "failed") == (reason is not None), (run, status, reason)
        if reason is not None:
            code, _, ref = reason.partition(":")
            assert code in ("step-failed", "step-breached", "step-rejected", "loop-exhausted"), reason
            assert ref in (node_ids if code != "loop-exhausted" else max_iterations(definition)), reason

    loops = max_iterations(definition)
    node_loop = {}
    compiled = compile_definition(Definition.model_validate(definition)).to_json()
    groups = {g["groupId"]: g for g in definition.get("groups") or []}
    for lp in compiled["loops"]:
        for ref in lp["bodyNodeIds"]:
            for node in groups[ref]["memberNodeIds"] if ref in groups else [ref]:
                node_loop.setdefault(node, lp["loopId"])

    for run, events in by_run.items():
        seqs = [r[2] for r in events]
        assert seqs[0] == 1, (run, seqs[:3])
        assert all(a < b for a, b in zip(seqs, seqs[1:])), (run, seqs)
        assert all(a[6] <= b[6] for a, b in zip(events, events[1:])), "time went backwards"
        types = [r[4] for r in events]
        assert {t for t, r in zip(types, events) if r[8]} <= EXTERNAL
        assert set(types) <= EXTERNAL | INTERNAL
        assert all(r[8] == (r[4] in EXTERNAL) for r in events)

        terminal = Counter(r[5] for r in events if r[4] in TERMINAL_EVENTS)
        twice = {sid: n for sid, n in terminal.items() if n > 1}
        assert not twice, f"run {run}: steps terminal more than once: {twice}"

        status = outcomes[run]
        assert types[-1] == f"execution.{status}", (run, types[-3:])
        assert types.count(f"execution.{status}") == 1

        for r in events:
            data = json.loads(r[9])
            if r[4] == "group.quorum-met":
                assert data["quorum"] <= data["total"] <= data["expectedSteps"], data
                assert data["completedTotal"] <= data["expectedSteps"], data
            elif r[4] == "loop.iteration-started":
                assert 2 <= data["iteration"] <= loops[data["loopId"]], data
            elif r[4] == "loop.exhausted":
                assert data["iteration"] == loops[data["loopId"]], data

    steps = result.sql("SELECT run, step_id, node_id, status, iteration FROM steps").fetchall()
    for run, step_id, node_id, status, iteration in steps:
        assert status in TERMINAL, (run, step_id, status)  # the run ended: nothing is left active
        assert 1 <= iteration <= loops.get(node_loop.get(node_id), 1), (node_id, iteration)
    terminal_events = Counter((r[0], r[5]) for r in rows if r[4] in TERMINAL_EVENTS)
    assert set(terminal_events) == {(run, step_id) for run, step_id, *_ in steps}


# ---------------------------------------------------------------- the properties

SETTINGS = settings(
    max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


@SETTINGS
@given(definition=valid_definitions(), policy=policies(), seed=st.integers(0, 2**31))
def test_simulated_runs_end_and_keep_the_event_log_rules(definition, policy, seed):
    first = simulate(definition, runs=RUNS, seed=seed, policy=policy)
    again = simulate(definition, runs=RUNS, seed=seed, policy=policy)
    try:
        check_run_tables(first, definition)
        assert event_log(first) == event_log(again), "the same seed must give a byte-identical events table"
        assert first.summary == again.summary
        event("outcomes: " + ",".join(sorted(first.summary.outcomes)))
    finally:
        first.con.close()
        again.con.close()


def test_a_different_seed_generally_changes_the_log():
    """Not per example (a definition with no randomness to draw has one behaviour), but over the
    examples with an undecided policy most must differ."""
    from toolkit import examples

    policy = {
        "reviewers": {"*": {"approve": 0.5, "respond": 1, "latencyMs": {"exponential": H}}},
        "agents": {"*": {"fail": 0.1, "latencyMs": {"uniform": [0, 60_000]}}},
        "resolutions": {"*": {"success": 0.7, "approve": 0.7, "latencyMs": {"exponential": 60_000}}},
    }
    differ = 0
    for name in examples.names():
        a = simulate(examples.load(name), runs=RUNS, seed=1, policy=policy)
        b = simulate(examples.load(name), runs=RUNS, seed=2, policy=policy)
        differ += behaviour(event_rows(a)) != behaviour(event_rows(b))
        a.con.close()
        b.con.close()
    assert differ >= len(examples.names()) - 1
