"""Loop rules (semantics §4, "loops")."""

from __future__ import annotations

from toolkit.lint.findings import Facts, Finding, error


def check(f: Facts) -> list[Finding]:
    out: list[Finding] = []
    # Owner per node: (edge index, loopId) of the first loop whose body holds it. Keyed by the
    # edge, not the loopId: two loop-backs with the same source and target share a loopId.
    owner: dict[str, tuple[int, str]] = {}
    for index, edge, loop in f.loops:
        where = f"edge:{index}"
        body = set(loop["bodyNodeIds"])
        for nid in loop["bodyNodeIds"]:
            if nid in owner and owner[nid][0] != index:
                first, first_id = owner[nid]
                out.append(
                    error(
                        "loop-node-in-multiple-loops",
                        f"node '{nid}' is in the bodies of {first_id} (edge {first}) and "
                        f"{loop['loopId']} (edge {index})",
                        where,
                    )
                )
            owner.setdefault(nid, (index, loop["loopId"]))
        group = f.groups.get(edge.from_.ref) if edge.from_.kind == "group" else None
        join = group if group is not None and group.on_quorum_met == "joinOnQuorum" else None
        exits = [nid for nid in loop["bodyNodeIds"] if nid in f.succs and any(s not in body for s in f.succs[nid])]
        if len(exits) > 1 and join is None:
            out.append(
                error(
                    "loop-body-must-have-single-terminal",
                    f"{loop['loopId']}: several body nodes ({', '.join(exits)}) have edges leaving "
                    "the loop; keep one exit",
                    where,
                )
            )
        if join is not None and join.quorum_value != join.expected:
            out.append(
                error(
                    "loop-group-bounded-quorum-must-equal-expected",
                    f"{loop['loopId']}: a loop-back from joinOnQuorum group '{join.group_id}' needs "
                    "quorum == expectedSteps",
                    where,
                )
            )
        out += _exhausted_route(index, loop)
        for g in f.d.group_list:
            inside = [m for m in g.member_node_ids if m in body]
            if inside and len(inside) != len(g.member_node_ids):
                out.append(
                    error(
                        "loop-body-splits-group",
                        f"{loop['loopId']}: group '{g.group_id}' is partly inside the loop body ({', '.join(inside)})",
                        where,
                    )
                )
    return out


def _exhausted_route(index: int, loop: dict) -> list[Finding]:
    route = (loop["onExhausted"] or {}).get("routeToNodeId")
    if route in loop["bodyNodeIds"]:
        return [
            error(
                "loop-on-exhausted-route-to-in-body",
                f"{loop['loopId']}: the exhausted route goes to '{route}', which is inside the loop body",
                f"edge:{index}",
            )
        ]
    return []


def check_exhausted_routes(f: Facts) -> list[Finding]:
    """The one loop rule that also applies to a cyclic forward graph: an exhausted edge into
    its own loop body always closes a forward cycle, so it would otherwise only ever be
    reported as ``cycle-detected``."""
    return [finding for index, _, loop in f.loops for finding in _exhausted_route(index, loop)]
