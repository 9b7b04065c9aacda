"""The canvas's picture as data: graphviz's own layout and drawing, ready for the browser.

The Designer's picture is the DOT text the views already write (:mod:`toolkit.viz`, with
its styles, clusters and lint outlines). Instead of an SVG, graphviz is asked for the same
layout as JSON (``dot -Tjson``): positions, sizes and the drawing operations (pen and fill
colours, ellipses, polygons, splines, text at a font size). The canvas replays those
operations, so it draws what the SVG views draw, deterministically, and knows where every
node, edge and group is, to make them clickable and draggable.

Positions and boxes here are in screen orientation (y grows downward, origin top-left); the
drawing operations keep graphviz's (y upward) and the browser flips them with ``height``.
Positions a person dragged are read from the definition's ``custom.layout``
(``{nodeId: {"x": …, "y": …}}``, node centres in screen orientation).

>>> from toolkit import examples
>>> from toolkit.lint import lint_document
>>> raw = examples.load("parallel-review")
>>> definition, findings = lint_document(raw)
>>> from toolkit.viz import render_definition
>>> data = scene_data(raw, findings, render_definition(definition, findings))
>>> sorted(n["id"] for n in data["nodes"]), [c["id"] for c in data["clusters"]]
(['brand-review', 'draft', 'legal-review', 'publish'], ['review-board'])
"""

from __future__ import annotations

import re

from toolkit.viz import View
from toolkit.viz.labels import duration
from toolkit.widgets import edits
from toolkit.widgets.layout import layout

__all__ = ["scene_data", "layout_source", "finding_target", "roles_for", "layout_of", "ROLE_CHOICES"]

ROLE_CHOICES = ("approve", "reject", "reject-loop", "always", "custom", "exhausted")
_FIRST_ROLES = {
    "human": ("approve", "reject", "reject-loop"),
    "group": ("approve", "reject", "reject-loop"),
    "agent": ("always", "approve", "reject"),
    "webhook": ("always", "custom"),
}
_PATH = re.compile(r"^data\.(nodes|edges|groups)\[(\d+)\]")


def layout_of(raw: dict) -> dict:
    """The dragged positions kept in ``custom.layout``, as ``{nodeId: [x, y]}``."""
    layout = (raw.get("custom") or {}).get("layout") if isinstance(raw.get("custom"), dict) else None
    out = {}
    for node_id, pos in (layout or {}).items() if isinstance(layout, dict) else ():
        if isinstance(pos, dict) and isinstance(pos.get("x"), (int, float)) and isinstance(pos.get("y"), (int, float)):
            out[node_id] = [pos["x"], pos["y"]]
    return out


def finding_target(finding, raw: dict) -> str | None:
    """What a finding concerns as a selection key (``node:<id>``, ``edge:<i>``,
    ``group:<id>``), or None; schema findings point at ``data.nodes[i]`` and the like."""
    if finding.where.split(":", 1)[0] in ("node", "edge", "group") and ":" in finding.where:
        return finding.where
    match = _PATH.match(finding.where)
    if match:
        kind, index = match.group(1), int(match.group(2))
        items = raw.get(kind) or []
        item = items[index] if index < len(items) and isinstance(items[index], dict) else {}
        if kind == "edges":
            return f"edge:{index}"
        key = "nodeId" if kind == "nodes" else "groupId"
        if isinstance(item.get(key), str):
            return f"{kind[:-1]}:{item[key]}"
    return None


def roles_for(kind: str) -> list[str]:
    """The edge roles offered when connecting from a node of type ``kind`` (or a ``group``),
    the ones that fit first: a human node or a group approves and rejects, an agent usually
    routes ``always``, a webhook ``always`` or by a predicate."""
    first = _FIRST_ROLES.get(kind, ())
    return list(first) + [r for r in ROLE_CHOICES if r not in first]


def _loops(raw: dict) -> dict[str | None, list[str]]:
    """``{nodeId or groupId: ["loop: a → b, at most n iterations", …]}`` for each loop-back."""
    out: dict[str | None, list[str]] = {}
    for edge in raw.get("edges") or []:
        loop = edge.get("loop") if isinstance(edge, dict) else None
        if isinstance(loop, dict):
            src, dst = edits.endpoint_key(edge.get("from"))[1], edits.endpoint_key(edge.get("to"))[1]
            text = f"loop: {src} → {dst}, at most {loop.get('maxIterations')} iterations"
            for end in dict.fromkeys((src, dst)):
                out.setdefault(end, []).append(text)
    return out


