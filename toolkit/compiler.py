"""compile_definition(definition) -> Compiled ``{forwardEdges, loops}`` (semantics §4).

The compiled form is a view for tools (designer, docs, the DefinitionView); the engine
reads the same facts through :mod:`toolkit.engine.plan`. Ordering is deterministic:
edges in authored order, group endpoints expanded in ``memberNodeIds`` order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

from toolkit.model import Definition, Edge
from toolkit.predicates import PredicateError, parse

APPROVE_WHEN = {"op": "eq", "args": [{"var": "output.decision"}, "approve"]}
REJECT_WHEN = {"op": "eq", "args": [{"var": "output.decision"}, "reject"]}


def is_loop_back(edge: Edge) -> bool:
    """A reject edge that carries ``loop`` is a loop-back, never a forward edge."""
    return edge.on == "reject" and edge.loop is not None


def role_when(edge: Edge):
    """The predicate AST an edge's role compiles to (None for always/exhausted)."""
    if edge.on == "approve":
        return APPROVE_WHEN
    if edge.on == "reject":
        return REJECT_WHEN
    if edge.on == "custom" and edge.when is not None:
        try:
            return parse(edge.when).ast
        except PredicateError:
            return None
    return None


def loop_id(source: str, to: str) -> str:
    return f"loop_{source}__to__{to}"


@dataclass(frozen=True)
class Compiled:
    forward_edges: list[dict] = field(default_factory=list)
    loops: list[dict] = field(default_factory=list)

    def to_json(self) -> dict:
        return {"forwardEdges": self.forward_edges, "loops": self.loops}


def members_of(definition: Definition) -> dict[str, list[str]]:
    return {g.group_id: list(g.member_node_ids) for g in definition.group_list}


def _expand(endpoint, groups: dict[str, list[str]]) -> tuple[list[str], str | None]:
    if endpoint.kind == "group":
        return groups.get(endpoint.group_id, []), endpoint.group_id
    return [endpoint.node_id], None


def forward_edges(definition: Definition) -> list[dict]:
    groups = members_of(definition)
    out = []
    for edge in definition.edges:
        if is_loop_back(edge):
            continue
        sources, from_group = _expand(edge.from_, groups)
        targets, to_group = _expand(edge.to, groups)
        when = role_when(edge)
        for source in sources:
            for target in targets:
                item = {"from": source, "to": target, "role": edge.on, "when": when}
                if from_group is not None:
                    item["fromGroupId"] = from_group
                if to_group is not None:
                    item["toGroupId"] = to_group
                out.append(item)
    return out


def forward_graph(definition: Definition, edges: list[dict] | None = None) -> nx.DiGraph:
    """Node-level graph of forward edges, every declared node present."""
    graph = nx.DiGraph()
    graph.add_nodes_from(n.node_id for n in definition.nodes)
    graph.add_edges_from((e["from"], e["to"]) for e in (edges if edges is not None else forward_edges(definition)))
    return graph


def loop_body(graph: nx.DiGraph, entry: str, sources: list[str], order: dict[str, int]) -> list[str]:
    """Every node on a forward path from ``entry`` to any source, both ends included."""
    body = {entry, *sources}
    if entry in graph:
        reach = nx.descendants(graph, entry) | {entry}
        for source in sources:
            if source in graph:
                body |= reach & (nx.ancestors(graph, source) | {source})
    return sorted(body, key=lambda n: order.get(n, len(order)))


def loops(definition: Definition, graph: nx.DiGraph | None = None) -> list[dict]:
    groups = members_of(definition)
    graph = graph if graph is not None else forward_graph(definition)
    order = {n.node_id: i for i, n in enumerate(definition.nodes)}
    out = []
    for edge in definition.edges:
        if not is_loop_back(edge):
            continue
        source = edge.from_.ref
        sources = groups.get(source, []) if edge.from_.kind == "group" else [source]
        entry = edge.to.ref
        exhausted = next(
            (e for e in definition.edges if e.on == "exhausted" and e.from_.kind == edge.from_.kind and e.from_.ref == source),
            None,
        )
        out.append({
            "loopId": loop_id(source, entry),
            "entryNodeId": entry,
            "bodyNodeIds": loop_body(graph, entry, sources, order),
            "maxIterations": edge.loop.max_iterations,
            "onExhausted": {"routeToNodeId": exhausted.to.ref} if exhausted else None,
        })
    return out


def compile_definition(definition: Definition) -> Compiled:
    """Compile a (lint-clean) definition.

    >>> from toolkit.model import Definition
    >>> d = Definition.model_validate({"definitionId": "abc", "name": "x",
    ...     "nodes": [{"nodeId": "a", "type": "agent", "config": {"agentId": "w"}},
    ...               {"nodeId": "b", "type": "agent", "config": {"agentId": "w"}}],
    ...     "edges": [{"from": "a", "to": "b", "on": "approve"}]})
    >>> compile_definition(d).to_json()["forwardEdges"][0]["role"]
    'approve'
    """
    edges = forward_edges(definition)
    return Compiled(forward_edges=edges, loops=loops(definition, forward_graph(definition, edges)))
