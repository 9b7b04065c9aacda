"""Edge predicates: the `when` language of workflow edges with ``on: "custom"``.

A ``when`` is a JSON string (at most 1000 chars) holding one expression::

    expr    := literal | var | call
    literal := null | true | false | number | string | [expr, ...]
    var     := {"var": path}
    call    := {"op": name, "args": [expr, ...]}
    path    := root ("." segment)*        root := output | step | execution.input

``output`` is the source step's output, ``step`` holds ``stepId nodeId nodeType
status iteration`` and ``execution.input`` the dispatch triggerContext. An absent
path evaluates to null. A segment that is a non-negative integer indexes an
array when the current value is an array; otherwise it is an object key.

Ops: ``eq ne`` (deep JSON equality, 1 == 1.0, true != 1), ``gt gte lt lte``
(two numbers or two strings, else false), ``and or`` (>= 1 arg, short-circuit
on JSON truthiness), ``not``, ``in`` (value, array), ``includes`` (string or
array, value), ``startsWith endsWith``, ``regex`` (value, string-literal
pattern; searches the first 16384 chars in time linear in them, see
:mod:`toolkit.regex_linear`, which refuses backreferences, lookaround,
possessive and atomic constructs), ``length`` (a value, null for
non-containers), ``isEmpty`` and ``exists`` (argument must be a ``{var}``).
Every op except ``length`` is boolean, and the top level must be a boolean op.
Ops and arrays nest at most 32 levels deep.

Parsing validates everything and compiles the tree into closures, so
:meth:`Predicate.evaluate` does no parsing work and never raises for any JSON
context: wrong types simply make comparisons false.
"""
from __future__ import annotations

import json
import math
import operator
import re
import warnings
from re import _parser as _sre_parser

from toolkit.regex_linear import LinearPattern, UnsupportedPattern, compile_linear

__all__ = ["PredicateError", "Predicate", "parse", "parse_ast", "evaluate", "truthy", "json_equal"]

MAX_WHEN_CHARS = 1000
MAX_DEPTH = 32
MAX_PATTERN_CHARS = 200
REGEX_INPUT_CAP = 16384

_MISSING = object()  # "path absent": distinct from a present null, which `exists` must tell apart


class PredicateError(ValueError):
    """A `when` that is not a valid predicate; str(err) names the problem and where."""


def truthy(value: object) -> bool:
    """JSON truthiness: null, false, 0, "", [] and {} are false.

    >>> [truthy(v) for v in (None, 0.0, "", [], {}, "0", [0])]
    [False, False, False, False, False, True, True]
    """
    if value is None or value is False:
        return False
    if value is True:
        return True
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, (str, list, dict)):
        return len(value) > 0
    return True


_NULL, _BOOL, _NUM, _STR, _LIST, _DICT, _OTHER = range(7)
_KIND_NAMES = ("null", "boolean", "number", "string", "array", "object", "non-JSON value")
_KIND_BY_TYPE = {type(None): _NULL, bool: _BOOL, int: _NUM, float: _NUM, str: _STR, list: _LIST, dict: _DICT}
_SAME_TYPE_FAST = frozenset({str, int, float, bool, type(None)})


def _kind(v: object) -> int:
    kind = _KIND_BY_TYPE.get(type(v))
    if kind is None:  # subclasses of JSON types (OrderedDict, IntEnum, ...)
        kind = next((k for t, k in _KIND_BY_TYPE.items() if isinstance(v, t)), _OTHER)
    return kind


def json_equal(a: object, b: object) -> bool:
    """Deep JSON equality: numbers compare numerically, booleans are not numbers.

    >>> json_equal({"a": [1, 2.0]}, {"a": [1.0, 2]}), json_equal(True, 1)
    (True, False)
    """
    if a is b:
        return True
    ta = type(a)
    if ta is type(b) and ta in _SAME_TYPE_FAST:
        return a == b
    # An explicit stack, not recursion: context values may nest arbitrarily
    # deep and evaluation must never hit RecursionError.
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if x is y:
            continue
        k = _kind(x)
        if k != _kind(y):
            return False
        if k == _LIST:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif k == _DICT:
            if len(x) != len(y) or x.keys() != y.keys():
                return False
            stack.extend((x[key], y[key]) for key in x)
        elif k == _OTHER or x != y:  # a non-JSON value is only equal to itself
            return False
    return True


_INDEX = re.compile(r"0|[1-9][0-9]*")


