"""Property tests for toolkit.predicates: total evaluation, round-trips and algebraic laws."""

import json

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolkit.limits import MAX_REGEX_PER_PREDICATE
from toolkit.predicates import json_equal, parse, parse_ast

SETTINGS = settings(max_examples=200, deadline=None)

KEYS = ["score", "decision", "items", "tags", "a", "b", "0", "1", "status", "amount"]
PATHS = [
    "output",
    "output.score",
    "output.decision",
    "output.items",
    "output.items.0",
    "output.items.1.a",
    "output.a.b",
    "output.0",
    "output.tags.1",
    "step",
    "step.status",
    "step.iteration",
    "step.nodeId",
    "execution.input",
    "execution.input.amount",
    "execution.input.a.0.b",
]
SAFE_PATTERNS = ["^a", "b$", r"\d+", "(ab|cd)", "[a-z]{2,}", "^$", ".", "(?i)A", r"\s"]
BOOLEAN_OPS_2 = ["eq", "ne", "gt", "gte", "lt", "lte", "in", "includes", "startsWith", "endsWith"]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from(["", "a", "ab", "b1", "A"])
    | st.text(max_size=6)
)
json_values = st.recursive(
    scalars,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=3), children, max_size=4)
    ),
    max_leaves=20,
)
contexts = st.fixed_dictionaries(
    {
        "output": st.dictionaries(st.sampled_from(KEYS), json_values, max_size=6) | json_values,
        "step": st.fixed_dictionaries(
            {
                "status": st.sampled_from(["completed", "rejected", "failed"]),
                "iteration": st.integers(0, 5),
                "nodeId": st.text(max_size=4),
            }
        )
        | json_values,
        "execution": st.fixed_dictionaries({"input": json_values}) | json_values,
    }
) | st.dictionaries(st.sampled_from(["output", "step", "execution"]), json_values)

# Literals inside a predicate must be finite: NaN and Infinity are not JSON.
literal_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-3, 3)
    | st.floats(-10, 10, allow_nan=False)
    | st.sampled_from(["", "a", "ab", "b1", "A"])
)
variables = st.sampled_from(PATHS).map(lambda p: {"var": p})


def _call(name, args):
    return {"op": name, "args": list(args)}


def _boolean_calls(children):
    """Boolean ops whose arguments are drawn from `children` (any expressions)."""
    return st.one_of(
        st.builds(_call, st.sampled_from(BOOLEAN_OPS_2), st.tuples(children, children)),
        st.builds(_call, st.sampled_from(["and", "or"]), st.lists(children, min_size=1, max_size=3)),
        st.builds(_call, st.sampled_from(["not", "isEmpty"]), st.tuples(children)),
        st.builds(_call, st.just("exists"), st.tuples(variables)),
        st.builds(lambda value, pattern: _call("regex", [value, pattern]), children, st.sampled_from(SAFE_PATTERNS)),
    )


def _regex_ops(ast) -> int:
    if isinstance(ast, list):
        return sum(_regex_ops(a) for a in ast)
    if isinstance(ast, dict) and "op" in ast:
        return (ast["op"] == "regex") + _regex_ops(ast.get("args", []))
    return 0


# A predicate may hold MAX_REGEX_PER_PREDICATE regex ops (the linter's cost limit); each
# expression here holds at most half, so that two combined in one predicate stay within it.
expressions = st.recursive(
    literal_scalars | variables,
    lambda children: (
        _boolean_calls(children)
        | st.builds(_call, st.just("length"), st.tuples(children))
        | st.lists(children, max_size=3)
    ),
    max_leaves=12,
).filter(lambda ast: _regex_ops(ast) <= MAX_REGEX_PER_PREDICATE // 2)
predicates = _boolean_calls(expressions).filter(lambda ast: _regex_ops(ast) <= MAX_REGEX_PER_PREDICATE // 2)


@SETTINGS
@given(predicates, contexts)
def test_evaluation_is_total_and_boolean(ast, context):
    pred = parse_ast(ast)
    assert pred.evaluate(context) in (True, False)
    assert type(pred.evaluate(context)) is bool


@SETTINGS
@given(predicates, json_values)
def test_evaluation_never_raises_on_any_json_context(ast, anything):
    pred = parse_ast(ast)
    assert type(pred.evaluate({"output": anything, "step": anything, "execution": {"input": anything}})) is bool
    assert type(pred.evaluate(anything if isinstance(anything, dict) else {"output": anything})) is bool


@SETTINGS
@given(predicates)
def test_json_round_trip(ast):
    when = json.dumps(ast)
    assume(len(when) <= 1000)
    pred = parse(when)
    assert pred.ast == ast
    assert json.dumps(pred.ast) == when


@SETTINGS
@given(predicates, contexts)
def test_not_inverts(ast, context):
    assert parse_ast({"op": "not", "args": [ast]}).evaluate(context) is (not parse_ast(ast).evaluate(context))


@SETTINGS
@given(expressions, expressions, contexts)
def test_ne_is_not_eq(left, right, context):
    eq = parse_ast({"op": "eq", "args": [left, right]}).evaluate(context)
    ne = parse_ast({"op": "ne", "args": [left, right]}).evaluate(context)
    assert ne is (not eq)


@SETTINGS
@given(json_values)
def test_json_equal_reflexive(value):
    assert json_equal(value, value)
    assert json_equal(value, json.loads(json.dumps(value)))  # a distinct but equal copy


# A small domain so that equal-but-differently-typed values (1 vs 1.0 vs true) collide often.
small_values = st.recursive(
    st.sampled_from([None, True, False, 0, 1, 0.0, 1.0, "", "1"]),
    lambda children: st.lists(children, max_size=2) | st.dictionaries(st.sampled_from("ab"), children, max_size=2),
    max_leaves=6,
)


@SETTINGS
@given(small_values, small_values)
def test_json_equal_symmetric(a, b):
    assert json_equal(a, b) is json_equal(b, a)


@SETTINGS
@given(small_values, small_values)
def test_eq_op_is_json_equal(a, b):
    pred = parse_ast({"op": "eq", "args": [{"var": "output.a"}, {"var": "output.b"}]})
    assert pred.evaluate({"output": {"a": a, "b": b}}) is json_equal(a, b)
