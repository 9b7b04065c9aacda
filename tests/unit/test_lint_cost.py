"""Cost limits of the linter (issue 13): custom edges and regex ops per node, regex ops per
predicate — each refused at the limit plus one, admitted at the limit, naming where."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.engine.testing import G, agent, definition, edge, group
from toolkit.errors import ApiError
from toolkit.limits import MAX_CUSTOM_EDGES_PER_NODE, MAX_REGEX_PER_NODE, MAX_REGEX_PER_PREDICATE
from toolkit.lint import errors_of, lint_document
from toolkit.services.workflow.definitions import validated


def when(regex_ops: int) -> str:
    ops = [{"op": "regex", "args": [{"var": "output.text"}, f"^v{k}"]} for k in range(regex_ops)]
    return json.dumps({"op": "or", "args": ops or [{"op": "exists", "args": [{"var": "output.text"}]}]})


def fan(edges: int, regex_each: int, source="src") -> dict:
    nodes = [agent("src"), agent("other")] + [agent(f"t{i}") for i in range(edges)]
    return definition(
        nodes,
        [edge(source, f"t{i}", "custom", when=when(regex_each)) for i in range(edges)],
        groups=[group("g", ["src", "other"])] if source != "src" else None,
    )


def errors(body) -> list[tuple[str, str]]:
    _, found = lint_document(body)
    return [(f.key, f.where) for f in errors_of(found)]


@pytest.mark.parametrize("source, where", [("src", "node:src"), (G("g"), "group:g")])
def test_custom_edges_per_source(source, where):
    assert errors(fan(MAX_CUSTOM_EDGES_PER_NODE, 0, source)) == []
    assert errors(fan(MAX_CUSTOM_EDGES_PER_NODE + 1, 0, source)) == [("too-many-custom-edges", where)]


@pytest.mark.parametrize("source, where", [("src", "node:src"), (G("g"), "group:g")])
def test_regex_ops_per_source(source, where):
    assert errors(fan(2, MAX_REGEX_PER_NODE // 2, source)) == []
    assert errors(fan(MAX_REGEX_PER_NODE + 1, 1, source)) == [("too-many-regex-ops", where)]


def test_regex_ops_per_predicate():
    assert errors(fan(1, MAX_REGEX_PER_PREDICATE)) == []
    _, found = lint_document(fan(1, MAX_REGEX_PER_PREDICATE + 1))
    [f] = errors_of(found)
    assert (f.key, f.where) == ("APPROVAL_EDGE_WHEN_INVALID", "edge:0")
    assert f"more than {MAX_REGEX_PER_PREDICATE} regex ops in one predicate" in f.message


def test_the_create_error_names_key_and_source_and_keeps_the_list_short():
    with pytest.raises(ApiError) as err:
        validated(fan(90, 0))
    message = err.value.message
    assert "too-many-custom-edges" in message and "node 'src' has 90 custom edges" in message
    assert "(edges 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19 … and 70 more)" in message


@settings(max_examples=60, deadline=None)
@given(
    st.integers(min_value=0, max_value=MAX_CUSTOM_EDGES_PER_NODE + 3),
    st.integers(min_value=0, max_value=MAX_REGEX_PER_PREDICATE + 1),
)
def test_the_limits_are_exactly_the_documented_ones(edges, regex_each):
    """Whatever the shape, a finding appears exactly when its limit is passed."""
    expected = set()
    if edges > MAX_CUSTOM_EDGES_PER_NODE:
        expected.add("too-many-custom-edges")
    if edges and regex_each > MAX_REGEX_PER_PREDICATE:
        expected.add("APPROVAL_EDGE_WHEN_INVALID")  # the per-node count ignores invalid predicates
    elif edges * regex_each > MAX_REGEX_PER_NODE:
        expected.add("too-many-regex-ops")
    assert {key for key, _ in errors(fan(edges, regex_each))} == expected