def _compile_path(path: object, loc: str, missing: object):
    """Return ctx -> the value at `path`, or `missing` when it is absent."""
    if not isinstance(path, str):
        _fail(f"var path must be a string, got {_KIND_NAMES[_kind(path)]}", loc)
    segs = path.split(".")
    if not (segs[0] in ("output", "step") or segs[:2] == ["execution", "input"]):
        _fail(f'bad path root in "{path}" (expected output, step or execution.input)', loc)
    if "" in segs:
        _fail(f'empty segment in path "{path}"', loc)
    # Split and index-parse once here so lookups in the hot loop do no string work.
    indexed = tuple((s, int(s) if _INDEX.fullmatch(s) else None) for s in segs)
    keys = tuple(segs)
    # An absent key yields _MISSING, which is neither dict nor list, so the next step stops.

    def resolve_keys(ctx):
        for key in keys:
            if not isinstance(ctx, dict):
                return missing
            ctx = ctx.get(key, _MISSING)
        return missing if ctx is _MISSING else ctx

    def resolve_indexed(ctx):
        for key, index in indexed:
            if isinstance(ctx, dict):
                ctx = ctx.get(key, _MISSING)
            elif index is not None and isinstance(ctx, list) and index < len(ctx):
                ctx = ctx[index]
            else:
                return missing
        return missing if ctx is _MISSING else ctx

    return resolve_keys if all(i is None for _, i in indexed) else resolve_indexed


_REPEATS = frozenset({_sre_parser.MAX_REPEAT, _sre_parser.MIN_REPEAT, _sre_parser.POSSESSIVE_REPEAT})


def _nests_quantifiers(av: object, in_repeat: bool = False) -> bool:
    # Walk the stdlib's own parse tree rather than scanning the text, so escapes,
    # character classes and (?x) comments cannot fool the check.
    if isinstance(av, (tuple, list)):
        return any(_nests_quantifiers(x, in_repeat) for x in av)
    return isinstance(av, _sre_parser.SubPattern) and any(
        (in_repeat or _nests_quantifiers(arg[2], True)) if op in _REPEATS else _nests_quantifiers(arg, in_repeat)
        for op, arg in av.data)


def _compile_regex(pattern: object, loc: str) -> LinearPattern:
    if not isinstance(pattern, str):
        _fail("regex pattern must be a string literal", loc)
    if len(pattern) > MAX_PATTERN_CHARS:
        _fail(f"regex pattern is {len(pattern)} chars, longer than {MAX_PATTERN_CHARS}", loc)
    try:
        # Under "warnings are errors" (pytest) a FutureWarning must not become a rejection.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            re.compile(pattern)
            nested = _nests_quantifiers(_sre_parser.parse(pattern))
            linear = None if nested else compile_linear(pattern)
    except UnsupportedPattern as err:
        raise PredicateError(f"regex pattern {pattern!r} is not supported: {err} at {loc}") from None
    except Exception as err:  # re.error, OverflowError, RecursionError
        raise PredicateError(f"regex pattern does not compile ({err}) at {loc}") from None
    if nested:
        _fail(f"regex pattern {pattern!r} nests quantifiers (catastrophic backtracking)", loc)
    return linear


def _fail(message: str, loc: str):
    raise PredicateError(f"{message} at {loc or 'top level'}")


def _const(value):
    return (lambda ctx: value), value


def _ordered(cmp):
    def build(a, b):
        def fn(ctx):
            x, y = a(ctx), b(ctx)
            kx = _KIND_BY_TYPE.get(type(x)) or _kind(x)  # inline fast path: this is the hot loop
            return (kx == _NUM or kx == _STR) and kx == (_KIND_BY_TYPE.get(type(y)) or _kind(y)) and cmp(x, y)
        return fn
    return build


def _junction(stop: bool):
    """`and` (stop=False) returns at the first falsy argument, `or` (stop=True) at the first truthy."""
    def build(*fs):
        def fn(ctx):
            for f in fs:
                v = f(ctx)
                # Identity tests first: arguments are mostly boolean ops, so truthy() is rarely needed.
                if (v is True or (v is not False and truthy(v))) is stop:
                    return stop
            return not stop
        return fn
    return build


def _member(v, arr):
    return isinstance(arr, list) and any(json_equal(v, item) for item in arr)


def _includes(container, v):
    if isinstance(container, str):
        return isinstance(v, str) and v in container
    return _member(v, container)


