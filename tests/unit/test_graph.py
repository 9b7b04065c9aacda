"""Unit tests for toolkit.graph: the MultiDiGraph view of a definition and its exact round trip."""

from __future__ import annotations

import copy
import json

import networkx as nx
import pytest
from pydantic import ValidationError
from strategies import agent, blocking, definition, edge, group, grp, human, nd, with_sla

from toolkit import examples
from toolkit.graph import from_graph, to_graph


def sample() -> dict:
    return {
        "name": "Sample",  # unusual key order is kept
        "definitionId": "sample-flow",
        "description": None,
        "nodes": [
            with_sla(agent("draft", "writer", mockOutput={"decision": "approve"}), 5000),
            {"type": "human", "nodeId": "legal", "config": {"reviewers": [{"userId": "ann", "mandatory": True}]}},
            blocking("finance"),
            agent("publish"),
            agent("escalate"),
        ],
        "edges": [
            edge("draft", {"groupId": "board", "kind": "group"}, "approve"),
            {"on": "approve", "to": "publish", "from": grp("board")},
            edge(grp("board"), "draft", "reject", loop=3),
            edge(grp("board"), nd("escalate"), "exhausted"),
            edge("draft", "escalate", "custom", when='{"op":"eq","args":[{"var":"step.status"},"breached"]}'),
            edge("draft", "escalate"),
        ],
        "groups": [group("board", "legal", "finance", onQuorumMet="joinOnQuorum", name="Board")],
        "custom": {"owner": {"team": "ops"}},
        "tags": ["x"],
    }


def test_node_attributes():
    raw = sample()
    g = to_graph(raw)
    assert isinstance(g, nx.MultiDiGraph)
    draft = g.nodes["draft"]
    assert draft["kind"] == "node" and draft["type"] == "agent" and draft["index"] == 0
    assert draft["config"] == raw["nodes"][0]["config"] and draft["sla_ms"] == 5000
    assert draft["group"] is None and draft["raw"] == raw["nodes"][0]
    assert g.nodes["legal"]["group"] == "board" and g.nodes["finance"]["group"] == "board"
    assert g.nodes["legal"]["type"] == "human" and g.nodes["legal"]["sla_ms"] is None
    assert [g.nodes[n]["index"] for n in ("draft", "legal", "finance", "publish", "escalate")] == [0, 1, 2, 3, 4]


def test_group_attributes():
    g = to_graph(sample())
    board = g.nodes["board"]
    assert board["kind"] == "group" and board["policy"] == "joinOnQuorum" and board["quorum"] == 2
    assert board["members"] == ["legal", "finance"] and board["index"] == 0
    assert board["raw"]["name"] == "Board"


def test_edge_attributes_keyed_by_authored_index():
    raw = sample()
    g = to_graph(raw)
    assert g.number_of_edges() == len(raw["edges"])
    data = {k: d for _, _, k, d in g.edges(keys=True, data=True)}
    assert sorted(data) == list(range(len(raw["edges"])))
    assert (data[0]["role"], data[0]["loop"], data[0]["when"]) == ("approve", None, None)
    assert data[2]["role"] == "reject" and data[2]["loop"] == 3
    assert data[4]["when"] == raw["edges"][4]["when"]
    assert data[5]["role"] == "always"  # the default role
    assert all(d["index"] == k and d["raw"] == raw["edges"][k] for k, d in data.items())
    # Group endpoints are edges between the group node and the other end.
    assert g.has_edge("draft", "board", key=0) and g.has_edge("board", "publish", key=1)
    assert g.has_edge("board", "draft", key=2) and g.has_edge("board", "escalate", key=3)
    assert sorted(g.successors("board")) == ["draft", "escalate", "publish"]


def test_definition_level_fields_on_the_graph():
    g = to_graph(sample())
    assert g.graph["keys"] == list(sample())
    assert g.graph["definition"]["custom"] == {"owner": {"team": "ops"}}
    assert "nodes" not in g.graph["definition"] and "edges" not in g.graph["definition"]


def _assert_round_trip(raw: dict) -> None:
    before = json.dumps(raw)
    back = from_graph(to_graph(raw))
    assert back == raw
    assert json.dumps(back) == before  # same key order everywhere
    assert json.dumps(raw) == before  # the input is untouched


def test_round_trip_sample():
    _assert_round_trip(sample())


@pytest.mark.parametrize("name", examples.names())
def test_round_trip_every_example(name):
    _assert_round_trip(examples.load(name))


@pytest.mark.parametrize("groups", ["absent", None, []])
def test_round_trip_groups_absent_null_or_empty(groups):
    raw = definition([human("h"), agent("a")], [edge("h", "a", "approve"), edge("h", "a", "reject")])
    if groups != "absent":
        raw["groups"] = groups
    _assert_round_trip(raw)
    assert ("groups" in from_graph(to_graph(raw))) == (groups != "absent")


def test_round_trip_of_a_lint_invalid_but_schema_valid_definition():
    # Dangling edges and missing configs are lint findings; the graph still keeps them exactly.
    raw = definition(
        [{"nodeId": "a", "type": "agent"}, agent("b")],
        [edge("a", "ghost"), edge(grp("nogroup"), "b"), edge("b", "b", "reject", loop=2)],
    )
    _assert_round_trip(raw)
    g = to_graph(raw)
    assert "kind" not in g.nodes["ghost"]  # an undeclared end is a bare graph node


def test_graph_is_independent_of_the_input():
    raw = sample()
    g = to_graph(raw)
    raw["nodes"][0]["config"]["agentId"] = "changed"
    raw["edges"][0]["on"] = "reject"
    raw["custom"]["owner"]["team"] = "changed"
    back = from_graph(g)
    assert back == sample()
    back["nodes"][0]["config"]["agentId"] = "again"
    assert from_graph(g) == sample()  # from_graph hands out copies


def test_to_graph_validates_the_schema():
    raw = sample()
    del raw["nodes"][0]["config"]["agentId"]
    with pytest.raises(ValidationError):
        to_graph(raw)


@pytest.mark.parametrize(
    "raw",
    [
        definition([agent("a"), agent("a")], []),
        definition([agent("a"), blocking("m")], [], [group("a", "m")]),
        definition([blocking("m")], [], [group("g", "m"), group("g", "m")]),
    ],
    ids=["node-node", "group-node", "group-group"],
)
def test_repeated_ids_are_refused_rather_than_merged(raw):
    with pytest.raises(ValueError, match="unique"):
        to_graph(copy.deepcopy(raw))
