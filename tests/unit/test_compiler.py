"""Unit tests for toolkit.compiler: compiled = {forwardEdges, loops} exactly as semantics §4."""

from __future__ import annotations

import json

import pytest
from strategies import agent, blocking, definition, edge, group, grp, human, nd, op, var

from toolkit import examples
from toolkit.compiler import (
    APPROVE_WHEN,
    REJECT_WHEN,
    compile_definition,
    forward_graph,
    is_loop_back,
    loop_id,
)
from toolkit.model import Definition

APPROVE = {"op": "eq", "args": [{"var": "output.decision"}, "approve"]}
REJECT = {"op": "eq", "args": [{"var": "output.decision"}, "reject"]}
SCORE = op("gte", var("output.score"), 0.5)


def compiled(raw: dict) -> dict:
    return compile_definition(Definition.model_validate(raw)).to_json()


def test_role_predicates_are_the_spec_asts():
    assert APPROVE_WHEN == APPROVE and REJECT_WHEN == REJECT


def test_forward_edges_roles_to_when_asts_in_authored_order():
    when = '{ "op": "gte",  "args": [ {"var": "output.score"}, 0.5 ] }'
    raw = definition(
        [human("review"), agent("publish"), agent("fix"), agent("log"), agent("fast"), agent("escalate")],
        [
            edge("review", "publish", "approve"),
            edge("review", "fix", "reject"),
            edge("review", "log"),
            edge("review", "log", "always"),
            edge("publish", "fast", "custom", when=when),
            edge("review", "review", "reject", loop=2),
            edge(nd("review"), {"nodeId": "escalate", "kind": "node"}, "exhausted"),
        ],
    )
    assert compiled(raw)["forwardEdges"] == [
        {"from": "review", "to": "publish", "role": "approve", "when": APPROVE},
        {"from": "review", "to": "fix", "role": "reject", "when": REJECT},
        {"from": "review", "to": "log", "role": "always", "when": None},
        {"from": "review", "to": "log", "role": "always", "when": None},
        {"from": "publish", "to": "fast", "role": "custom", "when": SCORE},
        {"from": "review", "to": "escalate", "role": "exhausted", "when": None},
    ]


def test_forward_edge_keys_and_order():
    raw = definition(
        [agent("a"), blocking("m1"), blocking("m2"), agent("z")],
        [edge("a", grp("g")), edge(grp("g"), "z", "approve"), edge("a", "z")],
        [group("g", "m1", "m2")],
    )
    edges = compiled(raw)["forwardEdges"]
    assert [list(e) for e in edges] == [
        ["from", "to", "role", "when", "toGroupId"],
        ["from", "to", "role", "when", "toGroupId"],
        ["from", "to", "role", "when", "fromGroupId"],
        ["from", "to", "role", "when", "fromGroupId"],
        ["from", "to", "role", "when"],
    ]


def test_group_endpoints_expand_in_member_order():
    raw = definition(
        [agent("start"), blocking("m2"), blocking("m1"), human("m3"), agent("done"), agent("redo")],
        [
            edge("start", grp("board"), "approve"),
            edge(grp("board"), "done", "approve"),
            edge({"groupId": "board", "kind": "group"}, "redo", "reject"),
        ],
        [group("board", "m1", "m2", "m3")],
    )
    assert compiled(raw)["forwardEdges"] == [
        {"from": "start", "to": "m1", "role": "approve", "when": APPROVE, "toGroupId": "board"},
        {"from": "start", "to": "m2", "role": "approve", "when": APPROVE, "toGroupId": "board"},
        {"from": "start", "to": "m3", "role": "approve", "when": APPROVE, "toGroupId": "board"},
        {"from": "m1", "to": "done", "role": "approve", "when": APPROVE, "fromGroupId": "board"},
        {"from": "m2", "to": "done", "role": "approve", "when": APPROVE, "fromGroupId": "board"},
        {"from": "m3", "to": "done", "role": "approve", "when": APPROVE, "fromGroupId": "board"},
        {"from": "m1", "to": "redo", "role": "reject", "when": REJECT, "fromGroupId": "board"},
        {"from": "m2", "to": "redo", "role": "reject", "when": REJECT, "fromGroupId": "board"},
        {"from": "m3", "to": "redo", "role": "reject", "when": REJECT, "fromGroupId": "board"},
    ]


