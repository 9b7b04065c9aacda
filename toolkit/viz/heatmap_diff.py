"""render_heatmap_diff: where a candidate version's runs go differently from the recorded one.

The candidate's definition is drawn; each node is filled warm when its steps per run rose
and cool when they fell (the deeper, the larger the change relative to the largest), and
labelled with both rates. Edges carry the change in how often they fired per run.
"""

from __future__ import annotations

import math
from html import escape

from toolkit.viz import style
from toolkit.viz.definition import as_definition, build_scene
from toolkit.viz.heatmap import _summary_fields, edge_count_of
from toolkit.viz.labels import caption_table
from toolkit.viz.view import View

__all__ = ["render_heatmap_diff"]


def _shade(delta: float, top: float) -> str:
    if top <= 0 or abs(delta) < 1e-9:
        return style.MORE[0]
    level = min(4, max(1, math.ceil(4 * abs(delta) / top)))
    return (style.MORE if delta > 0 else style.FEWER)[level]


def render_heatmap_diff(definition, baseline, candidate) -> View:
    """Draw ``definition`` (the candidate) coloured by the change in steps per run from the
    ``baseline`` summary to the ``candidate`` summary (Summary, SimulationResult or JSON)."""
    d = as_definition(definition)
    a, b = _summary_fields(baseline), _summary_fields(candidate)
    ra, rb = a["runs"] or 1, b["runs"] or 1
    scene = build_scene(d, merge_join_edges=True)
    deltas = {n: b["nodes"].get(n, 0) / rb - a["nodes"].get(n, 0) / ra for n in scene.nodes}
    top = max((abs(v) for v in deltas.values()), default=0.0)
    for node_id, item in scene.nodes.items():
        before, after = a["nodes"].get(node_id, 0) / ra, b["nodes"].get(node_id, 0) / rb
        item.attrs["fillcolor"] = _shade(deltas[node_id], top)
        item.lines = [item.lines[0], (f"{before:.2f} → {after:.2f} steps/run ({after - before:+.2f})", {"size": 9})]
    members = {g: c.members for g, c in scene.clusters.items()}
    joins = {m: g.group_id for g in d.group_list if g.on_quorum_met == "joinOnQuorum" for m in g.member_node_ids}
    for edge in scene.edges:
        fa = edge_count_of(edge, members, a["edges"], joins) / ra
        fb = edge_count_of(edge, members, b["edges"], joins) / rb
        if abs(fb - fa) >= 0.005:
            colour = style.MORE[4] if fb > fa else style.FEWER[4]
            edge.attrs.update({"color": colour, "penwidth": "2.5"})
            edge.label = [*edge.label, (f"{fb - fa:+.2f}/run", {"color": colour, "bold": True})]
    outcomes = sorted(set(a["outcomes"]) | set(b["outcomes"]))
    rows = [f"<b>{escape(d.name)}</b>: candidate vs recorded version ({a['runs']} and {b['runs']} runs)"]
    rows += [f"{k}: {a['outcomes'].get(k, 0) / ra:.1%} → {b['outcomes'].get(k, 0) / rb:.1%}" for k in outcomes]
    rows.append(
        f'<font color="{style.MORE[4]}">■ more steps per run</font>   <font color="{style.FEWER[4]}">■ fewer</font>'
    )
    scene.caption = caption_table(rows)
    return View(scene.to_digraph())
