"""Fuzzing the predicate parser: whatever a client puts in a `when` — any JSON value, near-misses
of the grammar, deep nesting, text that is not JSON at all — parsing either gives a Predicate
or raises PredicateError naming the problem, never anything else (semantics §3.1)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.predicates import MAX_DEPTH, Predicate, PredicateError, parse, parse_ast

FUZZ = settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])

OPS = [
    "eq",
    "ne",
    "gt",
    "gte",
    "lt",
    "lte",
    "and",
    "or",
    "not",
    "in",
    "includes",
    "startsWith",
    "endsWith",
    "regex",
    "length",
    "isEmpty",
    "exists",
]
PATHS = [
    "output",
    "output.a",
    "output.0",
    "step.status",
    "execution.input.x",
    "execution",
    "input.x",
    "",
    "output..a",
    "output.",
    ".output",
    "step.__proto__",
    "output.a.b.c.d.e",
]
PATTERNS = [
    "a",
    "(a+)+",
    "(",
    "[",
    "\\",
    "a{2,1}",
    "(?P<x>a)(?P=x)",
    "(?<=a)b",
    "a" * 250,
    "(?x) a # c",
    "\\p{L}",
    "(?i)A",
    "[\\d-z]",
    "a**",
    "(?",
    "\\1",
    "(a|b)*c",
    ".*.*x",
]

json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.integers(min_value=2**63, max_value=2**80)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(OPS + PATHS)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5) | st.sampled_from(["op", "args", "var"]), inner, max_size=4)
    ),
    max_leaves=25,
)


def grammar_near_misses(inner):
    """Objects shaped almost like the grammar: right keys with wrong values, extra keys, wrong arity."""
    op = st.sampled_from(OPS) | json_scalars
    args = st.lists(inner, max_size=4) | inner
    return st.one_of(
        st.builds(lambda o, a: {"op": o, "args": a}, op, args),
        st.builds(lambda p: {"var": p}, st.sampled_from(PATHS) | json_values),
        st.builds(
            lambda o, a, extra: {"op": o, "args": a, **extra},
            op,
            args,
            st.dictionaries(st.text(max_size=3), json_scalars, min_size=1, max_size=2),
        ),
        st.builds(lambda v, p: {"op": "regex", "args": [v, p]}, inner, st.sampled_from(PATTERNS) | json_values),
        st.builds(lambda p: {"op": "exists", "args": [p]}, inner),
    )


expressions = st.recursive(
    json_scalars | st.builds(lambda p: {"var": p}, st.sampled_from(PATHS)),
    lambda inner: grammar_near_misses(inner) | st.lists(inner, max_size=3),
    max_leaves=30,
)


def _parse_ast_or_documented_error(ast) -> Predicate | None:
    try:
        return parse_ast(ast)
    except PredicateError as err:
        assert str(err), "a PredicateError must say what is wrong"
        return None


@FUZZ
@given(json_values | expressions)
def test_any_json_value_parses_or_is_a_predicate_error(ast):
    predicate = _parse_ast_or_documented_error(ast)
    if predicate is not None:
        assert isinstance(predicate.evaluate({}), bool)  # and evaluation is total


@FUZZ
@given(st.text(max_size=1200) | st.binary(max_size=300).map(lambda b: b.decode("latin-1")))
def test_any_text_parses_or_is_a_predicate_error(when):
    try:
        parse(when)
    except PredicateError:
        pass


@FUZZ
@given(expressions, st.integers(0, 40))
def test_json_text_of_any_expression_parses_or_is_a_predicate_error(ast, cut):
    text = json.dumps(ast)
    for when in (text, text[:-cut] if cut else text):
        try:
            parse(when)
        except PredicateError:
            pass


WRAPPERS = {
    "op": lambda inner: {"op": "not", "args": [inner]},
    "array": lambda inner: [inner],
    "args-array": lambda inner: {"op": "in", "args": [1, [inner]]},
    "object": lambda inner: {"op": "eq", "args": [{"var": "output"}, {"k": inner}]},
}


@pytest.mark.parametrize("shape", sorted(WRAPPERS))
@pytest.mark.parametrize("depth", [MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, 1_000, 100_000])
def test_deep_nesting_is_a_predicate_error_never_a_recursion_error(shape, depth):
    ast = {"op": "exists", "args": [{"var": "output"}]}
    for _ in range(depth):
        ast = WRAPPERS[shape](ast)
    wrapped = {"op": "and", "args": [ast]}
    _parse_ast_or_documented_error(wrapped)
    if depth >= MAX_DEPTH and shape != "object":
        with pytest.raises(PredicateError, match=f"deeper than {MAX_DEPTH}"):
            parse_ast(wrapped)


@pytest.mark.parametrize("when", ["[" * 999, "[" * 500 + "]" * 500, '{"op":' * 166, '{"a":' * 200 + "1" + "}" * 200])
def test_deeply_nested_text_is_a_predicate_error(when):
    with pytest.raises(PredicateError):
        parse(when)


@pytest.mark.parametrize("path", [[1], {}, {"a": 1}, ["output"]])
def test_a_var_path_that_is_not_a_string_is_a_predicate_error(path):
    """Found by the fuzz: an unhashable path used to escape as a TypeError."""
    with pytest.raises(PredicateError, match="var path must be a string"):
        parse_ast({"op": "eq", "args": [{"var": path}, 1]})
    with pytest.raises(PredicateError, match="var path must be a string"):
        parse(json.dumps({"op": "not", "args": [{"var": path}]}))
