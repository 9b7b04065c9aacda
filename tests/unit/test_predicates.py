"""Unit tests for toolkit.predicates: every operator, path forms and every invalid form."""

import json
import pickle

import pytest

from toolkit.predicates import (
    Predicate,
    PredicateError,
    evaluate,
    json_equal,
    parse,
    parse_ast,
    truthy,
)

CTX = {
    "output": {
        "score": 0.75,
        "count": 3,
        "decision": "approve",
        "comment": "Looks good to me",
        "tags": ["urgent", "finance"],
        "items": [{"id": "a", "qty": 2}, {"id": "b", "qty": 0}],
        "nothing": None,
        "flag": True,
        "zero": 0,
        "empty": "",
        "emptyList": [],
        "emptyObj": {},
        "nested": {"0": "key-zero", "deep": {"x": [10, 20, 30]}},
    },
    "step": {"stepId": "s-1", "nodeId": "review", "nodeType": "approval", "status": "completed", "iteration": 2},
    "execution": {"input": {"amount": 1200, "requester": {"name": "ann", "roles": ["manager"]}}},
}


def V(path):
    return {"var": path}


def op(name, *args):
    return {"op": name, "args": list(args)}


def run(ast, ctx=CTX):
    return parse(json.dumps(ast)).evaluate(ctx)


# (expression, expected) pairs; each expression is evaluated with the module-level evaluate().
VALUE_CASES = [
    # paths
    (V("output.score"), 0.75),
    (V("output.missing"), None),
    (V("output.missing.deeper"), None),
    (V("output.items.1.id"), "b"),
    (V("output.items.5.id"), None),
    (V("output.items.01"), None),  # not a canonical index, and a list has no keys
    (V("output.tags.0"), "urgent"),
    (V("output.nested.0"), "key-zero"),  # digits on an object are a key
    (V("output.nested.deep.x.2"), 30),
    (V("output.score.0"), None),  # indexing a number
    (V("output.comment.0"), None),  # strings are not indexable
    (V("step.status"), "completed"),
    (V("step.iteration"), 2),
    (V("execution.input.amount"), 1200),
    (V("execution.input.requester.roles.0"), "manager"),
    (V("execution.input"), CTX["execution"]["input"]),
    (V("output"), CTX["output"]),
    (V("step"), CTX["step"]),
    # literals and arrays of expressions
    (None, None),
    (True, True),
    (1.5, 1.5),
    ("x", "x"),
    ([1, V("output.count"), op("not", True)], [1, 3, False]),
    # length
    (op("length", V("output.comment")), 16),
    (op("length", V("output.tags")), 2),
    (op("length", V("output.nested")), 2),
    (op("length", V("output.score")), None),
    (op("length", V("output.count")), None),
    (op("length", V("output.flag")), None),
    (op("length", V("output.missing")), None),
    (op("length", [1, 2, 3]), 3),
]


@pytest.mark.parametrize("expr, expected", VALUE_CASES)
def test_evaluate_values(expr, expected):
    result = evaluate(expr, CTX)
    assert result == expected
    assert type(result) is type(expected)


