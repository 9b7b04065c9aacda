"""render_execution: a definition coloured by how far one execution has got.

>>> from toolkit import examples
>>> from toolkit.simulate import run_script
>>> run = run_script(examples.load("parallel-review"), {"actions": [
...     {"atMs": 60000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"}]})
>>> view = render_execution(examples.load("parallel-review"), run.state)
>>> "waiting for bob@brand" in view.source
True
"""

from __future__ import annotations

from html import escape

from toolkit.viz import style
from toolkit.viz.definition import as_definition, build_scene, loops_of
from toolkit.viz.labels import caption_table, chip_row, clip
from toolkit.viz.names import Names
from toolkit.viz.replay import event_dict, node_of_step_id, parent_of_step_id, replay
from toolkit.viz.scene import Scene
from toolkit.viz.view import View

__all__ = ["render_execution", "render_execution_from_events"]


def _steps_of(state_or_view) -> tuple[dict, list[dict], dict]:
    """(execution facts, steps as dicts in creation order, {loopId: iteration})."""
    if isinstance(state_or_view, dict):
        view = state_or_view
        steps = []
        for s in view.get("steps") or []:
            answered = s.get("answeredBy")
            if answered is None:  # a plain ExecutionView: who answered shows only once it ends
                answered = [
                    r.get("userId")
                    for r in (s.get("output") or {}).get("reviewers") or []
                    if isinstance(r, dict) and r.get("decision")
                ]
            steps.append({**s, "answeredBy": answered})
        return view, steps, dict(view.get("loops") or {})
    state = state_or_view
    steps = []
    for s in state.steps.values():
        steps.append(
            {
                "stepId": s.step_id,
                "nodeId": s.node_id,
                "status": s.status,
                "iteration": s.iteration,
                "reviewerIds": list(s.reviewer_ids),
                "answeredBy": list(s.responses or ()),
                "output": s.output or {},
                "groupId": s.group_id,
            }
        )
    facts = {"executionId": state.execution_id, "status": state.status, "failureReason": state.failure_reason}
    return facts, steps, {lid: lp.iteration for lid, lp in state.loops.items()}


def _fired(steps: list[dict]) -> set[tuple[str, str, str]]:
    """``(source kind, source ref, child node)`` for every step an edge created."""
    node_of = {s["stepId"]: s["nodeId"] for s in steps}
    out = set()
    for s in steps:
        parent = parent_of_step_id(s["stepId"])
        if parent is None:
            continue
        ref: str | None
        kind, ref = parent
        if kind == "step":
            ref = node_of.get(ref) or node_of_step_id(ref)
            kind = "node"
        if ref is not None:
            out.add((kind, ref, s["nodeId"]))
    return out


_OUTCOME_TEXT: dict[tuple[str, object], str] = {
    ("completed", "approve"): "approved ✓",
    ("rejected", "reject"): "rejected ✗",
}


def _restyle(attrs: dict, status: str) -> None:
    look = dict(style.STATUS.get(status, style.STATUS["running"]))
    extra = look.pop("style", None)
    attrs.update(look)
    if extra:
        attrs["style"] = ",".join(dict.fromkeys([*attrs.get("style", "filled").split(","), extra]))


def _fade(colour: str) -> str:
    return colour + "55" if colour.startswith("#") and len(colour) == 7 else colour


def _colour_nodes(scene: Scene, steps: list[dict], loops: dict, loop_specs: list[dict]) -> dict[str, dict]:
    """Fill each node by its latest step's status; add status, waiting reviewers and loop
    iteration lines. Returns ``{nodeId: latest step}``."""
    latest: dict[str, dict] = {}
    counts: dict[str, int] = {}
    for step in steps:
        latest[step["nodeId"]] = step
        counts[step["nodeId"]] = counts.get(step["nodeId"], 0) + 1
    entries = {lp["entryNodeId"]: lp for lp in loop_specs}
    for node_id, item in scene.nodes.items():
        s = latest.get(node_id)
        status = s["status"] if s else "not reached"
        status = status if status in style.STATUS else "running"
        decision = (s.get("output") or {}).get("decision") if s else None
        if status == "completed" and decision == "reject":
            status = "rejected"  # a rejection must not look like a success
        _restyle(item.attrs, status)
        text = _OUTCOME_TEXT.get((status, decision), status)
        if status == "completed" and isinstance(decision, str) and (status, decision) not in _OUTCOME_TEXT:
            text += f" · {decision}"
        if counts.get(node_id, 0) > 1:
            text += f" · {counts[node_id]} steps"
        item.lines = [*item.lines, (text, {"size": 9, "bold": True, "color": style.STATUS_TEXT[status]})]
        if s is None:
            continue
        item.tooltip = [*item.tooltip, f"latest step {s['stepId']}: {text}"]
        if status == "waiting" and s.get("reviewerIds"):
            answered = set(s.get("answeredBy") or ())
            pending = [r for r in s["reviewerIds"] if r not in answered]
            if pending:
                item.lines.append(
                    (clip("waiting for " + ", ".join(pending), 44), {"size": 9, "color": style.STATUS_TEXT["waiting"]})
                )
        lp = entries.get(node_id)
        if lp is not None:
            iteration = loops.get(lp["loopId"]) or max(x["iteration"] for x in steps if x["nodeId"] == node_id)
            item.lines.append(
                (
                    f"↺ iteration {iteration} of {lp['maxIterations']}",
                    {"size": 9, "color": style.ROLE["reject"]["fontcolor"]},
                )
            )
    return latest