def _hover(node: dict, loops: dict) -> list[str]:
    """What hovering over a node shows: type, reviewers, agent, SLA, loop settings."""
    node_id = node.get("nodeId")
    config = found if isinstance(found := node.get("config"), dict) else {}
    lines = [f"{node.get('name') or node_id} ({node_id}, {node.get('type')})"]
    reviewers = config.get("reviewers")
    if isinstance(reviewers, list):
        names = [
            f"{r.get('userId')}{' (mandatory)' if r.get('mandatory', True) else ''}"
            for r in reviewers
            if isinstance(r, dict)
        ]
        lines.append("reviewers: " + (", ".join(names) or "none"))
    elif isinstance(config.get("reviewerIds"), list):
        lines.append("reviewers: " + ", ".join(map(str, config["reviewerIds"])))
    if node.get("type") == "agent":
        agent = f"agent: {config.get('agentId')}"
        if config.get("blocking"):
            agent += ", blocking"
        lines.append(agent)
    if node.get("type") == "webhook" and config.get("url"):
        lines.append(f"url: {config['url']}")
    if isinstance(node.get("slaMs"), int):
        lines.append(f"SLA: {duration(node['slaMs'])}")
    return lines + loops.get(node_id, [])


def _tooltips(view: View) -> dict[str, list[str]]:
    """The tooltips of a view made from a scene, by SVG id, a line each (the canvas lays out
    the scene's DOT without them, so an edit that changes only a tooltip needs no new layout)."""
    scene = view.scene
    if scene is None:
        return {}
    items = [(f"node-{n.node_id}", n.tooltip) for n in scene.nodes.values()]
    items += [(f"group-{c.group_id}", c.tooltip) for c in scene.clusters.values()]
    items += [(e.svg_id, e.tooltip) for e in scene.edges]
    return {svg_id: [part for line in lines for part in line.split("\n")] for svg_id, lines in items}


def layout_source(view: View) -> str:
    """The DOT text the canvas lays out: the view's, without tooltips when it has a scene."""
    return view.source if view.scene is None else view.scene.to_digraph(tooltips=False).source


def scene_data(raw: dict, findings: list, view: View) -> dict:
    """Everything the canvas draws for ``raw`` (drawn by ``view``) and its ``findings``."""
    laid = layout(layout_source(view))
    tips = _tooltips(view)
    declared = {n.get("nodeId"): n for n in raw.get("nodes") or [] if isinstance(n, dict)}
    loops = _loops(raw)
    degree: dict[str, int] = {}
    for edge in raw.get("edges") or []:
        if isinstance(edge, dict):
            for end in {edits.endpoint_key(edge.get("from")), edits.endpoint_key(edge.get("to"))}:
                degree[f"{end[0]}:{end[1]}"] = degree.get(f"{end[0]}:{end[1]}", 0) + 1
    clusters = [
        {
            "id": c.svg_id[6:],
            "bbox": c.bbox,
            "ops": c.ops,
            "label": c.label,
            "members": c.members,
            "tooltip": tips.get(c.svg_id) or [""],
            "edges": degree.get(f"group:{c.svg_id[6:]}", 0),
        }
        for c in laid.clusters
    ]
    nodes = [
        {
            "id": n.name,
            "x": n.x,
            "y": n.y,
            "w": n.w,
            "h": n.h,
            "shape": n.shape,
            "declared": n.name in declared,
            "ops": n.ops,
            "hover": _hover(declared[n.name], loops) if n.name in declared else [" ".join(tips.get(n.svg_id, []))],
            "edges": degree.get(f"node:{n.name}", 0),
        }
        for n in laid.nodes
    ]
    edges = []
    for e in laid.edges:
        if e.svg_id.startswith("edge-"):
            indices = [int(i) for i in e.svg_id[5:].split("-")]
            edges.append(
                {
                    "id": f"edge:{indices[0]}",
                    "indices": indices,
                    "tail": e.tail,
                    "head": e.head,
                    "tailGroup": e.tail_group,
                    "headGroup": e.head_group,
                    "ops": e.ops,
                    "label": e.label,
                    "hover": [t for t in tips.get(e.svg_id, []) if t],
                }
            )
    members = {m for c in laid.clusters for m in c.members}
    return {
        "width": laid.width,
        "height": laid.height,
        "flip": laid.flip,
        "background": laid.background,
        "nodes": nodes,
        "edges": edges,
        "clusters": clusters,
        "layout": {k: v for k, v in layout_of(raw).items() if k in declared},
        "findings": [
            {
                "severity": f.severity,
                "key": f.key,
                "message": f.message,
                "where": f.where,
                "target": finding_target(f, raw),
            }
            for f in findings
        ],
        "roles": {f"node:{n}": roles_for(node.get("type", "human")) for n, node in declared.items()}
        | {f"group:{c['id']}": roles_for("group") for c in clusters},
        "grouped": sorted(members),
        "empty": not declared,
    }
