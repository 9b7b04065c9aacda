"""render_definition: a workflow definition as a graphviz picture, with lint findings.

>>> from toolkit import examples
>>> view = render_definition(examples.load("parallel-review"))
>>> 'id="node-draft"' in view.source, "cluster_review-board" in view.source
(True, True)
"""

from __future__ import annotations

from collections import defaultdict
from html import escape

from toolkit.compiler import Compiled, compile_definition, is_loop_back
from toolkit.lint import Finding, lint
from toolkit.model import Definition
from toolkit.model.definition import Group
from toolkit.viz import style
from toolkit.viz.labels import caption_table, chip_row, clip, duration, group_subtitle, node_subtitle, summarize_when
from toolkit.viz.scene import ClusterItem, EdgeItem, Line, NodeItem, Scene
from toolkit.viz.view import View

__all__ = ["render_definition", "build_scene", "as_definition", "loops_of", "highlight_findings"]


# Read-only fields of a DefinitionView (api-v2 §2.4) that a create body does not have.
_VIEW_ONLY = ("version", "compiled", "createdAt", "updatedAt", "status", "warnings")


def as_definition(definition) -> Definition:
    """A :class:`Definition` from a create body (with or without ``{"data": ...}``), a
    DefinitionView dict (its read-only fields are ignored) or a model."""
    if isinstance(definition, Definition):
        return definition
    if isinstance(definition, dict) and set(definition) == {"data"}:
        definition = definition["data"]
    if isinstance(definition, dict):
        definition = {k: v for k, v in definition.items() if k not in _VIEW_ONLY}
    return Definition.model_validate(definition)


def loops_of(definition: Definition, compiled=None) -> list[dict]:
    """The compiled loop regions (``loopId, entryNodeId, bodyNodeIds, maxIterations, ...``),
    from ``compiled`` (a :class:`Compiled`, its JSON, or a DefinitionView's ``compiled``)."""
    if compiled is None:
        compiled = compile_definition(definition)
    if isinstance(compiled, Compiled):
        return compiled.loops
    return list(compiled.get("loops") or [])


def _kind(node) -> str:
    if node.type == "agent" and node.config is not None and node.config.blocking:
        return "blocking"
    return node.type


def _node_item(node, group_id: str | None) -> NodeItem:
    lines: list[Line] = [
        (node.name or node.node_id, {"bold": True}),
        (clip(node_subtitle(node), 48), {"size": 9, "color": style.MUTED}),
    ]
    if node.sla_ms:
        lines.append((f"{style.SLA_MARK} SLA {duration(node.sla_ms)}", {"size": 9, "color": style.SLA_TEXT}))
    tooltip = [f"{node.node_id} ({_kind(node).replace('blocking', 'blocking agent')})"]
    if node.name:
        tooltip.append(node.name)
    if node.description:
        tooltip.append(node.description)
    if node.sla_ms:
        tooltip.append(f"SLA {duration(node.sla_ms)} ({node.sla_ms} ms)")
    return NodeItem(node.node_id, lines, dict(style.NODE_KIND[_kind(node)]), tooltip, group_id)


def _placeholder(ref: str, what: str) -> NodeItem:
    return NodeItem(
        ref,
        [(f"? {ref}", {}), (f"undeclared {what}", {"size": 9})],
        dict(style.NODE_KIND["missing"]),
        [f"{ref}: no such {what} is declared"],
    )


