"""Parallel-group rules (semantics §4, "groups")."""

from __future__ import annotations

from toolkit.lint.findings import Facts, Finding, error


def check(f: Facts) -> list[Finding]:
    out: list[Finding] = []
    seen: set[str] = set()
    membership: dict[str, str] = {}
    for g in f.d.group_list:
        where = f"group:{g.group_id}"
        if g.group_id in seen:
            out.append(error("group-duplicate-id", f"group id '{g.group_id}' is declared twice", where))
            continue
        seen.add(g.group_id)
        out += _shape(f, g, where)
        for m in g.member_node_ids:
            if m in membership and membership[m] != g.group_id:
                out.append(
                    error(
                        "group-node-in-multiple-groups",
                        f"node '{m}' is in groups '{membership[m]}' and '{g.group_id}'; a node is in at most one group",
                        where,
                    )
                )
            membership.setdefault(m, g.group_id)
        out += _entry(f, g, where)
        if g.on_quorum_met == "joinOnQuorum":
            out += _shared_successors(f, g, where)
    return out


def _shape(f: Facts, g, where: str) -> list[Finding]:
    out = []
    members = g.member_node_ids
    if not members:
        out.append(error("group-members-empty", f"group '{g.group_id}' has no members", where))
    for m in members:
        if m not in f.nodes:
            out.append(
                error("group-member-missing", f"group '{g.group_id}' member '{m}' is not a declared node", where)
            )
    if g.expected_steps is not None and g.expected_steps != len(members):
        out.append(
            error(
                "group-expected-steps-invalid",
                f"group '{g.group_id}' expectedSteps is {g.expected_steps} but it has {len(members)} members",
                where,
            )
        )
    # A quorum that was not given defaults to expectedSteps, which must be the member count:
    # only an explicit quorum can be out of range (an empty group or a wrong expectedSteps is
    # reported by its own key, not again as a quorum problem).
    quorum = g.quorum if g.quorum is not None else len(members)
    quorum_ok = not members or 1 <= quorum <= len(members)
    if not quorum_ok:
        out.append(
            error(
                "group-quorum-invalid",
                f"group '{g.group_id}' quorum {quorum} must be between 1 and expectedSteps "
                f"(its member count, {len(members)})",
                where,
            )
        )
    if g.on_quorum_met == "cancelOnQuorum" and members and quorum_ok and quorum >= len(members):
        out.append(
            error(
                "group-cancelonquorum-requires-quorum-lt-expected",
                f"cancelOnQuorum group '{g.group_id}' needs quorum < expectedSteps, or nothing is ever left to cancel",
                where,
            )
        )
    for r in g.required_node_ids:
        if r not in members:
            out.append(
                error(
                    "group-required-not-in-members",
                    f"group '{g.group_id}' requires '{r}', which is not one of its members",
                    where,
                )
            )
    if len(g.required_node_ids) > g.quorum_value:
        out.append(
            error(
                "group-required-exceeds-quorum",
                f"group '{g.group_id}' requires {len(g.required_node_ids)} members but its quorum is {g.quorum_value}",
                where,
            )
        )
    return out


def _entry(f: Facts, g, where: str) -> list[Finding]:
    members = [m for m in g.member_node_ids if m in f.nodes]
    out = []
    direct = sorted(
        (pair for m in dict.fromkeys(members) for pair in f.in_edges.get(("node", m), [])), key=lambda pair: pair[0]
    )
    for i, e in direct:
        out.append(
            error(
                "group-member-entered-individually",
                f"edge {i} enters group member '{e.to.ref}' directly; point it at group "
                f"'{g.group_id}' so members start together",
                where,
            )
        )
    roots = [m for m in members if m in f.bit and f.preds[m] == 0]
    if roots and len(roots) != len(members) and not out:
        out.append(
            error(
                "group-member-entered-individually",
                f"group '{g.group_id}': members {', '.join(roots)} are start nodes but the others are "
                "not; members always start together",
                where,
            )
        )
    return out


def _shared_successors(f: Facts, g, where: str) -> list[Finding]:
    targets = {}
    for m in g.member_node_ids:
        targets[m] = frozenset(
            (e.to.kind, e.to.ref) for _, e in f.out_edges.get(("node", m), []) if e.on in ("approve", "always")
        )
    if len(set(targets.values())) > 1:
        return [
            error(
                "group-joinonquorum-members-must-share-successors",
                f"joinOnQuorum group '{g.group_id}' members lead to different approve/always targets; "
                "they must share successors",
                where,
            )
        ]
    return []
