"""Warnings: never block a write, but the designer shows them (semantics §4)."""

from __future__ import annotations

from toolkit.lint.findings import Facts, Finding, warning

# Roles that can fire together out of one step (approve and reject exclude each other;
# exhausted fires only on loop exhaustion, when neither approve nor a forward reject does).
_EXCLUSIVE = {frozenset({"approve", "reject"}), frozenset({"approve", "exhausted"}), frozenset({"reject", "exhausted"})}


def check(f: Facts, known_agents: set[str] | None = None) -> list[Finding]:
    out = [*_all_custom(f), *_exhausted_elsewhere(f), *_non_blocking_members(f), *_implicit_joins(f)]
    if known_agents is not None:
        for n in f.nodes.values():
            if n.type == "agent" and n.config is not None and n.config.agent_id not in known_agents:
                out.append(
                    warning(
                        "agent-not-registered",
                        f"node '{n.node_id}' names agent '{n.config.agent_id}', which is not in this "
                        "workspace's registry",
                        f"node:{n.node_id}",
                    )
                )
    return out


def _all_custom(f: Facts) -> list[Finding]:
    out = []
    for node in f.nodes.values():
        own = [e.on for _, e in f.out_edges.get(("node", node.node_id), []) if e.loop is None]
        if own and all(role == "custom" for role in own):
            out.append(
                warning(
                    "custom-edges-may-all-be-false",
                    f"every edge out of '{node.node_id}' is custom; if no predicate holds the path stops there "
                    "(add an on: always fallback)",
                    f"node:{node.node_id}",
                )
            )
    return out


def _exhausted_elsewhere(f: Facts) -> list[Finding]:
    out = []
    for i, e in f.valid_edges:
        if e.on != "exhausted" or e.to.kind != "node":
            continue
        others = [j for j, o in f.in_edges.get(("node", e.to.ref), []) if j != i and o.loop is None]
        if others:
            out.append(
                warning(
                    "exhausted-target-reachable-otherwise",
                    f"'{e.to.ref}' is the exhausted route of edge {i} but edges {others} also lead there",
                    f"edge:{i}",
                )
            )
    return out


def _non_blocking_members(f: Facts) -> list[Finding]:
    out = []
    for g in f.d.group_list:
        for m in g.member_node_ids:
            node = f.nodes.get(m)
            if node is not None and node.type == "agent" and node.config is not None and not node.config.blocking:
                out.append(
                    warning(
                        "group-member-non-blocking-agent",
                        f"'{m}' is a non-blocking agent in group '{g.group_id}': it approves at once, "
                        "so it always counts toward quorum",
                        f"node:{m}",
                    )
                )
    return out


def _firing_edges(f: Facts) -> list[tuple[str, str, str]]:
    """(source, target, role) as steps fire them: a group-source edge fires once from the
    group (``group:<id>`` pseudo-source), joinOnQuorum members' own edges fire through it."""
    out: list[tuple[str, str, str]] = []
    for _, e in f.valid_edges:
        if e.loop is not None:
            continue
        if e.to.kind == "group":
            targets = [m for m in f.groups[e.to.ref].member_node_ids if m in f.bit]
        else:
            targets = [e.to.ref]
        source = e.from_.ref
        if e.from_.kind == "group":
            source = f"group:{e.from_.ref}"
        else:
            group = f.groups.get(f.group_of.get(e.from_.ref, ""))
            if group is not None and group.on_quorum_met == "joinOnQuorum":
                source = f"group:{group.group_id}"
        out.extend((source, t, e.on) for t in targets)
    return list(dict.fromkeys(out))


def _implicit_joins(f: Facts) -> list[Finding]:
    """A node with incoming edges from two branches that can both fire in one execution
    runs once per firing; it is almost always meant as a join."""
    firing = _firing_edges(f)
    members = {g.group_id: [m for m in g.member_node_ids if m in f.bit] for g in f.d.group_list}

    reached: dict[str, int] = {}

    def reach(target: str) -> int:
        if target not in reached:
            if target.startswith("group:"):
                bits = 0
                for m in members.get(target[6:], []):
                    bits |= f.bit[m] | f.descendants[m]
                reached[target] = bits
            else:
                reached[target] = f.bit[target] | f.descendants[target]
        return reached[target]

    preds: dict[str, list[str]] = {}
    for s, t, _ in firing:
        preds.setdefault(t, []).append(s)
    candidates = {t for t, ps in preds.items() if len(set(ps)) > 1}
    if not candidates:
        return []

    def source_bit(s: str) -> int:
        if s.startswith("group:"):
            return sum(f.bit[m] for m in members.get(s[6:], []))
        return f.bit[s]

    # Every way two branches can start together: two compatible edges out of one step
    # (or one group), or two start nodes (which all start at dispatch).
    forks: dict[str, list[tuple[str, str]]] = {"": [(r, "always") for r in f.roots]}
    for s, t, role in firing:
        forks.setdefault(s, []).append((t, role))
    # Bits of every predecessor of x: `left` below is non-empty only if these meet the
    # branch's reach (or the branch starts at x), a cheap test that skips most candidates.
    pred_bits = {x: 0 for x in candidates}
    for x in candidates:
        for s in set(preds[x]):
            pred_bits[x] |= source_bit(s)
    remaining = list(candidates)
    flagged: dict[str, None] = {}
    for fork, edges in forks.items():
        for a in range(len(edges)):
            for b in range(a + 1, len(edges)):
                if not remaining:
                    break
                (ta, ra), (tb, rb) = edges[a], edges[b]
                if frozenset({ra, rb}) in _EXCLUSIVE:
                    continue
                ra_bits, rb_bits = reach(ta), reach(tb)
                still = []
                for x in remaining:
                    bits = pred_bits[x]
                    if ((bits & ra_bits) or ta == x) and ((bits & rb_bits) or tb == x):
                        left = {s for s in preds[x] if source_bit(s) & ra_bits} | ({fork} if ta == x else set())
                        right = {s for s in preds[x] if source_bit(s) & rb_bits} | ({fork} if tb == x else set())
                        if left and right and len(left | right) > 1:
                            flagged[x] = None
                            continue
                    still.append(x)
                remaining = still
    return [
        warning(
            "implicit-join",
            f"'{x}' has incoming edges from parallel branches and will run once per branch; "
            "put the branches in a joinOnQuorum group to join them",
            f"node:{x}",
        )
        for x in f.node_ids
        if x in flagged
    ]