def _anchor(members: list[str]) -> str:
    # The middle member: an edge clipped at the cluster border then meets it near its centre.
    return members[(len(members) - 1) // 2]


def _edge_label(edge, loop: bool) -> list:
    colour = style.ROLE[edge.on]["fontcolor"]
    if loop:
        return [(f"↺ max {edge.loop.max_iterations}", {"color": colour})]
    if edge.on == "custom":
        return [(summarize_when(edge.when) if edge.when else "custom (no when)", {"color": colour})]
    mark = style.ROLE_MARK[edge.on]
    return [(mark, {"color": colour})] if mark else []


def _edge_tooltip(index: int, edge) -> list[str]:
    src, dst = edge.from_.ref, edge.to.ref
    text = [f"edge {index}: {src} → {dst}, on {edge.on}"]
    if edge.loop is not None:
        text.append(f"loop-back, at most {edge.loop.max_iterations} iterations")
    if edge.when:
        text.append(f"when {edge.when}")
    return text


def build_scene(definition, *, merge_join_edges: bool = False) -> Scene:
    """The :class:`Scene` of a definition, before any overlay.

    ``merge_join_edges`` draws the shared approve/always edges of a joinOnQuorum group's
    members as one edge from the group (how they fire at run time, semantics §5.5).
    """
    d = as_definition(definition)
    scene = Scene(name=d.definition_id)
    groups: dict[str, Group] = {}
    for g in d.group_list:
        groups.setdefault(g.group_id, g)
    group_of: dict[str, str] = {}
    for g in groups.values():
        for m in g.member_node_ids:
            group_of.setdefault(m, g.group_id)
    for node in d.nodes:
        scene.nodes.setdefault(node.node_id, _node_item(node, group_of.get(node.node_id)))
    for g in groups.values():
        members = [m for m in dict.fromkeys(g.member_node_ids) if group_of.get(m) == g.group_id]
        for m in members:
            if m not in scene.nodes:
                scene.nodes[m] = _placeholder(m, "node")
        if not members:  # graphviz draws no empty cluster: give it something to hold
            members = [f"{g.group_id} (empty)"]  # a space: never a declared id
            scene.nodes[members[0]] = NodeItem(
                members[0], [("(no members)", {"size": 9})], dict(style.NODE_KIND["missing"])
            )
        tooltip = [f"group {g.group_id}: {group_subtitle(g)}", "members: " + ", ".join(g.member_node_ids)]
        lines: list[Line] = [
            (g.name or g.group_id, {"bold": True}),
            (group_subtitle(g), {"size": 9, "color": style.MUTED}),
        ]
        scene.clusters[g.group_id] = ClusterItem(
            g.group_id, lines, {}, members, tooltip + ([g.description] if g.description else [])
        )

    def endpoint(kind: str, ref: str) -> tuple[str, dict]:
        """(graphviz node, extra attrs) for an endpoint; unknown refs get a placeholder."""
        if kind == "group" and ref in scene.clusters:
            return _anchor(scene.clusters[ref].members), {"cluster": scene.clusters[ref].name}
        if ref not in scene.nodes:
            scene.nodes[ref] = _placeholder(ref, kind)
        return ref, {}

    merged = _join_merges(d, groups) if merge_join_edges else {}
    for index, edge in enumerate(d.edges):
        if index in merged and merged[index] is None:
            continue  # drawn as part of an earlier merged edge
        loop = is_loop_back(edge)
        source = (edge.from_.kind, edge.from_.ref)
        tail, tail_extra = endpoint(*source)
        head, head_extra = endpoint(edge.to.kind, edge.to.ref)
        indices = [index]
        tooltip = _edge_tooltip(index, edge)
        if index in merged:  # a joinOnQuorum group's shared member edge: draw it from the group
            group_id, indices = merged[index]
            source = ("group", group_id)
            tail, tail_extra = endpoint(*source)
            tooltip = [
                f"edges {', '.join(map(str, indices))}: the members of {group_id} → {edge.to.ref}, "
                f"on {edge.on} (fired once by the group on quorum)"
            ]
        attrs = {k: v for k, v in style.ROLE[edge.on].items()}
        if loop:
            attrs.update(style.LOOP_BACK)
        if "cluster" in tail_extra and tail_extra["cluster"] != head_extra.get("cluster"):
            attrs["ltail"] = tail_extra["cluster"]
        if "cluster" in head_extra and head_extra["cluster"] != tail_extra.get("cluster"):
            attrs["lhead"] = head_extra["cluster"]
        scene.edges.append(
            EdgeItem(
                indices,
                edge.on,
                source,
                (edge.to.kind, edge.to.ref),
                tail,
                head,
                attrs,
                _edge_label(edge, loop),
                tooltip,
                loop,
            )
        )
    return scene


def _join_merges(d: Definition, groups: dict) -> dict:
    """``{first index: (groupId, indices), other index: None}`` for member edges of
    joinOnQuorum groups that every member shares (same role, target and predicate)."""
    out: dict = {}
    for g in groups.values():
        members = list(dict.fromkeys(g.member_node_ids))
        if g.on_quorum_met != "joinOnQuorum" or len(members) < 2:
            continue
        # (role, to kind, to ref, when) -> {member: [indices]}
        by_key: defaultdict[tuple, dict[str, list[int]]] = defaultdict(dict)
        for i, e in enumerate(d.edges):
            if e.from_.kind == "node" and e.from_.ref in members and e.on in ("approve", "always"):
                by_key[(e.on, e.to.kind, e.to.ref, e.when)].setdefault(e.from_.ref, []).append(i)
        for per_member in by_key.values():
            if set(per_member) != set(members):
                continue
            indices = sorted(i for idx in per_member.values() for i in idx)
            out[indices[0]] = (g.group_id, indices)
            out.update({i: None for i in indices[1:]})
    return out


def highlight_findings(scene: Scene, findings: list[Finding]) -> list[Finding]:
    """Outline the nodes, edges and groups that findings concern (errors red, warnings amber),
    list their keys in a small line and in the tooltip. Returns the findings that name
    nothing drawn (schema paths, say), for a caption."""
    # ("node" | "group", id) or ("edge", id() of the edge item) -> its findings
    by_target: defaultdict[tuple[str, str | int], list[Finding]] = defaultdict(list)
    unplaced = []
    edge_items = {i: item for item in scene.edges for i in item.indices}
    for f in findings:
        if f.node_id is not None and f.node_id in scene.nodes:
            by_target[("node", f.node_id)].append(f)
        elif f.group_id is not None and f.group_id in scene.clusters:
            by_target[("group", f.group_id)].append(f)
        elif f.edge_index is not None and f.edge_index in edge_items:
            by_target[("edge", id(edge_items[f.edge_index]))].append(f)
        else:
            unplaced.append(f)
    items: dict[tuple[str, str | int], NodeItem | ClusterItem | EdgeItem] = {
        ("node", k): v for k, v in scene.nodes.items()
    }
    items.update({("group", k): v for k, v in scene.clusters.items()})
    items.update({("edge", id(e)): e for e in scene.edges})
    for target, found in by_target.items():
        item = items[target]
        worst = "error" if any(f.severity == "error" for f in found) else "warning"
        keys = list(dict.fromkeys(f.key for f in found))
        text = "⚠ " + keys[0] + (f" +{len(keys) - 1}" if len(keys) > 1 else "")
        lines = [(part, {"size": 8, "color": style.FINDING_TEXT[worst]}) for part in _wrap_key(text)]
        item.attrs.update(style.FINDING[worst])
        if isinstance(item, EdgeItem):  # target ("edge", ...)
            item.label = [*item.label, *lines]
        else:
            item.lines = [*item.lines, *lines]
        item.tooltip = [*item.tooltip, *(f"{f.severity} {f.key}: {f.message}" for f in found)]
    return unplaced


def _wrap_key(text: str, width: int = 24) -> list[str]:
    """A finding key on lines of at most ``width`` characters, broken after underscores and
    hyphens, so that the whole key shows inside a node shape (a clipped key names no rule)."""
    lines, line = [], ""
    for part in text.replace("_", "_\0").replace("-", "-\0").split("\0"):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
    return lines + [line] if line else lines


_KIND_NAMES = {"agent": "agent", "blocking": "blocking agent", "human": "human", "webhook": "webhook"}
_ROLE_NAMES = {
    "approve": "✓ approve",
    "reject": "✗ reject",
    "always": "— always",
    "exhausted": "··· exhausted",
    "custom": "custom (its predicate)",
}


def legend(d: Definition) -> str:
    """A caption row naming the node kinds and edge roles this definition uses."""
    kinds = list(dict.fromkeys(_kind(n) for n in d.nodes))
    chips = [
        (_KIND_NAMES[k], style.NODE_KIND[k]["fillcolor"], style.NODE_KIND[k]["color"], style.INK)
        for k in _KIND_NAMES
        if k in kinds
    ]
    roles = list(dict.fromkeys(e.on for e in d.edges if not is_loop_back(e)))
    words = [
        f'<font color="{style.ROLE[r]["fontcolor"]}">{escape(_ROLE_NAMES[r])}</font>' for r in _ROLE_NAMES if r in roles
    ]
    if any(is_loop_back(e) for e in d.edges):
        words.append(f'<font color="{style.ROLE["reject"]["fontcolor"]}">↺ loop-back (dashed)</font>')
    text = f'<font point-size="9">{"   ".join(words)}</font>' if words else None
    return chip_row(chips, text and f"{text}   ")


def _caption(d: Definition, findings: list[Finding], unplaced: list[Finding], with_legend: bool = True) -> str:
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    parts = [f'<b>{escape(d.name)}</b>  <font point-size="9" color="{style.MUTED}">{escape(d.definition_id)}</font>']
    if findings:
        summary = " · ".join(
            t
            for t in (
                f"{errors} error" + "s" * (errors != 1) if errors else "",
                f"{warnings} warning" + "s" * (warnings != 1) if warnings else "",
            )
            if t
        )
        colour = style.FINDING_TEXT["error" if errors else "warning"]
        parts.append(f'<font point-size="9" color="{colour}">⚠ {summary}</font>')
    for f in unplaced[:5]:
        parts.append(
            f'<font point-size="8" color="{style.FINDING_TEXT[f.severity]}">'
            f"{escape(clip(f'{f.key} ({f.where}): {f.message}', 100))}</font>"
        )
    if with_legend:
        parts.append(legend(d))
    return caption_table(parts)


def render_definition(definition, findings=None, *, compiled=None, legend: bool = True) -> View:
    """Draw a definition: nodes by type, edges by role, groups as clusters, findings outlined.

    ``definition`` is a create body (dict) or a :class:`Definition`. ``findings`` defaults to
    ``lint(definition)``; pass ``[]`` for a clean picture. ``compiled`` (optional) is the
    compiled form, used for loop regions (computed when omitted). ``legend`` adds a row
    naming the node kinds and edge roles in use.

    Node shapes: agent (blue rounded box), blocking agent (purple, double outline), human
    (amber ellipse), webhook (teal tag). Edges: approve green ✓, reject red ✗, always grey,
    exhausted orange dotted, custom blue with its predicate, loop-backs dashed ``↺ max n``.

    >>> from toolkit import examples
    >>> svg = render_definition(examples.load("sla-escalation")).svg()
    >>> "SLA 48h" in svg, 'id="node-legal-review"' in svg.replace("&#45;", "-")
    (True, True)
    """
    if compiled is None and isinstance(definition, dict):
        compiled = definition.get("compiled")  # a DefinitionView carries its compiled form
    d = as_definition(definition)
    scene = build_scene(d)
    _mark_loop_entries(scene, loops_of(d, compiled))
    found = lint(d) if findings is None else list(findings)
    unplaced = highlight_findings(scene, found)
    scene.caption = _caption(d, found, unplaced, legend)
    return View(scene=scene)


def _mark_loop_entries(scene: Scene, loops: list[dict]) -> None:
    for lp in loops:
        item = scene.nodes.get(lp["entryNodeId"])
        if item is not None:
            body = ", ".join(lp["bodyNodeIds"])
            item.tooltip = [
                *item.tooltip,
                f"loop entry of {lp['loopId']} (body: {body}; at most {lp['maxIterations']} iterations)",
            ]