def _affix(method):
    return lambda a, b: lambda ctx: (isinstance(s := a(ctx), str) and isinstance(p := b(ctx), str)
                                     and method(s, p))


_CONTAINERS = (str, list, dict)
_BUILDERS = {
    "eq": lambda a, b: lambda ctx: json_equal(a(ctx), b(ctx)),
    "ne": lambda a, b: lambda ctx: not json_equal(a(ctx), b(ctx)),
    "gt": _ordered(operator.gt),
    "gte": _ordered(operator.ge),
    "lt": _ordered(operator.lt),
    "lte": _ordered(operator.le),
    "and": _junction(False),
    "or": _junction(True),
    "not": lambda a: lambda ctx: not truthy(a(ctx)),
    "in": lambda a, b: lambda ctx: _member(a(ctx), b(ctx)),
    "includes": lambda a, b: lambda ctx: _includes(a(ctx), b(ctx)),
    "startsWith": _affix(str.startswith),
    "endsWith": _affix(str.endswith),
    "length": lambda a: lambda ctx: len(v) if isinstance(v := a(ctx), _CONTAINERS) else None,
    "isEmpty": lambda a: lambda ctx: (v := a(ctx)) is None or (isinstance(v, _CONTAINERS) and not v),
}
_ARITY = {op: (2, 2) for op in ("eq", "ne", "gt", "gte", "lt", "lte", "in", "includes",
                                "startsWith", "endsWith", "regex")}
_ARITY.update({"and": (1, None), "or": (1, None), "not": (1, 1), "length": (1, 1),
               "isEmpty": (1, 1), "exists": (1, 1)})
_BOOLEAN_OPS = frozenset(_ARITY) - {"length"}


def _compile(node: object, loc: str, depth: int, paths: set):
    """Validate `node`; return (closure over the context, constant value or _MISSING)."""
    kind = _kind(node)
    if kind in (_NULL, _BOOL, _STR):
        return _const(node)
    if kind == _NUM:
        if isinstance(node, float) and not math.isfinite(node):
            _fail("numbers must be finite (NaN and Infinity are not JSON)", loc)
        return _const(node)
    if kind == _LIST:
        if depth >= MAX_DEPTH:
            _fail(f"expression nested deeper than {MAX_DEPTH} levels", loc)
        parts = [_compile(x, f"{loc}[{i}]", depth + 1, paths) for i, x in enumerate(node)]
        if all(c is not _MISSING for _, c in parts):
            return _const([c for _, c in parts])
        fns = tuple(f for f, _ in parts)
        return (lambda ctx: [f(ctx) for f in fns]), _MISSING
    if kind != _DICT:
        _fail(f"{type(node).__name__} is not a JSON value", loc)
    if node.keys() == {"var"}:
        resolve = _compile_path(node["var"], loc, None)  # first: it refuses a non-string (unhashable) path
        paths.add(node["var"])
        return resolve, _MISSING
    if node.keys() != {"op", "args"}:
        keys = ", ".join(json.dumps(k) if isinstance(k, str) else repr(k) for k in node)
        _fail(f'object must be {{"var": path}} or {{"op": name, "args": [...]}}, got keys [{keys}]', loc)
    op, args = node["op"], node["args"]
    if not isinstance(op, str):
        _fail(f"op must be a string, got {_KIND_NAMES[_kind(op)]}", loc)
    if op not in _ARITY:
        _fail(f"unknown op {json.dumps(op)}", loc)
    if not isinstance(args, list):
        _fail(f'"args" of op "{op}" must be an array, got {_KIND_NAMES[_kind(args)]}', loc)
    if depth >= MAX_DEPTH:
        _fail(f"expression nested deeper than {MAX_DEPTH} levels", loc)
    low, high = _ARITY[op]
    if len(args) < low or (high is not None and len(args) > high):
        want = f"at least {low} arg" if high is None else f"{low} arg" + "s" * (low != 1)
        _fail(f'op "{op}" takes {want}, got {len(args)}', loc)
    arg_locs = [f"{loc}.args[{i}]" if loc else f"args[{i}]" for i in range(len(args))]
    if op == "exists":
        target = args[0]
        if not (isinstance(target, dict) and target.keys() == {"var"}):
            _fail('op "exists" takes a {"var": path} argument', arg_locs[0])
        resolve = _compile_path(target["var"], arg_locs[0], _MISSING)
        paths.add(target["var"])
        return (lambda ctx: resolve(ctx) is not _MISSING), _MISSING
    if op == "regex":
        search = _compile_regex(args[1], arg_locs[1]).search
        parts = [_compile(args[0], arg_locs[0], depth + 1, paths)]
        value = parts[0][0]
        # Linear in the text (toolkit.regex_linear): no pattern and input can stall the caller.
        fn = lambda ctx: isinstance(v := value(ctx), str) and search(v[:REGEX_INPUT_CAP])
    else:
        parts = [_compile(a, arg_locs[i], depth + 1, paths) for i, a in enumerate(args)]
        fn = _BUILDERS[op](*(f for f, _ in parts))
        choices = parts[1][1] if op == "in" else None
        if isinstance(choices, list) and choices and all(type(x) is str for x in choices):
            # The common `value in ["a", "b"]` becomes a set lookup; exact, as only strings equal strings.
            needle, choices = parts[0][0], frozenset(choices)
            fn = lambda ctx: isinstance(v := needle(ctx), str) and v in choices
    if any(c is _MISSING for _, c in parts):
        return fn, _MISSING
    return _const(fn(None))  # ops are pure, so all-constant arguments fold now


