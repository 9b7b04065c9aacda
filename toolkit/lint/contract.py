"""Edge-contract rules (semantics §4, "contract"): APPROVAL_* keys."""

from __future__ import annotations

from toolkit.compiler import check_when, is_loop_back
from toolkit.lint.findings import Facts, Finding, error


def check(f: Facts) -> list[Finding]:
    out: list[Finding] = []
    out += _human_reject_paths(f)
    out += _edge_fields(f)
    out += _reject_cycles_and_loop_targets(f)
    out += _exhausted(f)
    out += _group_sources(f)
    return out


def _human_reject_paths(f: Facts) -> list[Finding]:
    reject_sources = {(e.from_.kind, e.from_.ref) for _, e in f.valid_edges if e.on == "reject"}
    out = []
    for node in f.nodes.values():
        if node.type != "human":
            continue
        own = ("node", node.node_id) in reject_sources
        group = f.group_of.get(node.node_id)
        if not own and not (group and ("group", group) in reject_sources):
            out.append(
                error(
                    "APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH",
                    f"human node '{node.node_id}' has no outgoing on: reject edge; add one (or a "
                    "reject loop-back) so a rejection goes somewhere",
                    f"node:{node.node_id}",
                )
            )
    return out


def _edge_fields(f: Facts) -> list[Finding]:
    out = []
    for i, e in enumerate(f.d.edges):
        where = f"edge:{i}"
        if e.when is not None and e.on != "custom":
            out.append(
                error(
                    "APPROVAL_EDGE_WHEN_REQUIRES_CUSTOM",
                    f"edge {i} has `when` but on: {e.on}; `when` is only allowed with on: custom",
                    where,
                )
            )
        if e.on == "custom" and e.when is None:
            out.append(
                error(
                    "APPROVAL_EDGE_CUSTOM_REQUIRES_WHEN", f"edge {i} is on: custom but has no `when` predicate", where
                )
            )
        if e.on == "custom" and e.when is not None:
            _, problem = check_when(e.when)
            if problem is not None:
                out.append(error("APPROVAL_EDGE_WHEN_INVALID", f"edge {i} `when` is invalid: {problem}", where))
        if e.loop is not None and e.on != "reject":
            out.append(
                error(
                    "APPROVAL_EDGE_LOOP_REQUIRES_REJECT",
                    f"edge {i} has `loop` but on: {e.on}; a loop-back must be an on: reject edge",
                    where,
                )
            )
    return out


def _source_nodes(f: Facts, endpoint) -> list[str]:
    if endpoint.kind == "group":
        return [m for m in f.groups[endpoint.ref].member_node_ids if m in f.bit]
    return [endpoint.ref]


def _reaches_back(f: Facts, target: str, sources: list[str]) -> bool:
    """Is ``target`` one of the sources or a forward ancestor of one?"""
    return any(target == s or (f.ancestors.get(s, 0) & f.bit.get(target, 0)) for s in sources)


def _reject_cycles_and_loop_targets(f: Facts) -> list[Finding]:
    out = []
    for i, e in f.valid_edges:
        sources = _source_nodes(f, e.from_)
        if e.on == "reject" and e.loop is None and e.to.kind == "node" and _reaches_back(f, e.to.ref, sources):
            out.append(
                error(
                    "APPROVAL_EDGE_REJECT_CYCLE_REQUIRES_LOOP",
                    f"edge {i} rejects back to '{e.to.ref}', which comes before its source: add loop: "
                    f"{{maxIterations}} to make it a loop-back",
                    f"edge:{i}",
                )
            )
        if is_loop_back(e) and not (e.to.kind == "node" and _reaches_back(f, e.to.ref, sources)):
            out.append(
                error(
                    "APPROVAL_EDGE_LOOP_TARGET_NOT_ANCESTOR",
                    f"edge {i} is a loop-back to '{e.to.ref}', which is neither its source nor a node before it",
                    f"edge:{i}",
                )
            )
    return out


def _exhausted(f: Facts) -> list[Finding]:
    out = []
    loop_sources = {(e.from_.kind, e.from_.ref) for _, e in f.loop_backs()}
    seen: set = set()
    for i, e in f.valid_edges:
        if e.on != "exhausted":
            continue
        source = (e.from_.kind, e.from_.ref)
        if source not in loop_sources:
            out.append(
                error(
                    "APPROVAL_EDGE_EXHAUSTED_REQUIRES_LOOP_SIBLING",
                    f"edge {i} is on: exhausted but '{e.from_.ref}' has no reject loop-back to exhaust",
                    f"edge:{i}",
                )
            )
        if source in seen:
            out.append(
                error(
                    "APPROVAL_EDGE_EXHAUSTED_DUPLICATE",
                    f"edge {i} is a second on: exhausted edge from '{e.from_.ref}'; keep one",
                    f"edge:{i}",
                )
            )
        seen.add(source)
    return out


def _group_sources(f: Facts) -> list[Finding]:
    out = []
    for i, e in f.valid_edges:
        if e.from_.kind == "group" and e.to.kind == "group":
            out.append(
                error(
                    "APPROVAL_GROUP_TO_GROUP_EDGE",
                    f"edge {i} goes from group '{e.from_.ref}' to group '{e.to.ref}'; route through a node",
                    f"edge:{i}",
                )
            )
        if e.from_.kind != "group":
            continue
        policy = f.groups[e.from_.ref].on_quorum_met
        if e.on == "reject" and e.loop is None and policy in ("joinOnQuorum", "cancelOnQuorum"):
            out.append(
                error(
                    "APPROVAL_GROUP_FROM_REJECT_REQUIRES_LOOP",
                    f"edge {i}: a forward on: reject edge from {policy} group '{e.from_.ref}' can never fire; "
                    "use a waitAll group, or a reject loop-back from a joinOnQuorum group",
                    f"edge:{i}",
                )
            )
        if is_loop_back(e) and policy != "joinOnQuorum":
            out.append(
                error(
                    "APPROVAL_GROUP_FROM_LOOP_REQUIRES_JOINONQUORUM",
                    f"edge {i}: a loop-back from group '{e.from_.ref}' needs onQuorumMet: "
                    f"joinOnQuorum (it is {policy})",
                    f"edge:{i}",
                )
            )
    return out
