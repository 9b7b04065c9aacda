"""render_heatmap: where thousands of simulated runs went.

Node fill darkens with how many steps a node ran; edge width grows with how often an edge
fired; labels give counts and the share of the source's steps that took each edge.

>>> from toolkit import examples
>>> from toolkit.simulate import simulate
>>> result = simulate(examples.load("parallel-review"), runs=50, seed=1)
>>> view = render_heatmap(examples.load("parallel-review"), result.summary)
>>> "50 simulated runs" in view.source
True
"""

from __future__ import annotations

import math
from html import escape

from toolkit.viz import style
from toolkit.viz.definition import as_definition, build_scene
from toolkit.viz.labels import caption_table, chip_row, thousands
from toolkit.viz.names import Names
from toolkit.viz.view import View

__all__ = ["render_heatmap", "edge_count_of"]


def _summary_fields(summary) -> dict:
    """runs, outcomes, failure reasons, iterations, node counts and edge counts (tuple keys)
    from a Summary, a SimulationResult, or ``Summary.to_json()``."""
    summary = getattr(summary, "summary", summary)
    data = (
        summary
        if isinstance(summary, dict)
        else {
            k: getattr(summary, k, None)
            for k in ("runs", "outcomes", "failure_reasons", "iteration_histogram", "node_counts", "edge_counts")
        }
    )
    edges = data.get("edge_counts") or {}
    if isinstance(edges, list):  # the JSON form: [{from, to, count}]
        edges = {(e["from"], e["to"]): e["count"] for e in edges}
    return {
        "runs": data.get("runs") or 0,
        "outcomes": dict(data.get("outcomes") or {}),
        "failure_reasons": dict(data.get("failure_reasons") or {}),
        "iterations": dict(data.get("iteration_histogram") or {}),
        "nodes": dict(data.get("node_counts") or {}),
        "edges": dict(edges),
    }


def edge_count_of(edge, members: dict[str, list[str]], edge_counts: dict, joins: dict[str, str] | None = None) -> int:
    """How often a drawn edge fired. Counts are keyed ``(source node or group id, target
    node id)``; an edge into a group fired once per group instance, so its count is that of
    any one member (the largest, to be safe). A member of a joinOnQuorum group never fires
    its own edges: its group does, so ``joins`` (member -> group) redirects the lookup."""
    targets = members.get(edge.target[1], []) if edge.target[0] == "group" else [edge.target[1]]
    source = edge.source[1]
    if edge.source[0] == "node" and joins:
        source = joins.get(source, source)
    return max((edge_counts.get((source, t), 0) for t in targets), default=0)


def _level(count: int, top: int) -> int:
    """0 for never, else 1..6 along the heat scale."""
    return 0 if count <= 0 or top <= 0 else min(6, max(1, math.ceil(6 * count / top)))


def _caption(d, f: dict, top: int) -> str:
    runs = f["runs"] or 1
    rows = [
        f'<b>{escape(d.name)}</b>  <font point-size="9" color="{style.MUTED}">'
        f"{escape(d.definition_id)} · {thousands(f['runs'])} simulated runs</font>"
    ]
    if f["outcomes"]:
        parts = [
            f'<font color="{style.STATUS_TEXT.get(k, style.INK)}">{escape(str(k))} {thousands(n)}</font>'
            f' <font color="{style.MUTED}">({n / runs:.1%})</font>'
            for k, n in f["outcomes"].items()
        ]
        rows.append(f'<font point-size="10">{" · ".join(parts)}</font>')
    names = Names(d)
    for reason, n in list(f["failure_reasons"].items())[:3]:  # in words: the code is internal
        rows.append(f'<font point-size="9" color="#C62828">{thousands(n)} × {escape(names.reason(str(reason)))}</font>')
    if len(f["iterations"]) > 1:
        hist = " · ".join(f"{k}: {thousands(v)}" for k, v in f["iterations"].items())
        rows.append(f'<font point-size="9" color="{style.MUTED}">loop iterations per run  {hist}</font>')
    if top > 0:
        chips = [(f"≤ {thousands(math.floor(top * i / 6))}", style.HEAT[i], "#BDBDBD", style.INK) for i in range(1, 7)]
        rows.append(chip_row(chips, f'<font point-size="9" color="{style.MUTED}">steps per node </font>'))
    return caption_table(rows)


def _fill_nodes(scene, f: dict, top: int) -> None:
    runs = f["runs"] or 1
    for node_id, item in scene.nodes.items():
        n = f["nodes"].get(node_id, 0)
        item.attrs["fillcolor"] = style.HEAT[_level(n, top)]
        item.lines = [item.lines[0], (f"{thousands(n)} steps · {n / runs:.2f}/run", {"size": 9})]
        item.tooltip = [*item.tooltip, f"{n} steps in {f['runs']} runs"]


def _weigh_edges(scene, d, f: dict) -> None:
    members = {g: c.members for g, c in scene.clusters.items()}
    joins = {m: g.group_id for g in d.group_list if g.on_quorum_met == "joinOnQuorum" for m in g.member_node_ids}
    counts = [edge_count_of(e, members, f["edges"], joins) for e in scene.edges]
    top = max(counts, default=0)
    low, high = style.HEAT_PEN
    for edge, n in zip(scene.edges, counts):
        kind, ref = edge.source
        source_total = (
            max((f["nodes"].get(m, 0) for m in members.get(ref, [])), default=0)
            if kind == "group"
            else f["nodes"].get(ref, 0)
        )
        share = f" · {n / source_total:.0%}" if source_total else ""
        colour = edge.attrs.get("fontcolor", style.INK)
        pen = 1.0
        if n:
            pen = low + (high - low) * n / top
            # graphviz grows arrowheads with the pen: shrink them back for thick edges
            arrow = max(0.3, min(0.7, 1.1 / math.sqrt(pen)))
            edge.attrs.update({"penwidth": f"{pen:.2f}", "arrowsize": f"{arrow:.2f}"})
        else:
            edge.attrs.update({"style": "dotted", "penwidth": "1", "color": style.FAINT})
            colour = style.FAINT
        keep = edge.label if (edge.role == "custom" or edge.loop_back) else []
        mark = edge.label[0][0] + " " if edge.label and not keep else ""
        edge.label = [*keep, (f"{mark}{thousands(n)}{share}", {"color": colour, "bold": bool(n)})]
        if n and pen > 3:  # graphviz centres a label on its edge: lift it clear of a thick line
            edge.label.append((" ", {"size": max(6, int(pen * 1.5))}))
        share_text = f" ({n / source_total:.1%} of the source's steps)" if source_total else ""
        edge.tooltip = [*edge.tooltip, f"fired {n} times{share_text}"]


def render_heatmap(definition, summary) -> View:
    """Draw ``definition`` with traversal frequencies from a simulation ``summary``.

    ``summary`` is a :class:`toolkit.simulate.Summary` (``node_counts``: steps per node,
    ``edge_counts``: ``{(source node or group id, target node id): n}``), the
    :class:`~toolkit.simulate.SimulationResult` holding one, or ``Summary.to_json()``.
    """
    d = as_definition(definition)
    f = _summary_fields(summary)
    scene = build_scene(d, merge_join_edges=True)
    node_top = max(f["nodes"].values(), default=0)
    _fill_nodes(scene, f, node_top)
    _weigh_edges(scene, d, f)
    scene.graph_attrs["nodesep"] = "0.5"  # room for count labels between thick parallel edges
    scene.caption = _caption(d, f, node_top)
    return View(scene.to_digraph())
