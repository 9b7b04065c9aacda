"""Property tests over generated definitions: valid ones lint clean, compile deterministically,
echo their edges byte for byte; the linter never raises on any JSON document."""

from __future__ import annotations

import copy
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from strategies import arbitrary_definitions, json_values, valid_definitions

from toolkit.compiler import compile_definition, is_loop_back
from toolkit.graph import from_graph, to_graph
from toolkit.lint import errors_of, lint, lint_document
from toolkit.model import Definition

SETTINGS = settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)


def _errors(raw: dict) -> list:
    _, found = lint_document(raw)
    return [(f.key, f.where, f.message) for f in errors_of(found)]


@SETTINGS
@given(valid_definitions())
def test_generated_definitions_lint_clean(raw):
    assert _errors(raw) == []


@SETTINGS
@given(valid_definitions())
def test_compile_is_deterministic(raw):
    first = json.dumps(compile_definition(Definition.model_validate(raw)).to_json())
    assert first == json.dumps(compile_definition(Definition.model_validate(raw)).to_json())
    again = json.loads(json.dumps(raw))
    assert first == json.dumps(compile_definition(Definition.model_validate(again)).to_json())
    d = Definition.model_validate(raw)
    assert [f.to_json() for f in lint(d)] == [f.to_json() for f in lint(Definition.model_validate(again))]


@SETTINGS
@given(valid_definitions())
def test_loop_backs_never_appear_in_forward_edges(raw):
    d = Definition.model_validate(raw)
    out = compile_definition(d).to_json()
    members = {g.group_id: list(g.member_node_ids) for g in d.group_list}

    def expand(endpoint):
        return members[endpoint.ref] if endpoint.kind == "group" else [endpoint.ref]

    backs = {(s, e.to.ref) for e in d.edges if is_loop_back(e) for s in expand(e.from_)}
    forward_rejects = {(f["from"], f["to"]) for f in out["forwardEdges"] if f["role"] == "reject"}
    assert not backs & forward_rejects
    expected = sum(len(expand(e.from_)) * len(expand(e.to)) for e in d.edges if not is_loop_back(e))
    assert len(out["forwardEdges"]) == expected
    # One loop per loop-back, in authored order, each body holding its entry and its source.
    loop_edges = [e for e in d.edges if is_loop_back(e)]
    assert len(out["loops"]) == len(loop_edges)
    for e, lp in zip(loop_edges, out["loops"]):
        assert lp["loopId"] == f"loop_{e.from_.ref}__to__{e.to.ref}" and lp["entryNodeId"] == e.to.ref
        assert lp["maxIterations"] == e.loop.max_iterations
        assert e.to.ref in lp["bodyNodeIds"] and set(expand(e.from_)) <= set(lp["bodyNodeIds"])
        route = (lp["onExhausted"] or {}).get("routeToNodeId")
        assert route is None or route not in lp["bodyNodeIds"]


@SETTINGS
@given(valid_definitions())
def test_edges_echo_byte_for_byte(raw):
    sent = json.dumps(raw["edges"])
    whole = json.dumps(raw)
    Definition.model_validate(raw)  # validation never mutates the input
    assert json.dumps(raw["edges"]) == sent and json.dumps(raw) == whole
    back = from_graph(to_graph(raw))
    assert json.dumps(back["edges"]) == sent
    assert json.dumps(back) == whole
    assert json.dumps(raw) == whole  # nor does the graph round trip


@settings(max_examples=200, deadline=None)
@given(json_values())
def test_lint_never_raises_on_any_json(document):
    for doc in (document, {"data": document}):
        definition, found = lint_document(doc)
        assert definition is None or isinstance(definition, Definition)
        assert found or definition is not None


@SETTINGS
@given(arbitrary_definitions())
def test_lint_and_compile_never_raise_on_random_graphs(raw):
    definition, found = lint_document(raw)
    assert definition is not None  # schema-valid by construction
    assert all(f.severity in ("error", "warning") and f.key and f.message and f.where for f in found)
    compile_definition(definition).to_json()


def _locations(value, path=()):
    """Every (path) to a value inside a JSON document."""
    yield path
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _locations(v, path + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _locations(v, path + (i,))


@st.composite
def mutated_definitions(draw):
    """A valid definition with one value somewhere replaced by random JSON (or removed)."""
    raw = copy.deepcopy(draw(valid_definitions(max_chains=1, max_stages=4)))
    path = draw(st.sampled_from([p for p in _locations(raw) if p]))
    parent = raw
    for part in path[:-1]:
        parent = parent[part]
    if isinstance(parent, dict) and draw(st.booleans()):
        del parent[path[-1]]
    else:
        parent[path[-1]] = draw(json_values(max_leaves=6))
    return raw


@SETTINGS
@given(mutated_definitions())
def test_lint_never_raises_on_near_valid_documents(raw):
    definition, found = lint_document(raw)
    if definition is None:
        assert found and {f.key for f in found} == {"schema"}
        assert all(f.where.startswith("data") for f in found)
    else:
        compile_definition(definition).to_json()