def test_group_to_group_expands_to_the_cross_product_with_both_ids():
    raw = definition(
        [blocking("a"), blocking("b"), blocking("c")],
        [edge(grp("g1"), grp("g2"), "always")],
        [group("g1", "a", "b"), group("g2", "c")],
    )
    assert compiled(raw)["forwardEdges"] == [
        {"from": "a", "to": "c", "role": "always", "when": None, "fromGroupId": "g1", "toGroupId": "g2"},
        {"from": "b", "to": "c", "role": "always", "when": None, "fromGroupId": "g1", "toGroupId": "g2"},
    ]


def test_undeclared_group_expands_to_nothing():
    raw = definition([agent("a")], [edge("a", grp("ghost"))])
    assert compiled(raw)["forwardEdges"] == []


def test_loop_backs_are_excluded_forward_rejects_kept():
    raw = definition(
        [agent("draft"), human("review"), agent("publish"), agent("legal")],
        [
            edge("draft", "review", "approve"),
            edge("review", "publish", "approve"),
            edge("review", "draft", "reject", loop=3),
            edge("review", "legal", "reject"),
        ],
    )
    d = Definition.model_validate(raw)
    assert [is_loop_back(e) for e in d.edges] == [False, False, True, False]
    fwd = compiled(raw)["forwardEdges"]
    assert [(e["from"], e["to"], e["role"]) for e in fwd] == [
        ("draft", "review", "approve"),
        ("review", "publish", "approve"),
        ("review", "legal", "reject"),
    ]


def test_loop_region_of_a_chain():
    raw = definition(
        [
            agent("start"),
            agent("draft"),
            agent("check"),
            human("review"),
            agent("publish"),
            agent("escalate"),
            agent("side"),
        ],
        [
            edge("start", "draft"),
            edge("draft", "check", "approve"),
            edge("check", "review", "approve"),
            edge("check", "side", "reject"),
            edge("review", "publish", "approve"),
            edge("review", "draft", "reject", loop=4),
            edge("review", "escalate", "exhausted"),
        ],
    )
    assert compiled(raw)["loops"] == [
        {
            "loopId": "loop_review__to__draft",
            "entryNodeId": "draft",
            "bodyNodeIds": ["draft", "check", "review"],
            "maxIterations": 4,
            "onExhausted": {"routeToNodeId": "escalate"},
        }
    ]


def test_loop_body_follows_declaration_order_and_every_path():
    # Two parallel paths from the entry to the source; nodes declared out of path order.
    raw = definition(
        [human("review"), agent("left"), agent("right"), agent("draft"), agent("after")],
        [
            edge("draft", "left"),
            edge("draft", "right"),
            edge("left", "review", "approve"),
            edge("right", "review", "approve"),
            edge("review", "after", "approve"),
            edge("review", "draft", "reject", loop=2),
        ],
    )
    (lp,) = compiled(raw)["loops"]
    assert lp["bodyNodeIds"] == ["review", "left", "right", "draft"]
    assert lp["onExhausted"] is None


def test_self_loop():
    raw = definition(
        [agent("before"), human("review"), agent("publish")],
        [edge("before", "review"), edge("review", "publish", "approve"), edge("review", "review", "reject", loop=1)],
    )
    assert compiled(raw)["loops"] == [
        {
            "loopId": "loop_review__to__review",
            "entryNodeId": "review",
            "bodyNodeIds": ["review"],
            "maxIterations": 1,
            "onExhausted": None,
        }
    ]


def test_loop_from_a_group_source():
    raw = definition(
        [
            agent("draft"),
            agent("prep"),
            human("legal"),
            human("finance"),
            agent("publish"),
            agent("escalate"),
            agent("unrelated"),
        ],
        [
            edge("draft", "prep", "approve"),
            edge("prep", grp("board"), "approve"),
            edge(grp("board"), "publish", "approve"),
            edge(grp("board"), "draft", "reject", loop=3),
            edge(grp("board"), "escalate", "exhausted"),
            edge("unrelated", "prep"),
        ],
        [group("board", "finance", "legal", onQuorumMet="joinOnQuorum")],
    )
    out = compiled(raw)
    assert out["loops"] == [
        {
            "loopId": "loop_board__to__draft",
            "entryNodeId": "draft",
            "bodyNodeIds": ["draft", "prep", "legal", "finance"],
            "maxIterations": 3,
            "onExhausted": {"routeToNodeId": "escalate"},
        }
    ]
    # The group's exhausted edge is a forward edge, expanded like any other.
    assert [(e["from"], e["to"]) for e in out["forwardEdges"] if e["role"] == "exhausted"] == [
        ("finance", "escalate"),
        ("legal", "escalate"),
    ]


