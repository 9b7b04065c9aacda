"""A picture of a definition that is still being written, even when it breaks the schema.

The Designer holds the definition as the raw dict it will export. While a person edits it,
the dict is often not yet a valid :class:`~toolkit.model.Definition` (no nodes yet, a
reviewer list emptied, an id with a space). :func:`preview` still draws what can be drawn:
each node, edge and group that validates on its own (a node whose config does not validate
is drawn without it), and outlines the parts the schema findings point at.

>>> from toolkit.lint import lint_document
>>> raw = {"definitionId": "draft-flow", "name": "Draft", "edges": [],
...        "nodes": [{"nodeId": "review", "type": "human", "config": {"reviewers": []}}]}
>>> definition, findings = lint_document(raw)
>>> definition is None, [f.where for f in findings]
(True, ['data.nodes[0].config.reviewers'])
>>> 'id="node-review"' in preview(raw, findings).source
True
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from html import escape

import graphviz
from pydantic import TypeAdapter, ValidationError

from toolkit.lint import Finding
from toolkit.model import Definition
from toolkit.model.definition import Edge, Group, Node
from toolkit.viz import View, render_definition, style

__all__ = ["preview", "placeholder"]

_NODE = TypeAdapter(Node)
_PATH = re.compile(r"^data\.(nodes|edges|groups)\[(\d+)\]")


def _valid(adapter_or_model, value) -> bool:
    try:
        if isinstance(adapter_or_model, TypeAdapter):
            adapter_or_model.validate_python(value)
        else:
            adapter_or_model.model_validate(value)
    except (ValidationError, TypeError, ValueError):
        return False
    return True


def _relaxed(raw: dict) -> dict:
    """The largest part of ``raw`` that validates, piece by piece (for drawing only)."""
    nodes = []
    for node in raw.get("nodes") or []:
        if not isinstance(node, dict):
            continue
        if _valid(_NODE, node):
            nodes.append(node)
        elif _valid(_NODE, bare := {k: v for k, v in node.items() if k == "nodeId" or k == "type"}):
            nodes.append(bare)
    edges = [e for e in raw.get("edges") or [] if _valid(Edge, e)]
    groups = [g for g in raw.get("groups") or [] if _valid(Group, g)]
    definition_id = raw.get("definitionId")
    if not (isinstance(definition_id, str) and re.fullmatch(r"[a-z0-9][a-z0-9-]{2,63}", definition_id)):
        definition_id = "untitled"
    name = found if isinstance(found := raw.get("name"), str) and found else "(no name yet)"
    return {
        "definitionId": definition_id,
        "name": name[:200],
        "nodes": nodes[:100],
        "edges": edges[:500],
        "groups": groups[:100],
    }


def _placed(raw: dict, findings: list[Finding]) -> list[Finding]:
    """Schema findings about ``nodes[i]`` / ``groups[i]`` / ``edges[i]`` re-addressed to that
    node, group or edge, so the picture outlines it (the message keeps the field path)."""
    out = []
    for f in findings:
        match = _PATH.match(f.where) if f.key == "schema" else None
        where = f.where
        if match:
            kind, index = match.group(1), int(match.group(2))
            items = raw.get(kind) or []
            item = items[index] if index < len(items) and isinstance(items[index], dict) else {}
            if kind == "nodes" and isinstance(item.get("nodeId"), str):
                where = f"node:{item['nodeId']}"
            elif kind == "groups" and isinstance(item.get("groupId"), str):
                where = f"group:{item['groupId']}"
        out.append(Finding(f.key, f.severity, f"{f.where}: {f.message}" if where != f.where else f.message, where))
    return out


def placeholder(title: str, lines: Sequence[str] = ()) -> View:
    """A small captioned box (what the graph pane shows when there is nothing to draw)."""
    rows = [f"<b>{escape(title)}</b>"] + [
        f'<font point-size="9" color="{style.MUTED}">{escape(t)}</font>' for t in lines
    ]
    label = '<<table border="0" cellspacing="2">' + "".join(f"<tr><td>{r}</td></tr>" for r in rows) + "</table>>"
    graph = graphviz.Digraph("placeholder", graph_attr={"pad": "0.3", "bgcolor": "white"})
    graph.node(
        "placeholder",
        label=label,
        shape="box",
        style="rounded,dashed",
        color=style.FAINT,
        fontname=style.FONT,
        fontcolor=style.INK,
        margin="0.3,0.2",
    )
    return View(graph)


def preview(raw: dict, findings: list[Finding], definition: Definition | None = None) -> View:
    """Draw ``raw`` with its ``findings``: the definition itself when it validates
    (``definition``, if already validated), else its valid parts."""
    if definition is not None:
        return render_definition(definition, findings)
    relaxed = _relaxed(raw if isinstance(raw, dict) else {})
    if not relaxed["nodes"]:
        return placeholder(
            "Nothing to draw yet", ["add a node to start"] + [f"{f.where}: {f.message}"[:90] for f in findings[:3]]
        )
    try:
        sketch = Definition.model_validate(relaxed)
    except ValidationError:  # e.g. duplicate-free parts that still clash as a whole
        return placeholder("Cannot draw this definition yet", [f"{f.where}: {f.message}"[:90] for f in findings[:5]])
    return render_definition(sketch, _placed(raw, findings))
