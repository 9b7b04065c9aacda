"""The work budget of one command (issue 13): predicates are charged in units of work, and a
command past its budget fails its execution naming the edge — deterministically."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.engine import ManualClock, Plan, SeededIds, apply, run_agents
from toolkit.engine.commands import CancelExecution, Dispatch
from toolkit.engine.testing import G, Harness, agent, definition, edge, group, human
from toolkit.limits import COMMAND_WORK_BUDGET, REGEX_INPUT_CAP, REGEX_STEP_UNITS, REGEX_TEST_UNITS
from toolkit.predicates import json_equal, parse
from toolkit.regex_linear import compile_linear
from toolkit.work import Work, WorkLimitExceeded

# The matcher's costliest characters: a class test (an `re` call) per position for every new
# character. One search of a full 16 KiB text fits the budget; a second does not.
HEAVY = "".join(f"[{chr(0x4E00 + i)}-{chr(0x4E32 + i)}]?" for i in range(33)) + "z"
HEAVY_TEXT = "".join(chr(0x4E00 + i) for i in range(REGEX_INPUT_CAP))


def regex_when(*patterns: str, path: str = "output.text") -> str:
    ops = [{"op": "regex", "args": [{"var": path}, p]} for p in patterns]
    return json.dumps(ops[0] if len(ops) == 1 else {"op": "or", "args": ops}, ensure_ascii=False)


def units_per_char(pattern: str) -> int:
    linear = compile_linear(pattern)
    return REGEX_STEP_UNITS + linear.positions + REGEX_TEST_UNITS * linear.class_tests


def test_heavy_pattern_is_what_the_tests_below_assume():
    one = units_per_char(HEAVY) * REGEX_INPUT_CAP
    assert one <= COMMAND_WORK_BUDGET < 2 * one


# ---------------------------------------------------------------- charging


def test_regex_is_charged_per_character_scanned_up_to_the_cap():
    p = parse(regex_when("^a+$"))
    per_char = units_per_char("^a+$")
    for n in (0, 10, REGEX_INPUT_CAP, 3 * REGEX_INPUT_CAP):
        work = Work()
        assert p.evaluate({"output": {"text": "a" * n}}, work) is True or n == 0
        assert work.spent == p.size + per_char * min(n, REGEX_INPUT_CAP)


def test_non_strings_and_missing_values_cost_only_the_nodes():
    p = parse(regex_when("x"))
    for output in ({}, {"text": 5}, {"text": ["x" * 100_000]}):
        work = Work()
        assert p.evaluate({"output": output}, work) is False
        assert work.spent == p.size


def test_deep_equality_is_charged_per_value_compared():
    big = list(range(10_000))
    p = parse('{"op": "eq", "args": [{"var": "output.a"}, {"var": "output.b"}]}')
    work = Work()
    assert p.evaluate({"output": {"a": big, "b": list(big)}}, work) is True
    assert work.spent == p.size + 1 + len(big)  # the two lists, then each pair of items
    work = Work(limit=5_000)
    with pytest.raises(WorkLimitExceeded):
        p.evaluate({"output": {"a": big, "b": list(big)}}, work)
    # scalars cost nothing beyond the nodes
    work = Work()
    assert (
        parse('{"op": "in", "args": [{"var": "output.a"}, {"var": "output.b"}]}').evaluate(
            {"output": {"a": 3, "b": [1, 2, 3]}}, work
        )
        is True
    )
    assert work.spent == 3 + 3


def test_without_work_evaluation_is_unbounded_and_unchanged():
    p = parse(regex_when(HEAVY, HEAVY))
    assert p.evaluate({"output": {"text": HEAVY_TEXT[:50]}}) is p.evaluate(
        {"output": {"text": HEAVY_TEXT[:50]}}, Work()
    )


def test_the_memo_answers_without_changing_the_charge():
    p = parse(regex_when("^a+b$"))
    text = "a" * 1000
    fresh = Work()
    answer = p.evaluate({"output": {"text": text}}, fresh)
    # a memo that lies proves the search was not made again; the charge is the same
    lying = Work(memo={("^a+b$", text): not answer})
    assert p.evaluate({"output": {"text": text}}, lying) is (not answer)
    assert lying.spent == fresh.spent
    assert fresh.memo == {("^a+b$", text): answer}


texts = st.text(alphabet="ab\n -1", max_size=300)
patterns = st.sampled_from(["a+b", "^a*$", r"\d", "(ab|a)*b", r"\bb", "a.{0,5}b", "(?i)A+"])


@settings(max_examples=150, deadline=None)
@given(patterns, texts, st.integers(min_value=1, max_value=5_000))
def test_same_input_same_outcome(pattern, text, limit):
    """Work is counted, never timed: the same evaluation spends the same units and ends the
    same way (a result, or the limit) every time, with or without a memo."""
    p = parse(
        json.dumps(
            {
                "op": "and",
                "args": [
                    {"op": "regex", "args": [{"var": "output.t"}, pattern]},
                    {"op": "eq", "args": [{"var": "output.t"}, {"var": "output.t"}]},
                ],
            }
        )
    )

    def outcome(memo):
        work = Work(limit=limit, memo=memo)
        try:
            return p.evaluate({"output": {"t": text}}, work), work.spent
        except WorkLimitExceeded as exc:
            return "limit", exc.spent

    first = outcome(None)
    assert outcome(None) == first
    warmed: dict = {}
    Work(memo=warmed).search(compile_linear(pattern).search, pattern, text, 1)
    assert outcome(warmed) == first


@settings(max_examples=100, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=3),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4),
        max_leaves=30,
    )
)
def test_charged_equality_agrees_with_plain_equality(value):
    copy = json.loads(json.dumps(value))
    work = Work()
    assert json_equal(value, copy, work) is json_equal(value, copy) is True
    assert work.spent == json_equal_steps(value)


def json_equal_steps(value) -> int:
    """Values deep equality visits comparing ``value`` with an equal copy (scalars at the top: none)."""
    if not isinstance(value, (list, dict)):
        return 0
    stack, n = [value], 0
    while stack:
        v = stack.pop()
        n += 1
        stack.extend(v if isinstance(v, list) else v.values() if isinstance(v, dict) else ())
    return n


# ---------------------------------------------------------------- the engine


def heavy_flow(edges_whens: list[str], text: str = HEAVY_TEXT):
    """work (agent whose output is ``text``) --custom edge per `when`--> t0, t1, …"""
    nodes = [agent("work", mockOutput={"text": text})] + [agent(f"t{i}") for i in range(len(edges_whens))]
    return definition(nodes, [edge("work", f"t{i}", "custom", when=w) for i, w in enumerate(edges_whens)])


@pytest.mark.parametrize("restore", [False, True])
def test_a_command_over_budget_fails_its_execution_naming_the_edge(restore):
    h = Harness(heavy_flow([regex_when("^nothing$"), regex_when(HEAVY), regex_when(HEAVY)]), restore=restore)
    h.dispatch()
    assert h.state.status == "failed"
    assert h.state.failure_reason == "work-limit-exceeded:edge:2"
    assert h.types()[-1] == "execution.failed"
    assert h.of_type("execution.failed")[0].data == {"failureReason": "work-limit-exceeded:edge:2"}
    # the routed step fired nothing: not even the edges whose predicates were already known
    assert h.statuses() == [("work", "completed")]


def test_within_budget_routes_as_before():
    misses = json.loads(regex_when(HEAVY))  # HEAVY ends in "z", which the text never holds
    h = Harness(heavy_flow([regex_when("^nothing$"), json.dumps({"op": "not", "args": [misses]}, ensure_ascii=False)]))
    h.dispatch()
    assert h.state.status == "completed"
    assert h.statuses() == [("work", "completed"), ("t1", "completed")]


def test_the_budget_is_per_command_not_per_execution():
    """Each agent completion is its own command: three heavy steps in a row each fit."""
    nodes = [agent(n, mockOutput={"text": HEAVY_TEXT}) for n in ("a", "b", "c")] + [agent("end")]
    unless = json.dumps({"op": "not", "args": [json.loads(regex_when(HEAVY))]}, ensure_ascii=False)
    body = definition(
        nodes,
        [
            edge("a", "b", "custom", when=unless),
            edge("b", "c", "custom", when=unless),
            edge("c", "end", "custom", when=unless),
        ],
    )
    h = Harness(body)
    h.dispatch()
    assert h.state.status == "completed"
    assert [n for n, _ in h.statuses()] == ["a", "b", "c", "end"]


def test_group_edges_are_charged_too():
    body = definition(
        [agent("m1", mockOutput={"decision": "approve", "text": HEAVY_TEXT}), agent("m2"), agent("after")],
        [edge(G("g"), "after", "custom", when=regex_when(HEAVY, HEAVY, path="output.groupOutputs.m1.text"))],
        groups=[group("g", ["m1", "m2"])],
    )
    h = Harness(body)
    h.dispatch()
    assert (h.state.status, h.state.failure_reason) == ("failed", "work-limit-exceeded:edge:0")


def test_active_steps_are_cancelled_by_the_work_limit():
    body = definition(
        [human("review", "ann"), agent("work", mockOutput={"text": HEAVY_TEXT}), agent("t")],
        [edge("work", "t", "custom", when=regex_when(HEAVY, HEAVY))],
    )
    h = Harness(body)
    h.dispatch()
    assert h.state.failure_reason == "work-limit-exceeded:edge:0"
    review = h.step("review")
    assert review.status == "cancelled"
    assert h.of_type("step.cancelled")[0].data == {"actorId": "system:work-limit", "reason": "work-limit-exceeded"}


def test_the_memo_of_a_rehearsal_gives_the_same_transition():
    """What the server does: apply once on a copy to fill the memo, then for real with it."""
    plan = Plan.from_definition(heavy_flow([regex_when("^nothing$"), regex_when(HEAVY), regex_when(HEAVY)]))

    def run(memo):
        t = apply(plan, None, Dispatch("ex_1"), ManualClock(5), SeededIds(3), Work(memo=memo))
        more = run_agents(plan, t.state, t, ManualClock(5), SeededIds(3), memo=memo)
        return t.state.to_dict(), [(e.seq, e.type, e.data) for x in (t, *more) for e in x.events]

    memo: dict = {}
    rehearsed = run(memo)
    assert memo, "the rehearsal searched"
    assert run(memo) == rehearsed == run(None)


def test_the_simulator_fails_the_same_runs_the_same_way():
    """The simulator runs the same engine, so the same budget: every run of a definition whose
    agent output is too costly to route fails with the same reason as on the server."""
    from toolkit.simulate import simulate

    result = simulate(heavy_flow([regex_when(HEAVY, HEAVY)]), runs=2, seed=1)
    assert result.summary.failure_reasons == {"work-limit-exceeded:edge:0": 2}


# ---------------------------------------------------------------- the server's rehearsal


def test_the_service_rehearses_regex_commands_before_the_writer(tmp_path):
    """On a real store: a dispatch of a definition with regex ops is rehearsed (its searches
    are in the memo), one without is not; the dispatch then routes exactly as rehearsed."""
    from toolkit.client import LocalClient
    from toolkit.services.workflow.rehearsal import rehearse, rehearse_dispatch

    misses = json.dumps({"op": "not", "args": [json.loads(regex_when("^x+$"))]})
    with LocalClient.open(str(tmp_path / "r.duckdb")) as client:
        services, ws = client.services, client.workspace.workspace_id
        client.create_definition(heavy_flow([misses], text="y" * 5000) | {"definitionId": "with-regex"})
        client.create_definition(definition([agent("a"), agent("b")], [edge("a", "b")], definition_id="no-regex"))
        memo = rehearse_dispatch(services, ws, "with-regex", Dispatch("ex_r"))
        assert memo == {("^x+$", "y" * 5000): False}
        assert rehearse_dispatch(services, ws, "no-regex", Dispatch("ex_r")) is None
        assert rehearse_dispatch(services, ws, "missing", Dispatch("ex_r")) is None
        execution_id = client.dispatch("with-regex")["executionId"]
        assert [s["nodeId"] for s in client.get_execution(execution_id)["steps"]] == ["work", "t0"]
        # the execution has ended: the rehearsed command is refused, and the writer will say so
        assert rehearse(services, ws, execution_id, lambda state: CancelExecution("late")) == {}
        assert rehearse(services, ws, "ex_unknown", lambda state: CancelExecution("late")) is None