BOOL_CASES = [
    # eq / ne: deep JSON equality
    (op("eq", V("output.decision"), "approve"), True),
    (op("eq", V("output.decision"), "reject"), False),
    (op("eq", 1, 1.0), True),
    (op("eq", V("output.count"), 3.0), True),
    (op("eq", True, 1), False),
    (op("eq", False, 0), False),
    (op("eq", V("output.flag"), 1), False),
    (op("eq", V("output.flag"), True), True),
    (op("eq", None, None), True),
    (op("eq", V("output.missing"), None), True),
    (op("eq", V("output.nothing"), None), True),
    (op("eq", "1", 1), False),
    (op("eq", [1, [2, 3]], [1.0, [2, 3.0]]), True),
    (op("eq", [1, [2, 3]], [1, [2]]), False),
    (op("eq", [True], [1]), False),
    (op("eq", V("output.tags"), ["urgent", "finance"]), True),
    (op("eq", V("output.tags"), ["finance", "urgent"]), False),
    (op("eq", V("output.items.0"), V("output.items.0")), True),
    (op("eq", V("output.emptyObj"), V("output.emptyList")), False),
    (op("eq", V("execution.input.requester"), V("execution.input.requester")), True),
    (op("ne", V("output.decision"), "reject"), True),
    (op("ne", 1, 1.0), False),
    (op("ne", True, 1), True),
    # ordering: numbers with numbers, strings with strings, everything else false
    (op("gt", V("output.score"), 0.5), True),
    (op("gt", V("output.score"), 0.75), False),
    (op("gte", V("output.score"), 0.75), True),
    (op("lt", V("output.count"), 10), True),
    (op("lte", V("output.count"), 3), True),
    (op("lte", V("output.count"), 2.9), False),
    (op("gt", "b", "a"), True),
    (op("lt", "abc", "abd"), True),
    (op("gte", "a", "b"), False),
    (op("gt", "2", 1), False),
    (op("lt", 1, "2"), False),
    (op("gt", True, 0), False),
    (op("lt", 0, True), False),
    (op("gt", V("output.missing"), -1), False),
    (op("lt", V("output.missing"), 1), False),
    (op("gte", None, None), False),
    (op("gt", [2], [1]), False),
    (op("lte", V("execution.input.amount"), 1200), True),
    (op("gt", V("step.iteration"), 1), True),
    # and / or / not: truthiness and short-circuit
    (op("and", True, 1, "x", [0], {"var": "output.score"}), True),
    (op("and", True, 0), False),
    (op("and", True, ""), False),
    (op("and", True, []), False),
    (op("and", V("output.emptyObj")), False),
    (op("and", V("output.nothing")), False),
    (op("and", 0.0), False),
    (op("and", "0"), True),
    (op("or", False, None, 0, "", [], V("output.emptyObj")), False),
    (op("or", False, 0, "yes"), True),
    (op("or", V("output.missing"), V("output.count")), True),
    (op("not", V("output.missing")), True),
    (op("not", V("output.zero")), True),
    (op("not", V("output.decision")), False),
    (op("not", V("output.tags")), False),
    (op("not", V("output.emptyList")), True),
    # in: membership by eq
    (op("in", V("output.decision"), ["approve", "reject"]), True),
    (op("in", V("output.decision"), ["reject"]), False),
    (op("in", V("output.missing"), ["approve"]), False),
    (op("in", V("output.missing"), [None]), True),
    (op("in", V("output.count"), [1, 3.0]), True),
    (op("in", V("output.flag"), [1]), False),
    (op("in", 1, [True]), False),
    (op("in", [1, 2], [[1.0, 2.0], 3]), True),
    (op("in", "urgent", V("output.tags")), True),
    (op("in", "urg", V("output.comment")), False),  # not an array
    (op("in", "a", "abc"), False),
    (op("in", 1, None), False),
    (op("in", 1, []), False),
    (op("in", 3, ["3"]), False),
    # includes: substring / element
    (op("includes", V("output.comment"), "good"), True),
    (op("includes", V("output.comment"), "bad"), False),
    (op("includes", V("output.tags"), "finance"), True),
    (op("includes", V("output.tags"), "fin"), False),
    (op("includes", [1, 2], 2.0), True),
    (op("includes", [1, 2], True), False),
    (op("includes", "123", 1), False),
    (op("includes", V("output.score"), 0.75), False),
    (op("includes", V("output.nested"), "deep"), False),  # objects are neither
    (op("includes", V("output.missing"), "x"), False),
    # startsWith / endsWith
    (op("startsWith", V("output.comment"), "Looks"), True),
    (op("startsWith", V("output.comment"), "looks"), False),
    (op("endsWith", V("output.comment"), "me"), True),
    (op("endsWith", V("output.comment"), "you"), False),
    (op("startsWith", V("output.tags"), "urgent"), False),
    (op("startsWith", 12, 1), False),
    (op("endsWith", "abc", None), False),
    (op("startsWith", V("step.nodeId"), "rev"), True),
    # regex
    (op("regex", V("output.comment"), r"^Looks\s+good"), True),
    (op("regex", V("output.comment"), r"good"), True),  # search, not match
    (op("regex", V("output.comment"), r"^good"), False),
    (op("regex", V("output.comment"), r"(?i)LOOKS"), True),
    (op("regex", V("output.count"), r"3"), False),
    (op("regex", V("output.missing"), r".*"), False),
    (op("regex", V("output.tags"), r"urgent"), False),
    (op("regex", V("step.stepId"), r"^s-\d+$"), True),
    # length is a value; compare it
    (op("eq", op("length", V("output.tags")), 2), True),
    (op("eq", op("length", V("output.score")), None), True),
    (op("gt", op("length", V("output.comment")), 5), True),
    # isEmpty
    (op("isEmpty", V("output.nothing")), True),
    (op("isEmpty", V("output.missing")), True),
    (op("isEmpty", V("output.empty")), True),
    (op("isEmpty", V("output.emptyList")), True),
    (op("isEmpty", V("output.emptyObj")), True),
    (op("isEmpty", V("output.zero")), False),
    (op("isEmpty", False), False),
    (op("isEmpty", V("output.tags")), False),
    (op("isEmpty", " "), False),
    # exists: presence, even of a null
    (op("exists", V("output.nothing")), True),
    (op("exists", V("output.missing")), False),
    (op("exists", V("output.items.1.qty")), True),
    (op("exists", V("output.items.2")), False),
    (op("exists", V("output.nested.0")), True),
    (op("exists", V("step.status")), True),
    (op("exists", V("execution.input.amount")), True),
    (op("exists", V("execution.input.other")), False),
    (op("exists", V("output")), True),
    # nesting
    (
        op(
            "and",
            op("eq", V("step.status"), "completed"),
            op("or", op("gte", V("output.score"), 0.9), op("in", "urgent", V("output.tags"))),
        ),
        True,
    ),
    (op("not", op("and", op("exists", V("output.nothing")), op("isEmpty", V("output.nothing")))), False),
]