def _mark_edges(scene: Scene, steps: list[dict]) -> None:
    """Edges that created a step are drawn bold; the others fade."""
    fired = _fired(steps)
    members = {g: c.members for g, c in scene.clusters.items()}
    for edge in scene.edges:
        targets = members.get(edge.target[1], []) if edge.target[0] == "group" else [edge.target[1]]
        if any((edge.source[0], edge.source[1], t) in fired for t in targets):
            edge.attrs["penwidth"] = "2.6"
        else:
            edge.attrs["color"] = _fade(edge.attrs.get("color", style.INK))
            edge.label = [(text, {**opt, "color": _fade(opt.get("color", style.INK))}) for text, opt in edge.label]


def _group_progress(scene: Scene, d, latest: dict[str, dict]) -> None:
    """Approvals so far against the quorum, on every group the execution has reached."""
    for group in d.group_list:
        cluster = scene.clusters.get(group.group_id)
        if cluster is None or not any(m in latest for m in cluster.members):
            continue
        approved = sum(
            1
            for m in cluster.members
            if m in latest
            and latest[m]["status"] == "completed"
            and (latest[m].get("output") or {}).get("decision") == "approve"
        )
        cluster.lines = [
            *cluster.lines,
            (f"{approved} approved of {group.quorum_value} needed", {"size": 9, "color": style.MUTED}),
        ]


def _caption(d, facts: dict, at: dict | None, names: Names) -> str:
    status = facts.get("status") or "running"
    title = f'<b>{escape(d.name)}</b>  <font point-size="9" color="{style.MUTED}">'
    title += escape(" · ".join(x for x in (facts.get("executionId"), status) if x)) + "</font>"
    rows = [title]
    if facts.get("failureReason"):
        rows.append(f'<font point-size="9" color="#C62828">{escape(names.reason(facts["failureReason"]))}</font>')
    if at is not None:
        where = names.step(at.get("stepId")) if at.get("stepId") else ""
        rows.append(
            f'<font point-size="9" color="{style.INK}">▶ seq {at.get("seq")} · {escape(at.get("type", ""))}'
            f"{' · ' + escape(where) if where else ''}</font>"
        )
    chips = [
        (name, s["fillcolor"], s["color"], s.get("fontcolor", style.INK))
        for name in style.STATUS_ORDER
        for s in [style.STATUS[name]]
    ]
    rows.append(chip_row(chips))
    return caption_table(rows)


def render_execution(definition, state_or_view, at_event=None) -> View:
    """Draw ``definition`` with each node coloured by the status of its latest step.

    ``state_or_view`` is an engine :class:`~toolkit.engine.ExecutionState` or an
    ExecutionView dict (``steps`` with ``stepId, nodeId, status, iteration, reviewerIds,
    output``). Waiting human nodes list the reviewers who have not answered; loop entry
    nodes show their iteration; edges that fired are drawn bold, the others faded.
    ``at_event`` (an event dict or Event) marks the node it concerns and is named in the
    caption — what a player shows as "now".
    """
    d = as_definition(definition)
    loop_specs = loops_of(d)
    scene = build_scene(d, merge_join_edges=True)
    facts, steps, loops = _steps_of(state_or_view)
    latest = _colour_nodes(scene, steps, loops, loop_specs)
    _mark_edges(scene, steps)
    _group_progress(scene, d, latest)
    at = event_dict(at_event) if at_event is not None else None
    if at is not None:
        node_id = next((s["nodeId"] for s in steps if s["stepId"] == at.get("stepId")), None) or node_of_step_id(
            at.get("stepId") or ""
        )
        if node_id in scene.nodes:
            scene.nodes[node_id].attrs.update(style.CURRENT)
    scene.caption = _caption(d, facts, at, Names(d))
    if facts.get("failureReason"):  # the caption names it in words; the code stays at hand
        scene.graph_attrs["tooltip"] = f"failureReason {facts['failureReason']}"
    return View(scene.to_digraph())


def render_execution_from_events(definition, events, upto_seq: int | None = None) -> View:
    """Like :func:`render_execution`, from an event log replayed up to ``upto_seq``
    (every event when None); the last applied event is marked as "now".

    >>> from toolkit import examples
    >>> from toolkit.simulate import run_script
    >>> run = run_script(examples.load("parallel-review"), {"actions": []})
    >>> view = render_execution_from_events(examples.load("parallel-review"), run.events, upto_seq=4)
    >>> "▶ seq 4 · step.completed · Draft campaign copy" in view.source
    True
    """
    d = as_definition(definition)
    reviewers = {
        n.node_id: [r.user_id for r in n.config.reviewer_list]
        for n in d.nodes
        if n.type == "human" and n.config is not None
    }
    view = replay(events, upto_seq, reviewers)
    return render_execution(d, view, at_event=view["lastEvent"])
