"""The views that order steps (``step_transitions``, ``directly_follows``) against a plain Python
reference, on random small logs full of ties: steps that start in the same millisecond, end in
the same millisecond, share a node, or are still running; several definitions; rows stored in
any order. Both ways the views get the step order: stored by the simulator (``exec_key``,
``step_index``, numbered by ``toolkit.simulate.records.in_step_order``, and ``definition_key``)
and numbered by the views themselves (a server's tables have none of these columns). Hand-checked cases are in
test_analytics.py."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.analytics import attach
from toolkit.simulate.records import in_step_order
from toolkit.simulate.results import connect

NODES = ("b", "a", "review", "a-2", "Z")  # not in sorted order: node ids order ties, not insertion


@st.composite
def logs(draw):
    """(executions, steps): executions as (execution_id, definition_id); steps as
    (execution_id, step_id, node_id, started_at, completed_at or None), both in a random order."""
    n = draw(st.integers(1, 6))
    executions = [(f"x{i}", draw(st.sampled_from(["d1", "d2"]))) for i in range(n)]
    steps = []
    for execution_id, _ in executions:
        for k in range(draw(st.integers(0, 7))):
            start = draw(st.integers(0, 3))
            end = draw(st.one_of(st.none(), st.integers(start, start + 2)))
            steps.append((execution_id, f"s{k:02d}", draw(st.sampled_from(NODES)), start, end))
    return draw(st.permutations(executions)), draw(st.permutations(steps))


def load(executions, steps, stored: bool):
    """The log in the simulator's tables: with ``stored``, exec_key, step_index and
    definition_key filled in as the simulator does (a step without its execution row has no
    definition key); otherwise without those columns, like a server's database."""
    con = connect(None)
    n = len(executions)
    keys = {e: k for k, (e, _) in enumerate(executions)}
    definition_keys = {d: k for k, d in enumerate(sorted({d for _, d in executions}, reverse=True))}
    definition_of = {e: definition_keys[d] for e, d in executions}
    for e, *_ in steps:
        keys.setdefault(e, len(keys))
    positions = {}
    for e in keys:
        positions.update(
            {
                (e, step.step_id): i
                for i, step in enumerate(
                    in_step_order(
                        SimpleNamespace(step_id=s[1], node_id=s[2], started_at=s[3], completed_at=s[4])
                        for s in steps
                        if s[0] == e
                    )
                )
            }
        )
    _x = pa.table(
        {  # noqa: F841 - read by name below
            "run": list(range(n)),
            "execution_id": [e for e, _ in executions],
            "definition_id": [d for _, d in executions],
            "definition_version": [1] * n,
            "status": ["running"] * n,
            "failure_reason": [None] * n,
            "correlation_id": [e for e, _ in executions],
            "started_at": [0] * n,
            "completed_at": pa.nulls(n, pa.int64()),
            "cancelled_at": pa.nulls(n, pa.int64()),
            "exec_key": pa.array([keys[e] for e, _ in executions], pa.int32()),
            "definition_key": pa.array([definition_of[e] for e, _ in executions], pa.int32()),
        }
    )
    m = len(steps)
    _s = pa.table(
        {  # noqa: F841
            "run": [0] * m,
            "execution_id": [s[0] for s in steps],
            "step_id": [s[1] for s in steps],
            "node_id": [s[2] for s in steps],
            "node_type": ["agent"] * m,
            "status": ["completed"] * m,
            "group_id": pa.nulls(m, pa.string()),
            "iteration": [1] * m,
            "started_at": pa.array([s[3] for s in steps], pa.int64()),
            "completed_at": pa.array([s[4] for s in steps], pa.int64()),
            "decision": pa.nulls(m, pa.string()),
            "source_node_id": pa.nulls(m, pa.string()),
            "output": ["{}"] * m,
            "exec_key": pa.array([keys[s[0]] for s in steps], pa.int32()),
            "step_index": pa.array([positions[(s[0], s[1])] for s in steps], pa.int32()),
            "definition_key": pa.array([definition_of.get(s[0]) for s in steps], pa.int32()),
        }
    )
    con.execute("INSERT INTO executions SELECT * FROM _x")
    con.execute("INSERT INTO steps SELECT * FROM _s")
    if not stored:
        con.execute(
            "ALTER TABLE executions DROP COLUMN exec_key; ALTER TABLE executions DROP COLUMN definition_key; "
            "ALTER TABLE steps DROP COLUMN exec_key; ALTER TABLE steps DROP COLUMN step_index; "
            "ALTER TABLE steps DROP COLUMN definition_key"
        )
    return attach(con)


def reference(executions, steps):
    """Each execution's steps by start, then end (running last), node id, step id; the pairs."""
    pairs, graph = [], Counter()
    definition = dict(executions)
    for execution_id in definition:
        ordered = sorted(
            (s for s in steps if s[0] == execution_id), key=lambda s: (s[3], s[4] is None, s[4] or 0, s[2], s[1])
        )
        for a, b in zip(ordered, ordered[1:]):
            pairs.append((execution_id, a[1], b[1]))
            graph[(definition[execution_id], a[2], b[2])] += 1
    return sorted(pairs), graph


@pytest.mark.parametrize("stored", [True, False], ids=["stored-order", "numbered-order"])
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs())
def test_transitions_and_directly_follows_match_a_plain_sort(stored, log):
    executions, steps = log
    con = load(executions, steps, stored)
    try:
        pairs, graph = reference(executions, steps)
        got_pairs = con.execute(
            "SELECT execution_id, from_step_id, to_step_id FROM step_transitions ORDER BY ALL"
        ).fetchall()
        got_graph = {
            (d, a, b): n
            for d, a, b, n in con.execute(
                "SELECT definition_id, from_node_id, to_node_id, transitions FROM directly_follows"
            ).fetchall()
        }
    finally:
        con.close()
    assert got_pairs == pairs
    assert got_graph == dict(graph)


@pytest.mark.parametrize("stored", [True, False], ids=["stored-order", "numbered-order"])
def test_steps_of_an_execution_missing_from_executions_are_left_out(stored):
    """directly_follows counts per definition, so it needs the execution row; steps without one
    are not counted under some other definition."""
    con = load(
        [("x0", "d1")],
        [("x0", "s1", "a", 0, 1), ("x0", "s2", "b", 1, 2), ("gone", "s1", "a", 0, 1), ("gone", "s2", "b", 1, 2)],
        stored,
    )
    try:
        assert con.execute(
            "SELECT definition_id, from_node_id, to_node_id, transitions FROM directly_follows"
        ).fetchall() == [("d1", "a", "b", 1)]
    finally:
        con.close()