@pytest.mark.parametrize("ast, expected", BOOL_CASES)
def test_operators(ast, expected):
    result = run(ast)
    assert result is expected


def test_short_circuit_skips_later_args():
    # A deep-equality that would be expensive (and a regex) after a false first argument.
    calls = []

    class Spy(dict):
        def get(self, key, default=None):
            calls.append(key)
            return super().get(key, default)

    ctx = {"output": Spy(a=False, b=True)}
    assert parse_ast(op("and", V("output.a"), V("output.b"))).evaluate(ctx) is False
    assert calls == ["a"]
    calls.clear()
    assert parse_ast(op("or", V("output.b"), V("output.a"))).evaluate(ctx) is True
    assert calls == ["b"]


def test_and_or_return_booleans():
    assert run(op("and", 1, "x")) is True
    assert run(op("or", 0, [1])) is True


def test_regex_input_capped_at_16_kib():
    pred = parse_ast(op("regex", V("output.text"), "needle"))
    assert pred.evaluate({"output": {"text": "x" * 16378 + "needle"}}) is True  # ends at 16384
    assert pred.evaluate({"output": {"text": "x" * 16379 + "needle"}}) is False  # ends at 16385
    assert pred.evaluate({"output": {"text": "x" * 100_000 + "needle"}}) is False
    anchored = parse_ast(op("regex", V("output.text"), "x$"))
    assert anchored.evaluate({"output": {"text": "x" * 20_000 + "y"}}) is True  # the cap is the end


def test_missing_context_parts_never_raise():
    pred = parse_ast(
        op(
            "and",
            op("eq", V("step.status"), None),
            op("not", V("execution.input.a.b")),
            op("isEmpty", V("output.x.0.y")),
        )
    )
    for ctx in (
        {},
        {"output": None},
        {"output": [], "step": "s", "execution": 5},
        {"execution": {"input": []}},
        {"output": {"x": [{"y": []}]}},
    ):
        assert pred.evaluate(ctx) is True
    assert pred.evaluate(None) is True  # not even a dict