def test_on_exhausted_matches_the_source_kind_and_id():
    # A node exhausted edge does not belong to a group loop and vice versa.
    raw = definition(
        [agent("s"), blocking("m1"), blocking("m2"), agent("x"), agent("y")],
        [
            edge("s", grp("g")),
            edge(grp("g"), "s", "reject", loop=2),
            edge("m1", "x", "exhausted"),
            edge("s", "s", "reject", loop=1),
            edge(grp("g"), "y", "exhausted"),
        ],
        [group("g", "m1", "m2", onQuorumMet="joinOnQuorum")],
    )
    loops = compiled(raw)["loops"]
    assert [(lp["loopId"], lp["onExhausted"]) for lp in loops] == [
        ("loop_g__to__s", {"routeToNodeId": "y"}),
        ("loop_s__to__s", None),
    ]


def test_loops_in_authored_order():
    raw = definition(
        [agent("a"), agent("b"), agent("c"), agent("d")],
        [
            edge("a", "b", "approve"),
            edge("b", "c", "approve"),
            edge("c", "d", "approve"),
            edge("d", "c", "reject", loop=2),
            edge("b", "a", "reject", loop=5),
        ],
    )
    assert [(lp["loopId"], lp["bodyNodeIds"], lp["maxIterations"]) for lp in compiled(raw)["loops"]] == [
        ("loop_d__to__c", ["c", "d"], 2),
        ("loop_b__to__a", ["a", "b"], 5),
    ]


def test_loop_id_format():
    assert loop_id("review", "draft") == "loop_review__to__draft"


def test_invalid_custom_predicate_compiles_to_null():
    raw = definition([agent("a"), agent("b")], [edge("a", "b", "custom", when="not json")])
    assert compiled(raw)["forwardEdges"][0]["when"] is None


def test_forward_graph_holds_every_declared_node():
    d = Definition.model_validate(definition([agent("a"), agent("b"), agent("c")], [edge("a", "b")]))
    g = forward_graph(d)
    assert list(g.nodes) == ["a", "b", "c"] and list(g.edges) == [("a", "b")]


@pytest.mark.parametrize("name", examples.names())
def test_examples_compile_deterministically(name):
    raw = examples.load(name)
    first = json.dumps(compiled(raw))
    assert first == json.dumps(compiled(raw))
    assert first == json.dumps(compiled(json.loads(json.dumps(raw))))
    d = Definition.model_validate(raw)
    members = {g.group_id: len(g.member_node_ids) for g in d.group_list}

    def width(endpoint):
        return members[endpoint.ref] if endpoint.kind == "group" else 1

    out = json.loads(first)
    assert len(out["forwardEdges"]) == sum(width(e.from_) * width(e.to) for e in d.edges if not is_loop_back(e))
    assert len(out["loops"]) == sum(is_loop_back(e) for e in d.edges)
    for e in out["forwardEdges"]:
        assert set(e) <= {"from", "to", "role", "when", "fromGroupId", "toGroupId"}
        assert isinstance(e["from"], str) and isinstance(e["to"], str)


def test_compile_does_not_share_mutable_state_between_calls():
    raw = definition(
        [human("review"), agent("publish"), agent("fix")],
        [edge("review", "publish", "approve"), edge("review", "fix", "reject")],
    )
    first = compiled(raw)
    first["forwardEdges"][0]["when"]["args"].append("mutated")
    assert compiled(raw)["forwardEdges"][0]["when"] == APPROVE
    assert APPROVE_WHEN == APPROVE


def test_loop_body_order_is_total_even_for_undeclared_ids():
    # A loop-back from a group whose members are not declared (a lint error): declared nodes
    # first, undeclared ids by name — never by set (hash) order, which varies between runs.
    raw = definition([agent("a")], [edge(grp("g"), "a", "reject", loop=2)], [group("g", "zz", "yy", "xx")])
    assert compiled(raw)["loops"][0]["bodyNodeIds"] == ["a", "xx", "yy", "zz"]


def test_forward_edges_without_predicates():
    from toolkit.compiler import forward_edges

    d = Definition.model_validate(
        definition([agent("a"), agent("b")], [edge("a", "b", "approve"), edge("a", "b", "custom", when=SCORE)])
    )
    assert [e["when"] for e in forward_edges(d, with_when=False)] == [None, None]
    assert [e["when"] for e in forward_edges(d)] == [APPROVE, SCORE]
