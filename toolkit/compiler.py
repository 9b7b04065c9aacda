"""compile_definition(definition) -> Compiled ``{forwardEdges, loops}`` (semantics §4).

The compiled form is a view for tools (designer, docs, the DefinitionView); the engine
reads the same facts through :mod:`toolkit.engine.plan`. Ordering is deterministic:
edges in authored order, group endpoints expanded in ``memberNodeIds`` order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from toolkit.model import Definition, Edge
from toolkit.predicates import Predicate, PredicateError, parse

if TYPE_CHECKING:
    import networkx as nx

APPROVE_WHEN = {"op": "eq", "args": [{"var": "output.decision"}, "approve"]}
REJECT_WHEN = {"op": "eq", "args": [{"var": "output.decision"}, "reject"]}


def is_loop_back(edge: Edge) -> bool:
    """A reject edge that carries ``loop`` is a loop-back, never a forward edge."""
    return edge.on == "reject" and edge.loop is not None


def _decision_when(decision: str) -> dict:
    # A fresh dict on every call: compiled output is handed to callers, who may change it.
    return {"op": "eq", "args": [{"var": "output.decision"}, decision]}


@lru_cache(maxsize=4096)
def check_when(when: str) -> tuple[Predicate | None, str | None]:
    """``(predicate, None)`` for a valid ``when``, ``(None, problem)`` otherwise.

    Cached: the compiler and several lint rules look at the same strings, and parsing
    (validation and compilation to closures) dominates their cost. Callers must treat the
    predicate's ``ast`` as read-only; :func:`role_when` hands out fresh copies.
    """
    try:
        return parse(when), None
    except PredicateError as exc:
        return None, str(exc)


def role_when(edge: Edge):
    """The predicate AST an edge's role compiles to (None for always/exhausted)."""
    if edge.on == "approve":
        return _decision_when("approve")
    if edge.on == "reject":
        return _decision_when("reject")
    if edge.on == "custom" and edge.when is not None:
        predicate, _ = check_when(edge.when)
        # json.loads gives the same AST as the parse, as a fresh object per call.
        return json.loads(edge.when) if predicate is not None else None
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


def forward_edges(definition: Definition, with_when: bool = True) -> list[dict]:
    """The forward edges; ``with_when=False`` leaves every ``when`` None (for callers that
    only need the shape of the graph, such as the linter)."""
    groups = members_of(definition)
    out = []
    for edge in definition.edges:
        if edge.on == "reject" and edge.loop is not None:  # a loop-back
            continue
        sources, from_group = _expand(edge.from_, groups)
        targets, to_group = _expand(edge.to, groups)
        when = role_when(edge) if with_when else None
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
    # Imported here: the engine and every server import this module, and only this helper for
    # notebooks needs networkx (a fifth of a second of each process's start).
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(n.node_id for n in definition.nodes)
    graph.add_edges_from((e["from"], e["to"]) for e in (edges if edges is not None else forward_edges(definition)))
    return graph


class _Adjacency:
    """Just enough of a DiGraph for :func:`loop_body` (membership, successors, predecessors),
    built straight from forward edges: much cheaper than a networkx graph."""

    def __init__(self, nodes, edges: list[dict]):
        nodes = list(nodes)
        self._succ: dict[str, list[str]] = {n: [] for n in nodes}
        self._pred: dict[str, list[str]] = {n: [] for n in nodes}
        for e in edges:
            a, b = e["from"], e["to"]
            self._succ.setdefault(a, []).append(b)
            self._pred.setdefault(a, [])
            self._succ.setdefault(b, [])
            self._pred.setdefault(b, []).append(a)

    def __contains__(self, node) -> bool:
        return node in self._succ

    def successors(self, node):
        return iter(self._succ[node])

    def predecessors(self, node):
        return iter(self._pred[node])


def loop_body(graph, entry: str, sources: list[str], order: dict[str, int]) -> list[str]:
    """Every node on a forward path from ``entry`` to any source, both ends included.

    ``graph`` is a ``networkx.DiGraph`` of forward edges (or anything with ``in``,
    ``successors`` and ``predecessors``). The nodes upstream of the sources are collected
    first; the search from ``entry`` then only walks those (every node on such a path is one).
    """
    body = {entry, *sources}
    if entry in graph:
        upstream = {s for s in sources if s in graph}
        stack = list(upstream)
        while stack:
            for p in graph.predecessors(stack.pop()):
                if p not in upstream:
                    upstream.add(p)
                    stack.append(p)
        seen, stack = {entry}, [entry]
        while stack:
            for s in graph.successors(stack.pop()):
                if s in upstream and s not in seen:
                    seen.add(s)
                    stack.append(s)
        body |= seen & upstream
    # Undeclared ids (a dangling loop-back) sort last, by name: never by set (hash) order.
    return sorted(body, key=lambda n: (order.get(n, len(order)), n))


def loops(definition: Definition, graph: nx.DiGraph | None = None, edges: list[dict] | None = None) -> list[dict]:
    """The loop regions; pass ``edges`` (already computed forward edges) to avoid recomputing them."""
    groups = members_of(definition)
    if graph is None:
        graph = _Adjacency(
            (n.node_id for n in definition.nodes), edges if edges is not None else forward_edges(definition)
        )
    order = {n.node_id: i for i, n in enumerate(definition.nodes)}
    first_exhausted: dict[tuple[str, str], Edge] = {}  # (kind, ref) of a source -> its first exhausted edge
    for e in definition.edges:
        if e.on == "exhausted":
            first_exhausted.setdefault((e.from_.kind, e.from_.ref), e)
    out = []
    for edge in definition.edges:
        loop = edge.loop
        if loop is None or not is_loop_back(edge):
            continue
        source = edge.from_.ref
        sources = groups.get(source, []) if edge.from_.kind == "group" else [source]
        entry = edge.to.ref
        exhausted = first_exhausted.get((edge.from_.kind, source))
        out.append(
            {
                "loopId": loop_id(source, entry),
                "entryNodeId": entry,
                "bodyNodeIds": loop_body(graph, entry, sources, order),
                "maxIterations": loop.max_iterations,
                "onExhausted": {"routeToNodeId": exhausted.to.ref} if exhausted else None,
            }
        )
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
    return Compiled(forward_edges=edges, loops=loops(definition, edges=edges))
