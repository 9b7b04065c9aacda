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
from functools import lru_cache

import graphviz
import orjson

from toolkit.viz import View
from toolkit.viz.labels import duration
from toolkit.widgets import edits

__all__ = ["scene_data", "layout_json", "finding_target", "roles_for", "layout_of", "ROLE_CHOICES"]

ROLE_CHOICES = ("approve", "reject", "reject-loop", "always", "custom", "exhausted")
_FIRST_ROLES = {
    "human": ("approve", "reject", "reject-loop"),
    "group": ("approve", "reject", "reject-loop"),
    "agent": ("always", "approve", "reject"),
    "webhook": ("always", "custom"),
}
_PATH = re.compile(r"^data\.(nodes|edges|groups)\[(\d+)\]")


@lru_cache(maxsize=64)
def layout_json(source: str) -> dict:
    """graphviz's layout of a DOT text as parsed JSON (cached: a drag changes no DOT)."""
    try:
        return orjson.loads(graphviz.Source(source).pipe(format="json", quiet=True))
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(
            "the graphviz program 'dot' is not installed: run 'make graphviz' or 'sudo apt-get install graphviz'"
        ) from exc


def _ops(obj: dict, *keys: str) -> list:
    """The drawing operations of ``keys``, as graphviz wrote them (y upward: the browser
    flips them, one subtraction per point, cheaper there than here)."""
    return [op for key in keys for op in obj.get(key) or ()]


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


def _bbox(text: str, height: float) -> list[float]:
    x0, y0, x1, y1 = (float(v) for v in text.split(","))
    return [x0, round(height - y1, 1), x1, round(height - y0, 1)]


def scene_data(raw: dict, findings: list, view: View) -> dict:
    """Everything the canvas draws for ``raw`` (drawn by ``view``) and its ``findings``."""
    laid = layout_json(view.source)
    x0, y0, width, height = (float(v) for v in laid["bb"].split(","))
    objects = laid.get("objects") or []
    names = {o["_gvid"]: o["name"] for o in objects if "_gvid" in o}
    declared = {n.get("nodeId"): n for n in raw.get("nodes") or [] if isinstance(n, dict)}
    loops = _loops(raw)
    degree: dict[str, int] = {}
    for edge in raw.get("edges") or []:
        if isinstance(edge, dict):
            for end in {edits.endpoint_key(edge.get("from")), edits.endpoint_key(edge.get("to"))}:
                degree[f"{end[0]}:{end[1]}"] = degree.get(f"{end[0]}:{end[1]}", 0) + 1
    nodes, clusters = [], []
    for obj in objects:
        svg_id = obj.get("id", "")
        if svg_id.startswith("group-") and "bb" in obj:
            clusters.append(
                {
                    "id": svg_id[6:],
                    "bbox": _bbox(obj["bb"], height),
                    "ops": _ops(obj, "_draw_"),
                    "label": _ops(obj, "_ldraw_"),
                    "members": [names[i] for i in obj.get("nodes") or [] if i in names],
                    "tooltip": obj.get("tooltip", "").split("\\n"),
                    "edges": degree.get(f"group:{svg_id[6:]}", 0),
                }
            )
        elif "pos" in obj and "_gvid" in obj and "nodes" not in obj:
            x, y = (float(v) for v in obj["pos"].split(","))
            node = declared.get(obj["name"])
            key = f"node:{obj['name']}"
            nodes.append(
                {
                    "id": obj["name"],
                    "x": round(x, 1),
                    "y": round(height - y, 1),
                    "w": round(float(obj["width"]) * 72, 1),
                    "h": round(float(obj["height"]) * 72, 1),
                    "shape": obj.get("shape", "box"),
                    "declared": node is not None,
                    "ops": _ops(obj, "_draw_", "_ldraw_"),
                    "hover": _hover(node, loops) if node else [obj.get("tooltip", "").replace("\\n", " ")],
                    "edges": degree.get(key, 0),
                }
            )
    edges = []
    for edge in laid.get("edges") or []:
        svg_id = edge.get("id", "")
        if not svg_id.startswith("edge-"):
            continue
        indices = [int(i) for i in svg_id[5:].split("-")]
        edges.append(
            {
                "id": f"edge:{indices[0]}",
                "indices": indices,
                "tail": names.get(edge["tail"]),
                "head": names.get(edge["head"]),
                # an edge from or to a group ends at the group's frame (graphviz's ltail/lhead)
                "tailGroup": edge.get("ltail", "")[8:] or None,
                "headGroup": edge.get("lhead", "")[8:] or None,
                "ops": _ops(edge, "_draw_", "_hdraw_", "_tdraw_"),
                "label": _ops(edge, "_ldraw_", "_hldraw_", "_tldraw_"),
                "hover": [t for t in edge.get("tooltip", "").split("\\n") if t],
            }
        )
    members = {m for c in clusters for m in c["members"]}
    return {
        "width": round(width - x0, 1),
        "height": round(height - y0, 1),
        "flip": height,
        "background": _ops(laid, "_draw_", "_ldraw_"),
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