class Predicate:
    """A parsed, validated `when`. Immutable; safe to share between threads.

    >>> p = parse('{"op": "gte", "args": [{"var": "output.score"}, 0.5]}')
    >>> p.evaluate({"output": {"score": 0.9}}), sorted(p.paths)
    (True, ['output.score'])
    """
    __slots__ = ("ast", "paths", "_fn")

    # Set once through object.__setattr__ (annotations only, for type checkers).
    ast: object
    paths: frozenset[str]

    def __init__(self, ast: object, paths: frozenset, fn) -> None:
        object.__setattr__(self, "ast", ast)
        object.__setattr__(self, "paths", paths)
        object.__setattr__(self, "_fn", fn)

    def __setattr__(self, name, value):
        raise AttributeError("Predicate is immutable")

    __delattr__ = __setattr__

    def evaluate(self, context: dict) -> bool:
        """Run against {"output": ..., "step": ..., "execution": {"input": ...}}."""
        return self._fn(context)

    def __reduce__(self):  # closures do not pickle; re-parsing the AST does
        return parse_ast, (self.ast,)

    def __repr__(self) -> str:
        return f"Predicate({json.dumps(self.ast)})"


def _reject_constant(name: str):
    raise PredicateError(f"{name} is not valid JSON")


def parse(when: str) -> Predicate:
    """Parse and validate a `when` JSON string.

    >>> parse('{"op": "eq", "args": [{"var": "step.status"}, "done"]}').evaluate({"step": {"status": "done"}})
    True
    """
    if not isinstance(when, str):
        raise PredicateError(f"when must be a JSON string, got {type(when).__name__}")
    if len(when) > MAX_WHEN_CHARS:
        raise PredicateError(f"when is {len(when)} chars, longer than the {MAX_WHEN_CHARS}-char limit")
    try:
        ast = json.loads(when, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as err:
        raise PredicateError(f"when is not valid JSON: {err}") from None
    return parse_ast(ast)


def parse_ast(ast: object) -> Predicate:
    """Validate an already-decoded `when` (kept as `.ast`, so do not mutate it afterwards).

    >>> parse_ast({"op": "exists", "args": [{"var": "execution.input.ticket"}]}).paths
    frozenset({'execution.input.ticket'})
    """
    paths: set = set()
    fn, _ = _compile(ast, "", 0, paths)
    if not (isinstance(ast, dict) and ast.get("op") in _BOOLEAN_OPS):
        what = (f'op "{ast["op"]}"' if isinstance(ast, dict) and "op" in ast
                else "a {var} expression" if isinstance(ast, dict) else f"a {_KIND_NAMES[_kind(ast)]} literal")
        raise PredicateError(f"the top-level expression must be a boolean operator, got {what}")
    return Predicate(ast, frozenset(paths), fn)


def evaluate(expr: object, context: dict) -> object:
    """Evaluate any (sub)expression to a JSON value; raises PredicateError only if `expr` is invalid.

    Validates and compiles on every call: hot loops should use `parse(...).evaluate`.

    >>> evaluate({"op": "length", "args": [{"var": "output.items"}]}, {"output": {"items": [1, 2]}})
    2
    """
    fn, _ = _compile(expr, "", 0, set())
    return fn(context)
