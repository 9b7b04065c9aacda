"""Definitions as ``networkx.MultiDiGraph`` and back.

Every declared node is a graph node with attributes ``kind='node'``, ``type``, ``config``
(the config as sent), ``group`` (its group id or None) and ``index`` (declaration order).
Every group is a graph node too (``kind='group'``, ``policy``, ``quorum``, ``members``), so
group endpoints stay edges between two graph nodes. Every authored edge is one graph edge,
keyed by its original index, with ``role``, ``when``, ``loop`` and ``index``. The JSON each
item was authored as rides along as ``raw``, so :func:`from_graph` rebuilds the definition
exactly, key order and endpoint forms included.

>>> from toolkit import examples
>>> raw = examples.load("parallel-review")
>>> g = to_graph(raw)
>>> g.nodes["legal-review"]["group"], sorted(g.successors("review-board"))
('review-board', ['draft'])
>>> from_graph(g) == raw
True
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import networkx as nx

from toolkit.model import Definition


def _endpoint_ref(endpoint: Any) -> str:
    if isinstance(endpoint, str):
        return endpoint
    if isinstance(endpoint, dict):
        return endpoint.get("nodeId") or endpoint.get("groupId") or ""
    return ""


def to_graph(raw: dict) -> nx.MultiDiGraph:
    """Build the graph of a definition create body (the raw JSON dict).

    The raw dict is validated first, so the graph only ever holds valid definitions
    (``pydantic.ValidationError``); repeated node or group ids raise ``ValueError``.
    """
    definition = Definition.model_validate(raw)
    # Nodes and groups share one namespace and each is one graph node: a repeated id would
    # silently merge two items and lose one of them on the way back.
    ids = Counter([n.node_id for n in definition.nodes] + [g.group_id for g in definition.group_list])
    repeated = [i for i, n in ids.items() if n > 1]
    if repeated:
        raise ValueError(f"node and group ids must be unique to build a graph; repeated: {', '.join(repeated)}")
    graph = nx.MultiDiGraph()
    graph.graph["definition"] = {k: copy.deepcopy(v) for k, v in raw.items() if k not in ("nodes", "edges", "groups")}
    # A null "groups" is kept as sent; the group items themselves live on group nodes.
    if raw.get("groups") is None and "groups" in raw:
        graph.graph["definition"]["groups"] = None
    graph.graph["keys"] = list(raw)
    group_of = {m: g.group_id for g in definition.group_list for m in g.member_node_ids}
    for i, (node, node_raw) in enumerate(zip(definition.nodes, raw["nodes"])):
        graph.add_node(
            node.node_id,
            kind="node",
            type=node.type,
            config=copy.deepcopy(node_raw.get("config")),
            group=group_of.get(node.node_id),
            sla_ms=node.sla_ms,
            index=i,
            raw=copy.deepcopy(node_raw),
        )
    for i, (group, group_raw) in enumerate(zip(definition.group_list, raw.get("groups") or [])):
        graph.add_node(
            group.group_id,
            kind="group",
            policy=group.on_quorum_met,
            quorum=group.quorum_value,
            members=list(group.member_node_ids),
            index=i,
            raw=copy.deepcopy(group_raw),
        )
    for i, (edge, edge_raw) in enumerate(zip(definition.edges, raw["edges"])):
        graph.add_edge(
            edge.from_.ref,
            edge.to.ref,
            key=i,
            role=edge.on,
            when=edge.when,
            loop=edge.loop.max_iterations if edge.loop else None,
            index=i,
            raw=copy.deepcopy(edge_raw),
        )
    return graph


def from_graph(graph: nx.MultiDiGraph) -> dict:
    """Rebuild the create body a graph was made from (round trip of :func:`to_graph`)."""
    raw = copy.deepcopy(graph.graph["definition"])
    nodes = sorted((d for _, d in graph.nodes(data=True) if d.get("kind") == "node"), key=lambda d: d["index"])
    groups = sorted((d for _, d in graph.nodes(data=True) if d.get("kind") == "group"), key=lambda d: d["index"])
    edges = sorted((d for _, _, d in graph.edges(data=True)), key=lambda d: d["index"])
    items = {"nodes": nodes, "edges": edges, "groups": groups}
    out = {}
    for key in graph.graph["keys"]:
        if key in items and not (key == "groups" and raw.get("groups", 0) is None):
            out[key] = [copy.deepcopy(d["raw"]) for d in items[key]]
        else:
            out[key] = raw[key]
    return out
