"""Graph-shape rules (semantics §4, "graph"): ids, dangling edges, cycles, reachability,
configs and SLA breach routes."""

from __future__ import annotations

from collections import Counter

from toolkit.compiler import check_when
from toolkit.lint.findings import Facts, Finding, error


def check(f: Facts) -> list[Finding]:
    return [*_duplicates(f), *_dangling(f), *_cycles_and_reach(f), *_configs(f), *_breach_routes(f)]


def _duplicates(f: Facts) -> list[Finding]:
    out = []
    counts = Counter(f.node_ids)
    for nid, n in counts.items():
        if n > 1:
            out.append(error("duplicate-node-id", f"node id '{nid}' is declared {n} times", f"node:{nid}"))
    for g in f.d.group_list:
        if g.group_id in counts:
            out.append(
                error(
                    "duplicate-node-id",
                    f"group id '{g.group_id}' is also a node id; nodes and groups share one namespace",
                    f"group:{g.group_id}",
                )
            )
    return out


def _dangling(f: Facts) -> list[Finding]:
    out = []
    for i, e in enumerate(f.d.edges):
        for side, endpoint in (("from", e.from_), ("to", e.to)):
            if not f.known(endpoint):
                out.append(
                    error(
                        "dangling-edge",
                        f"edge {i} `{side}` names {endpoint.kind} '{endpoint.ref}', which is not declared",
                        f"edge:{i}",
                    )
                )
    return out


def _cycles_and_reach(f: Facts) -> list[Finding]:
    if f.topological is not None:
        return []
    out = []
    in_cycle = [nid for nid in f.bit if f.ancestors[nid] & f.bit[nid]]
    seen = 0
    for nid in in_cycle:
        if seen & f.bit[nid]:
            continue
        component = (f.ancestors[nid] & f.descendants[nid]) | f.bit[nid]
        seen |= component
        names = f.names(component)
        out.append(
            error(
                "cycle-detected",
                f"forward edges form a cycle through {', '.join(names)}; a path back must be an on: reject loop-back",
                f"node:{names[0]}",
            )
        )
    reached = 0
    for root in f.roots:
        reached |= f.bit[root] | f.descendants[root]
    for nid in f.bit:
        if not reached & f.bit[nid]:
            out.append(error("unreachable-node", f"node '{nid}' cannot be reached from any start node", f"node:{nid}"))
    return out


def _configs(f: Facts) -> list[Finding]:
    return [
        error("node-missing-config", f"node '{n.node_id}' ({n.type}) has no config", f"node:{n.node_id}")
        for n in f.d.nodes
        if n.config is None
    ]


def _reads_status(when: str | None) -> bool:
    predicate = check_when(when)[0] if when is not None else None
    return predicate is not None and "step.status" in predicate.paths


def _breach_routes(f: Facts) -> list[Finding]:
    out = []
    for node in f.nodes.values():
        if node.sla_ms is None:
            continue
        group = f.groups.get(f.group_of.get(node.node_id, ""))
        if group is not None and group.on_quorum_met == "joinOnQuorum":
            continue
        own = [e for _, e in f.out_edges.get(("node", node.node_id), [])]
        if own and not any(e.on == "always" or (e.on == "custom" and _reads_status(e.when)) for e in own):
            out.append(
                error(
                    "missing-breach-edge",
                    f"node '{node.node_id}' has slaMs but no on: always edge (or custom edge reading "
                    "step.status) to route a breach",
                    f"node:{node.node_id}",
                )
            )
    return out