def test_deeply_nested_context_values():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    other = []
    for _ in range(100_000):
        other = [other]
    pred = parse_ast(op("eq", V("output.a"), V("output.b")))
    assert pred.evaluate({"output": {"a": deep, "b": other}}) is True
    assert pred.evaluate({"output": {"a": deep, "b": [other]}}) is False


def test_huge_strings():
    big = "a" * 5_000_000
    ctx = {"output": {"s": big}}
    assert parse_ast(op("includes", V("output.s"), "b")).evaluate(ctx) is False
    assert parse_ast(op("gt", op("length", V("output.s")), 4_999_999)).evaluate(ctx) is True
    assert parse_ast(op("regex", V("output.s"), "a{3}b")).evaluate(ctx) is False


def test_predicate_attributes():
    when = json.dumps(
        op(
            "and",
            op("gte", V("output.score"), 0.5),
            op("exists", V("step.status")),
            op("in", V("execution.input.kind"), ["a", "b"]),
        )
    )
    pred = parse(when)
    assert isinstance(pred, Predicate)
    assert pred.ast == json.loads(when)
    assert pred.paths == frozenset({"output.score", "step.status", "execution.input.kind"})
    assert parse_ast(op("eq", 1, 1)).paths == frozenset()
    with pytest.raises(AttributeError):
        pred.ast = {}
    with pytest.raises(AttributeError):
        pred.extra = 1
    clone = pickle.loads(pickle.dumps(pred))
    assert clone.ast == pred.ast and clone.evaluate(CTX) == pred.evaluate(CTX)


def test_parse_ast_is_independent_of_later_mutation_of_literals():
    ast = op("in", V("output.decision"), ["approve"])
    pred = parse_ast(ast)
    ast["args"][1].append("nothing")
    ast["args"][1][0] = "reject"
    assert pred.evaluate(CTX) is True


def test_constant_folding_keeps_semantics():
    assert parse_ast(op("eq", op("length", [1, 2]), 2)).evaluate({}) is True
    assert parse_ast(op("not", op("in", 1, [1.0]))).evaluate({}) is False


def test_truthy_and_json_equal_helpers():
    for falsy in (None, False, 0, 0.0, -0.0, "", [], {}):
        assert truthy(falsy) is False
    for true in (True, 1, -1, 0.5, "0", "false", [0], {"a": None}):
        assert truthy(true) is True
    assert json_equal(1, 1.0) and json_equal({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2.0}]})
    assert not json_equal(True, 1) and not json_equal(0, False) and not json_equal(None, 0)
    assert not json_equal({"a": 1}, {"a": 1, "b": 2}) and not json_equal({"a": 1}, {"b": 1})
    assert not json_equal([1, 2], [2, 1]) and not json_equal("a", ["a"])


# --- invalid forms ---------------------------------------------------------------

GOOD = op("eq", V("output.a"), 1)

