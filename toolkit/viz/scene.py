"""A picture before it becomes DOT: nodes, edges and clusters with their attributes.

The renderers build a :class:`Scene` from a definition, overlays (lint findings, an
execution, a heat map) change its items, and :meth:`Scene.to_digraph` writes the DOT text.
Writing the DOT here (rather than through ``graphviz.Digraph.edge``) keeps node ids such as
``a:b`` from being read as ``node:port``, and keeps the text byte-for-byte deterministic:
items come out in the order they were added, which is the definition's declared order.

SVG ids: a node is ``node-<nodeId>`` (its graphviz name, hence its ``<title>``, is the
nodeId itself), an authored edge ``edge-<index>``, a group cluster ``group-<groupId>``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import graphviz

from toolkit.viz import style
from toolkit.viz.labels import html_lines

__all__ = ["Scene", "NodeItem", "EdgeItem", "ClusterItem", "quote"]

Line = tuple[str, dict]


def quote(value: str) -> str:
    """A DOT double-quoted string (backslashes and quotes escaped)."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text + '"'


def _attr_list(attrs: dict) -> str:
    parts = []
    for key, value in attrs.items():
        if value is None:
            continue
        if isinstance(value, HTML):
            parts.append(f"{key}={value}")
        else:
            parts.append(f"{key}={quote(value)}")
    return " [" + " ".join(parts) + "]" if parts else ""


class HTML(str):
    """A graphviz HTML-like label (already escaped, written without quotes)."""


def _tooltip(lines: list[str]) -> str | None:
    # escString: "\n" is a line break; quote() doubles any backslash in the text itself.
    return "\n".join(lines) if lines else None


@dataclass
class NodeItem:
    node_id: str
    lines: list[Line]
    attrs: dict
    tooltip: list[str] = field(default_factory=list)
    group_id: str | None = None

    def dot(self, tooltips: bool = True) -> str:
        attrs = {"id": f"node-{self.node_id}", "label": HTML(html_lines(self.lines)), **self.attrs}
        attrs["tooltip"] = _tooltip(self.tooltip) if tooltips else None
        return f"{quote(self.node_id)}{_attr_list(attrs)}"


@dataclass
class EdgeItem:
    """One drawn edge. ``indices`` are the authored edges it stands for (several when the
    shared edges of a joinOnQuorum group's members are drawn as one edge from the group)."""

    indices: list[int]
    role: str
    source: tuple[str, str]  # ("node" | "group", ref)
    target: tuple[str, str]
    tail: str  # graphviz node names
    head: str
    attrs: dict
    label: list[Line] = field(default_factory=list)
    tooltip: list[str] = field(default_factory=list)
    loop_back: bool = False

    @property
    def svg_id(self) -> str:
        return "edge-" + "-".join(str(i) for i in self.indices)

    def dot(self, tooltips: bool = True) -> str:
        attrs = {"id": self.svg_id, **self.attrs}
        if self.label:
            attrs["label"] = HTML(html_lines(self.label))
        attrs["tooltip"] = attrs["labeltooltip"] = _tooltip(self.tooltip) if tooltips else None
        return f"{quote(self.tail)} -> {quote(self.head)}{_attr_list(attrs)}"


@dataclass
class ClusterItem:
    group_id: str
    lines: list[Line]
    attrs: dict
    members: list[str] = field(default_factory=list)
    tooltip: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"cluster_{self.group_id}"


@dataclass
class Scene:
    """Everything one picture draws, in drawing order."""

    name: str
    nodes: dict[str, NodeItem] = field(default_factory=dict)
    edges: list[EdgeItem] = field(default_factory=list)
    clusters: dict[str, ClusterItem] = field(default_factory=dict)
    caption: str | None = None  # an HTML label body (text or one table), drawn on top
    graph_attrs: dict = field(default_factory=dict)

    def to_digraph(self, tooltips: bool = True) -> graphviz.Digraph:
        """The picture as DOT. Without ``tooltips`` it is the same picture (a tooltip moves
        nothing and draws nothing) for a reader that takes them from the items: the
        Designer's canvas, whose layouts are then kept across edits that change only a
        tooltip (a description, a finding's message)."""
        graph = {**style.GRAPH, **self.graph_attrs, **self._caption()}
        if not tooltips:
            graph.pop("tooltip", None)
        body = [
            f"\tgraph{_attr_list(graph)}\n",
            f"\tnode{_attr_list(style.NODE)}\n",
            f"\tedge{_attr_list(style.EDGE)}\n",
        ]
        cluster_of = {m: c for c in self.clusters.values() for m in c.members}
        emitted: set[str] = set()
        # Declared order, each cluster where its first member is: dot reads order as a hint.
        for node_id, node in self.nodes.items():
            cluster = cluster_of.get(node_id)
            if cluster is None:
                body.append(f"\t{node.dot(tooltips)}\n")
            elif cluster.group_id not in emitted:
                emitted.add(cluster.group_id)
                body += self._cluster(cluster, tooltips)
        for cluster in self.clusters.values():  # members all undrawn: cannot happen, but never drop one
            if cluster.group_id not in emitted:
                body += self._cluster(cluster, tooltips)
        body += [f"\t{e.dot(tooltips)}\n" for e in self.edges]
        return graphviz.Digraph(name=self.name, body=body, format="svg", engine="dot")

    def _cluster(self, cluster: ClusterItem, tooltips: bool) -> list[str]:
        attrs = {
            "id": f"group-{cluster.group_id}",
            "label": HTML(html_lines(cluster.lines, align="left")),
            **style.GROUP,
            **cluster.attrs,
            "tooltip": _tooltip(cluster.tooltip) if tooltips else None,
        }
        lines = [f"\tsubgraph {quote(cluster.name)} {{\n"]
        lines += [f"\t\t{k}={v if isinstance(v, HTML) else quote(v)}\n" for k, v in attrs.items() if v is not None]
        members = [m for m in cluster.members if m in self.nodes]
        lines += [f"\t\t{self.nodes[m].dot(tooltips)}\n" for m in members]
        if len(members) > 1:  # members start together: one column (one row top-to-bottom)
            lines.append("\t\t{rank=same; " + " ".join(quote(m) for m in members) + "}\n")
        return lines + ["\t}\n"]

    def _caption(self) -> dict:
        if not self.caption:
            return {}
        return {"label": HTML(f"<{self.caption}>"), "labelloc": "t"}
