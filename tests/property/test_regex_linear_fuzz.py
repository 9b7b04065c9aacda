"""The linear-time matcher against ``re`` itself: for generated patterns (classes, anchors,
word boundaries, alternation, every kind of repeat, scoped and global flags) and texts, it finds
a match exactly when ``re.search`` does. Texts stay short so ``re``'s backtracking stays cheap
here; the point of the matcher — time linear in the text — is in benchmarks/regex_predicates.py
and the bounded-time tests beside the predicate tests."""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.regex_linear import MAX_POSITIONS, UnsupportedPattern, compile_linear

ATOMS = [
    "a",
    "b",
    "A",
    "é",
    "1",
    "_",
    " ",
    "\\n",
    ".",
    "[ab]",
    "[^a]",
    "[a-c]",
    "[^\\s]",
    "\\d",
    "\\D",
    "\\w",
    "\\W",
    "\\s",
    "\\S",
    "[\\w-]",
    "(?:)",
    "\\.",
    "[Éé]",
]
ANCHORS = ["^", "$", "\\A", "\\Z", "\\b", "\\B"]
REPEATS = ["*", "+", "?", "*?", "+?", "??", "{2}", "{0,2}", "{1,}", "{2,3}?"]
FLAGS = ["", "(?i)", "(?m)", "(?s)", "(?a)", "(?ims)"]
TEXT = st.text(alphabet="abAÉé1_ \n.-", max_size=12)


def patterns():
    atom = st.sampled_from(ATOMS)
    return st.recursive(
        atom | st.sampled_from(ANCHORS),
        lambda inner: st.one_of(
            st.lists(inner, min_size=1, max_size=4).map("".join),
            st.tuples(inner, inner).map(lambda ab: f"(?:{ab[0]}|{ab[1]})"),
            st.tuples(inner, st.sampled_from(REPEATS)).map(lambda ir: f"(?:{ir[0]}){ir[1]}"),
            st.tuples(st.sampled_from(["i", "m", "s", "-i", "i-s"]), inner).map(lambda fi: f"(?{fi[0]}:{fi[1]})"),
            inner.map(lambda i: f"({i})"),
        ),
        max_leaves=8,
    )


def re_search(pattern: str, text: str) -> bool | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            compiled = re.compile(pattern)
    except re.error:
        return None
    return compiled.search(text) is not None


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(FLAGS), patterns(), st.lists(TEXT, min_size=1, max_size=4))
def test_finds_a_match_exactly_when_re_does(flags, body, texts):
    pattern = flags + body
    expected = [re_search(pattern, t) for t in texts]
    if None in expected:
        return  # not a pattern re accepts (e.g. a flag group in the middle)
    try:
        linear = compile_linear(pattern)
    except UnsupportedPattern:
        return
    assert [linear.search(t) for t in texts] == expected, pattern


@pytest.mark.parametrize(
    "pattern, texts",
    [
        ("^$", ["", "\n", "a", "\n\n"]),
        ("(?m)^$", ["a\n\nb", "a", ""]),
        ("a$", ["a\n", "a\n\n", "ba"]),
        ("\\b", ["", " ", "a"]),
        ("\\B", ["", " ", "a", "ab"]),
        ("(?a)\\w\\b", ["é", "aé"]),
        ("\\w\\b", ["aé", "é "]),
        ("(?i)straße", ["STRASSE", "Straße", "STRAẞE"]),
        ("(?i)[k]", ["\u212a", "K"]),
        ("(?s).", ["\n"]),
        (".", ["\n"]),
        ("\\Z", [""]),
        ("x*", [""]),
        ("(?:|a)*b", ["aab", "aa"]),
        ("(?:a|ab)*c", ["ababac", "abab"]),
    ],
)
def test_edge_cases_agree_with_re(pattern, texts):
    linear = compile_linear(pattern)
    for text in texts:
        assert linear.search(text) == (re.search(pattern, text) is not None), (pattern, text)


@pytest.mark.parametrize(
    "pattern, construct",
    [
        ("(a)\\1", "backreferences"),
        ("(?P<x>a)(?P=x)", "backreferences"),
        ("a(?=b)", "lookahead"),
        ("(?<!a)b", "lookahead/lookbehind"),
        ("(a)?(?(1)b|c)", "conditional"),
        ("a*+", "possessive"),
        ("(?>ab)", "atomic"),
        ("(?a:\\W)", "scoped"),
        ("a{%d}" % (MAX_POSITIONS + 1), "positions"),
        ("(?:\\b){5000}", "states"),
    ],
)
def test_constructs_that_need_backtracking_are_refused(pattern, construct):
    with pytest.raises(UnsupportedPattern, match=construct):
        compile_linear(pattern)