INVALID_ASTS = [
    (op("foo", 1), 'unknown op "foo"'),
    (op("and", True, op("foo")), 'unknown op "foo" at args[1]'),
    (op("and", op("not", op("bar", 1))), 'unknown op "bar" at args[0].args[0]'),
    ({"op": 3, "args": []}, "op must be a string"),
    (op("eq", 1), 'op "eq" takes 2 args, got 1'),
    (op("eq", 1, 2, 3), 'op "eq" takes 2 args, got 3'),
    (op("not"), 'op "not" takes 1 arg, got 0'),
    (op("not", 1, 2), 'op "not" takes 1 arg, got 2'),
    (op("and"), 'op "and" takes at least 1 arg, got 0'),
    (op("or"), 'op "or" takes at least 1 arg, got 0'),
    (op("exists"), 'op "exists" takes 1 arg, got 0'),
    (op("regex", V("output.a")), 'op "regex" takes 2 args, got 1'),
    (op("and", True, op("length", 1, 2)), 'op "length" takes 1 arg, got 2 at args[1]'),
    (op("eq", V("input.a"), 1), 'bad path root in "input.a"'),
    (op("eq", V("execution.a"), 1), 'bad path root in "execution.a"'),
    (op("eq", V("execution"), 1), 'bad path root in "execution"'),
    (op("eq", V("outputs.a"), 1), 'bad path root in "outputs.a"'),
    (op("eq", V(""), 1), "bad path root"),
    (op("eq", V("output..a"), 1), 'empty segment in path "output..a"'),
    (
        op("exists", V("steps.status")),
        'bad path root in "steps.status" (expected output, step or execution.input) at args[0]',
    ),
    (op("eq", V(5), 1), "var path must be a string"),
    (op("regex", V("output.a"), "(a+)+"), "nests quantifiers"),
    (op("regex", V("output.a"), "(a*)*"), "nests quantifiers"),
    (op("regex", V("output.a"), "(a+)*"), "nests quantifiers"),
    (op("regex", V("output.a"), r"(\w+\s?)+"), "nests quantifiers"),
    (op("regex", V("output.a"), "(a{2,})+"), "nests quantifiers"),
    (op("regex", V("output.a"), "(?:x(ab+)c)*"), "nests quantifiers"),
    (op("regex", V("output.a"), "(a"), "does not compile"),
    (op("regex", V("output.a"), "[z-a]"), "does not compile"),
    (op("regex", V("output.a"), "a**"), "does not compile"),
    (op("regex", V("output.a"), V("output.pattern")), "regex pattern must be a string literal at args[1]"),
    (op("regex", V("output.a"), op("eq", 1, 1)), "regex pattern must be a string literal"),
    (op("regex", V("output.a"), ["a"]), "regex pattern must be a string literal"),
    (op("regex", V("output.a"), 5), "regex pattern must be a string literal"),
    (op("regex", V("output.a"), "a" * 201), "regex pattern is 201 chars, longer than 200"),
    (op("exists", "output.a"), 'op "exists" takes a {"var": path} argument'),
    (op("exists", op("eq", 1, 1)), 'op "exists" takes a {"var": path} argument'),
    (op("exists", {"var": "output.a", "x": 1}), 'op "exists" takes a {"var": path} argument'),
    (op("length", V("output.a")), 'must be a boolean operator, got op "length"'),
    (True, "must be a boolean operator, got a boolean literal"),
    (None, "must be a boolean operator, got a null literal"),
    (1, "must be a boolean operator, got a number literal"),
    ("eq", "must be a boolean operator, got a string literal"),
    ([GOOD], "must be a boolean operator, got a array literal"),
    (V("output.a"), "must be a boolean operator, got a {var} expression"),
    ({"op": "eq", "args": [1, 1], "extra": 1}, 'got keys ["op", "args", "extra"]'),
    ({"var": "output.a", "default": 1}, "got keys"),
    ({"op": "eq"}, 'got keys ["op"]'),
    ({"args": [1, 1]}, "got keys"),
    ({}, "got keys []"),
    (op("and", {"a": 1}), 'got keys ["a"] at args[0]'),
    ({"op": "eq", "args": {"0": 1, "1": 1}}, '"args" of op "eq" must be an array, got object'),
    ({"op": "not", "args": "x"}, "must be an array"),
    (op("eq", V("output.a"), float("nan")), "NaN and Infinity are not JSON"),
    (op("eq", V("output.a"), float("inf")), "NaN and Infinity are not JSON"),
    (op("eq", V("output.a"), (1, 2)), "tuple is not a JSON value"),
]


@pytest.mark.parametrize("ast, message", INVALID_ASTS)
def test_invalid_asts(ast, message):
    with pytest.raises(PredicateError, match=None) as info:
        parse_ast(ast)
    assert message in str(info.value)
    if all(not isinstance(x, float) and not isinstance(x, tuple) for x in _leaves(ast)):
        with pytest.raises(PredicateError) as info2:
            parse(json.dumps(ast))
        assert message in str(info2.value)


def _leaves(ast):
    if isinstance(ast, dict):
        for v in ast.values():
            yield from _leaves(v)
    elif isinstance(ast, list):
        for v in ast:
            yield from _leaves(v)
    else:
        yield ast


def _nest(levels, leaf):
    ast = leaf
    for _ in range(levels - 1):
        ast = op("not", ast)
    return ast


def test_depth_limit_ops():
    parse_ast(_nest(32, op("exists", V("output.a"))))
    parse_ast(_nest(31, op("eq", V("output.a"), V("output.b"))))  # vars are not a level
    with pytest.raises(PredicateError, match="nested deeper than 32 levels"):
        parse_ast(_nest(33, op("exists", V("output.a"))))
    when = json.dumps(_nest(33, op("exists", V("output.a"))))
    assert len(when) <= 1000
    with pytest.raises(PredicateError, match="nested deeper than 32 levels"):
        parse(when)


def test_depth_limit_arrays():
    def arrays(n):
        value = 1
        for _ in range(n):
            value = [value]
        return value

    parse_ast(op("in", 1, arrays(31)))  # 1 op + 31 arrays
    with pytest.raises(PredicateError, match="nested deeper than 32 levels"):
        parse_ast(op("in", 1, arrays(32)))
    with pytest.raises(PredicateError, match="nested deeper than 32 levels"):
        parse_ast(op("in", 1, arrays(10_000)))  # stops early, no RecursionError


INVALID_WHENS = [
    ('{"op": "eq", "args": [1, NaN]}', "NaN is not valid JSON"),
    ('{"op": "eq", "args": [1, Infinity]}', "Infinity is not valid JSON"),
    ('{"op": "eq", "args": [1, -Infinity]}', "Infinity is not valid JSON"),
    ('{"op": "eq", "args": [1, 1e400]}', "NaN and Infinity are not JSON"),
    ('{"op": "eq", "args": [1, 1]', "not valid JSON"),
    ("", "not valid JSON"),
    ("{'op': 'eq'}", "not valid JSON"),
    ('{"op": "eq", "args": [1, 1]} x', "not valid JSON"),
    ("true", "must be a boolean operator, got a boolean literal"),
    ('"eq"', "must be a boolean operator"),
    ('{"op": "length", "args": [[1]]}', 'got op "length"'),
    ("[" * 2000 + "]" * 2000, "longer than the 1000-char limit"),
]


@pytest.mark.parametrize("when, message", INVALID_WHENS)
def test_invalid_whens(when, message):
    with pytest.raises(PredicateError) as info:
        parse(when)
    assert message in str(info.value)


def test_when_length_limit():
    base = json.dumps(op("eq", V("output.a"), ""))
    padded = json.dumps(op("eq", V("output.a"), "x" * (1000 - len(base))))
    assert len(padded) == 1000
    assert parse(padded).evaluate({"output": {"a": "x" * (1000 - len(base))}}) is True
    too_long = json.dumps(op("eq", V("output.a"), "x" * (1001 - len(base))))
    with pytest.raises(PredicateError, match="1001 chars, longer than the 1000-char limit"):
        parse(too_long)
    spaces = " " * 990 + json.dumps(op("exists", V("output")))
    with pytest.raises(PredicateError, match="longer than the 1000-char limit"):
        parse(spaces)


def test_non_string_when():
    with pytest.raises(PredicateError, match="when must be a JSON string"):
        parse({"op": "exists", "args": [V("output")]})
    with pytest.raises(PredicateError):
        parse(b'{"op": "exists", "args": [{"var": "output"}]}')


def test_predicate_error_is_value_error():
    assert issubclass(PredicateError, ValueError)


def test_regex_pattern_boundaries():
    parse_ast(op("regex", V("output.a"), "a" * 200))
    parse_ast(op("regex", V("output.a"), r"(ab|cd)+\d{2,4}"))
    parse_ast(op("regex", V("output.a"), r"\(a+\)+"))  # escaped parentheses are not a group
    parse_ast(op("regex", V("output.a"), r"[(a+)]+"))  # nor are they inside a class


def test_module_evaluate_rejects_invalid_expressions():
    with pytest.raises(PredicateError, match='unknown op "nope"'):
        evaluate(op("nope"), CTX)
    assert evaluate(op("length", V("output.tags")), CTX) == 2
