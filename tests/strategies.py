"""Builders and hypothesis strategies for workflow definitions, shared by the test suites.

Builders (plain functions returning raw JSON dicts, the create body as a client sends it)::

    definition([human("review"), agent("publish"), agent("fix")],
               [edge("review", "publish", "approve"), edge("review", "fix", "reject")])

Strategies:

* :func:`valid_definitions` — lint-clean create bodies (no error findings): chains of
  agent / human / webhook nodes and parallel groups of every policy, approve / reject /
  always / custom edges, reject loop-backs (self-loops, loops back to an ancestor, loops
  from a joinOnQuorum group) with and without ``exhausted`` routes, ``slaMs`` with breach
  routes, bare-string and object-form endpoints, varied key order.
* :func:`arbitrary_definitions` — schema-valid bodies whose graph is random (any edge
  between any declared or undeclared id): fodder for "the linter never raises".
* :func:`json_values` — any JSON document.
"""

from __future__ import annotations

import json
import random
import string

from hypothesis import strategies as st

# ----------------------------------------------------------------------------- builders


def agent(node_id: str, agent_id: str = "bot", **config) -> dict:
    """A non-blocking agent node (config fields as keyword arguments, camelCase)."""
    return {"nodeId": node_id, "type": "agent", "config": {"agentId": agent_id, **config}}


def blocking(node_id: str, policy="allResolved", **config) -> dict:
    """A blocking agent node (counts toward group quorum without a warning)."""
    return agent(node_id, blocking=True, resolutionPolicy=policy, **config)


def human(node_id: str, *reviewer_ids: str, **config) -> dict:
    return {"nodeId": node_id, "type": "human", "config": {"reviewerIds": list(reviewer_ids or ("ann",)), **config}}


def webhook(node_id: str, **config) -> dict:
    return {"nodeId": node_id, "type": "webhook", "config": config}


def bare(node: dict) -> dict:
    """The node without its ``config`` (linted as ``node-missing-config``)."""
    return {k: v for k, v in node.items() if k != "config"}


def with_sla(node: dict, sla_ms: int = 60_000) -> dict:
    return {**node, "slaMs": sla_ms}


def grp(group_id: str) -> dict:
    """A group edge endpoint."""
    return {"kind": "group", "groupId": group_id}


def nd(node_id: str) -> dict:
    """An object-form node edge endpoint."""
    return {"kind": "node", "nodeId": node_id}


def edge(
    source, target, on: str | None = None, when: str | dict | None = None, loop: int | None = None, **extra
) -> dict:
    """An edge; ``when`` may be given as an AST (it is sent as a JSON string); ``loop`` is maxIterations."""
    out = {"from": source, "to": target}
    if on is not None:
        out["on"] = on
    if when is not None:
        out["when"] = when if isinstance(when, str) else json.dumps(when)
    if loop is not None:
        out["loop"] = {"maxIterations": loop}
    out.update(extra)
    return out


def group(group_id: str, *members: str, **fields) -> dict:
    return {"groupId": group_id, "memberNodeIds": list(members), **fields}


def definition(nodes: list, edges: list, groups: list | None = None, **top) -> dict:
    out = {
        "definitionId": top.pop("definitionId", "test-flow"),
        "name": top.pop("name", "Test flow"),
        "nodes": nodes,
        "edges": edges,
    }
    if groups is not None:
        out["groups"] = groups
    out.update(top)
    return out


def var(path: str) -> dict:
    return {"var": path}


def op(name: str, *args) -> dict:
    return {"op": name, "args": list(args)}


# Predicates used by generated custom edges (all valid, boolean at the top).
CUSTOM_WHENS = [
    op("gte", var("output.score"), 0.5),
    op("eq", var("output.decision"), "approve"),
    op("and", op("exists", var("output.summary")), op("not", op("isEmpty", var("output.summary")))),
    op("in", var("execution.input.region"), ["eu", "us"]),
    op("regex", var("output.text"), "^[A-Z]"),
    op("or", op("lt", op("length", var("output.items")), 3), op("startsWith", var("step.nodeId"), "x")),
]
# Custom predicates that read step.status: they route an SLA breach.
STATUS_WHENS = [
    op("eq", var("step.status"), "breached"),
    op("in", var("step.status"), ["breached", "failed"]),
]

# ----------------------------------------------------------------------------- JSON


def json_values(max_leaves: int = 25) -> st.SearchStrategy:
    """Any JSON document (finite numbers, unicode strings, nested arrays and objects)."""
    scalars = (
        st.none()
        | st.booleans()
        | st.integers(-(2**63), 2**63)
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=12)
    )
    keys = st.sampled_from(
        ["data", "nodes", "edges", "groups", "nodeId", "type", "config", "from", "to", "on", "definitionId", "name"]
    ) | st.text(max_size=8)
    return st.recursive(
        scalars,
        lambda children: st.lists(children, max_size=5) | st.dictionaries(keys, children, max_size=5),
        max_leaves=max_leaves,
    )


# ----------------------------------------------------------------------------- valid definitions

_AGENT_IDS = ["writer", "checker", "classifier", "translator", "publisher"]
_USERS = ["ann", "bob", "carol", "dave", "erin"]


class _Bits:
    """Many small choices from one drawn integer: far fewer draws than one per choice (faster
    generation), and the integer shrinks toward 0, i.e. toward the plainest choices."""

    def __init__(self, value: int):
        self.value = value

    def take(self, count: int) -> int:
        out = self.value % count
        self.value //= count
        return out

    def pick(self, options):
        return options[self.take(len(options))]

    def chance(self, one_in: int) -> bool:
        return self.take(one_in) == one_in - 1


_BITS = st.integers(0, 2**62)


def _node_config(draw, kind: str, *, must_block: bool = False) -> dict:
    b = _Bits(draw(_BITS))
    if kind == "webhook":
        return b.pick(
            [{}, {"url": "https://hooks.example.com/flow"}, {"url": "https://hooks.example.com/x", "method": "POST"}]
        )
    if kind == "human":
        users = _USERS[b.take(len(_USERS)) :][: 1 + b.take(3)]
        if b.take(2):
            flags = [bool(b.take(2)) for _ in users]
            flags[b.take(len(users))] = True  # at least one mandatory
            config = {"reviewers": [{"userId": u, "mandatory": m} for u, m in zip(users, flags)]}
        else:
            config = {"reviewerIds": users}
        if b.take(2):
            config["commentBody"] = "Please review."
        if b.chance(4):
            config["reviewerEmails"] = ["ann@example.com"]
        return config
    config = {"agentId": b.pick(_AGENT_IDS)}
    if must_block or b.chance(3):
        config["blocking"] = True
        expected = 1 + b.take(3)
        if expected > 1:
            config["expectedResolutions"] = expected
        config["resolutionPolicy"] = b.pick(
            ["allResolved", {"kind": "allResolved"}, {"kind": "minResolved", "minCount": 1 + b.take(expected)}]
        )
    elif b.take(2):
        config["blocking"] = False
    if b.chance(4):
        config["mockOutput"] = {"decision": "approve", "score": 0.9}
    if b.chance(5):
        config["agentMaxRuntimeMs"] = 1 + b.take(86_400_000)
    if b.chance(6):
        config["x-extra"] = {"kept": True}  # unknown config keys are kept and echoed
    return config


class _Builder:
    """Accumulates nodes, edges and groups while a valid definition is drawn."""

    def __init__(self, draw, sep: str):
        self.draw, self.sep = draw, sep
        self.nodes: list[dict] = []
        self.edges: list[dict] = []
        self.groups: list[dict] = []

    def nid(self, *parts) -> str:
        return self.sep.join(str(p) for p in parts)

    def node(self, node_id: str, kind: str, *, must_block: bool = False, sla: bool = False) -> str:
        node = {"nodeId": node_id, "type": kind, "config": _node_config(self.draw, kind, must_block=must_block)}
        b = _Bits(self.draw(_BITS))
        if sla:
            node["slaMs"] = 1 + b.take(86_400_000)
        if b.chance(4):
            node["name"] = f"Step {node_id}"
        if b.chance(6):
            node["description"] = "generated"
        if b.chance(5):  # key order is echoed as sent
            node = dict(reversed(list(node.items())))
        self.nodes.append(node)
        return node_id

    def sink(self, node_id: str) -> str:
        return self.node(node_id, self.draw(st.sampled_from(["agent", "agent", "webhook"])))

    def endpoint(self, ref: tuple[str, str], b: _Bits):
        kind, rid = ref
        if kind == "group":
            return b.pick([{"kind": "group", "groupId": rid}, {"groupId": rid, "kind": "group"}])
        return b.pick([rid, rid, {"kind": "node", "nodeId": rid}, {"nodeId": rid, "kind": "node"}])

    def edge(
        self,
        source: tuple[str, str],
        target: tuple[str, str],
        on: str,
        *,
        when: dict | None = None,
        loop: int | None = None,
    ) -> None:
        b = _Bits(self.draw(_BITS))
        out = {"from": self.endpoint(source, b), "to": self.endpoint(target, b)}
        if on != "always" or b.take(2):
            out["on"] = on
        if when is not None:
            out["when"] = json.dumps(when, separators=b.pick([(",", ":"), (", ", ": ")]))
        if loop is not None:
            out["loop"] = {"maxIterations": loop}
        if b.chance(5):
            keys = list(out)
            keys.insert(b.take(len(keys)), keys.pop(b.take(len(keys))))
            out = {k: out[k] for k in keys}
        self.edges.append(out)

    def transition(
        self, source: tuple[str, str], target: tuple[str, str], *, human: bool, needs_breach: bool, confined: bool
    ) -> bool:
        """The edge from one stage to the next; True when it is an ``always`` or status-reading edge."""
        draw = self.draw
        if needs_breach and confined:
            # Inside a loop body a node may not leave the body, so its breach route is the transition.
            if draw(st.booleans()):
                self.edge(source, target, "always")
            else:
                self.edge(source, target, "custom", when=draw(st.sampled_from(STATUS_WHENS)))
            return True
        roles = ["approve", "custom"] if human else ["approve", "always", "custom"]
        role = draw(st.sampled_from(roles))
        when = draw(st.sampled_from(CUSTOM_WHENS + STATUS_WHENS)) if role == "custom" else None
        self.edge(source, target, role, when=when)
        return role == "always" or when in STATUS_WHENS


def _plan_loops(draw, kinds: list[str]) -> list[tuple[int, int]]:
    """Disjoint (entry, source) stage intervals; entry is a node stage."""
    loops, start = [], 0
    while start < len(kinds) and draw(st.integers(0, 2)) > 0:
        entries = [i for i in range(start, len(kinds)) if kinds[i] == "node"]
        if not entries:
            break
        entry = draw(st.sampled_from(entries))
        source = draw(st.integers(entry, min(entry + 3, len(kinds) - 1)))
        loops.append((entry, source))
        start = source + 1
    return loops


def _chain(draw, b: _Builder, prefix: str, max_stages: int) -> None:
    count = draw(st.integers(1, max_stages))
    kinds: list[str] = []
    for _ in range(count):
        allow_group = not kinds or kinds[-1] != "group"
        kinds.append(draw(st.sampled_from(["node", "node", "group"] if allow_group else ["node"])))
    loops = _plan_loops(draw, kinds)
    loop_of_source = {s: e for e, s in loops}
    # Stages strictly inside a loop body (not its source) may have no edge leaving the body.
    confined = {i for e, s in loops for i in range(e, s)}
    refs: list[tuple[str, str]] = []  # the endpoint each stage is entered through
    plans: list[dict] = []
    for i, kind in enumerate(kinds):
        if kind == "node":
            node_kind = "agent" if i in confined else draw(st.sampled_from(["agent", "human", "webhook"]))
            node_id = b.nid(prefix, f"n{i}")
            sla = draw(st.integers(0, 3)) == 0
            b.node(node_id, node_kind, sla=sla)
            refs.append(("node", node_id))
            plans.append({"kind": "node", "id": node_id, "type": node_kind, "sla": sla})
        else:
            group_id = b.nid(prefix, f"g{i}")
            is_loop_source = i in loop_of_source
            policy = (
                "joinOnQuorum"
                if is_loop_source
                else draw(st.sampled_from(["waitAll", "joinOnQuorum", "cancelOnQuorum"]))
            )
            size = draw(st.integers(2 if policy == "cancelOnQuorum" else 1, 3))
            members = []
            for m in range(size):
                member_kind = "agent" if i in confined else draw(st.sampled_from(["agent", "agent", "human"]))
                member_id = b.nid(prefix, f"g{i}", f"m{m}")
                members.append((member_id, member_kind))
            # Own edges of members (reject routes) forbid an SLA there, except in joinOnQuorum groups.
            for member_id, member_kind in members:
                sla = draw(st.integers(0, 4)) == 0 and (policy == "joinOnQuorum" or member_kind != "human")
                b.node(member_id, member_kind, must_block=draw(st.booleans()), sla=sla)
            if policy == "cancelOnQuorum":
                quorum = draw(st.integers(1, size - 1))
            elif is_loop_source:
                quorum = draw(st.sampled_from([None, size]))
            else:
                quorum = draw(st.sampled_from([None, *range(1, size + 1)]))
            g = {"groupId": group_id, "memberNodeIds": [m for m, _ in members]}
            if draw(st.booleans()):
                g["expectedSteps"] = size
            if quorum is not None:
                g["quorum"] = quorum
            if policy != "waitAll" or draw(st.booleans()):
                g["onQuorumMet"] = policy
            limit = quorum if quorum is not None else size
            required = draw(st.lists(st.sampled_from(g["memberNodeIds"]), max_size=limit, unique=True))
            if required:
                g["requiredNodeIds"] = required
            if draw(st.integers(0, 3)) == 0:
                g["name"] = f"Group {group_id}"
            b.groups.append(g)
            refs.append(("group", group_id))
            plans.append({"kind": "group", "id": group_id, "policy": policy, "members": members})

    for i, plan in enumerate(plans):
        nxt = refs[i + 1] if i + 1 < len(plans) else None
        is_confined = i in confined
        if plan["kind"] == "node":
            source = ("node", plan["id"])
            is_human = plan["type"] == "human"
            routed = False
            if nxt is not None:
                routed = b.transition(source, nxt, human=is_human, needs_breach=plan["sla"], confined=is_confined)
            if i in loop_of_source:
                entry = refs[loop_of_source[i]]
                b.edge(source, entry, "reject", loop=draw(st.integers(1, 20)))
                if draw(st.booleans()):
                    b.edge(source, ("node", b.sink(b.nid(plan["id"], "exhausted"))), "exhausted")
            elif is_human or (not is_confined and draw(st.integers(0, 3)) == 0):
                b.edge(source, ("node", b.sink(b.nid(plan["id"], "rejected"))), "reject")
            if plan["sla"] and not routed:
                if draw(st.booleans()):
                    b.edge(source, ("node", b.sink(b.nid(plan["id"], "breach"))), "always")
                else:
                    b.edge(
                        source,
                        ("node", b.sink(b.nid(plan["id"], "breach"))),
                        "custom",
                        when=draw(st.sampled_from(STATUS_WHENS)),
                    )
            continue
        # A group stage.
        source = ("group", plan["id"])
        policy, members = plan["policy"], plan["members"]
        has_human = any(k == "human" for _, k in members)
        if nxt is not None:
            if policy == "joinOnQuorum" and draw(st.booleans()):
                for member_id, _ in members:  # members share their approve successors
                    b.edge(("node", member_id), nxt, "approve")
            else:
                roles = ["approve", "always"] + (["custom"] if policy != "joinOnQuorum" else [])
                role = draw(st.sampled_from(roles))
                when = draw(st.sampled_from(CUSTOM_WHENS)) if role == "custom" else None
                b.edge(source, nxt, role, when=when)
        if i in loop_of_source:  # a joinOnQuorum group with quorum == expectedSteps
            entry = refs[loop_of_source[i]]
            b.edge(source, entry, "reject", loop=draw(st.integers(1, 20)))
            if draw(st.booleans()):
                b.edge(source, ("node", b.sink(b.nid(plan["id"], "exhausted"))), "exhausted")
        elif has_human and policy == "waitAll":
            b.edge(source, ("node", b.sink(b.nid(plan["id"], "rejected"))), "reject")
        elif has_human:
            for member_id, member_kind in members:
                if member_kind == "human":
                    b.edge(("node", member_id), ("node", b.sink(b.nid(member_id, "rejected"))), "reject")

    # Edges into each stage: from the previous stage (built by the transitions above).


_DEF_IDS = st.from_regex(r"\A[a-z0-9][a-z0-9-]{2,20}\Z")


@st.composite
def valid_definitions(draw, max_chains: int = 2, max_stages: int = 6) -> dict:
    """A lint-clean definition create body (raw JSON dict)."""
    b = _Builder(draw, draw(st.sampled_from(["-", ".", ":", "_"])))
    for c in range(draw(st.integers(1, max_chains))):
        _chain(draw, b, f"c{c}", max_stages)
    body = {"definitionId": draw(_DEF_IDS), "name": draw(st.sampled_from(["Flow", "Review flow", "Ünïcode ✓"]))}
    if draw(st.booleans()):
        body["description"] = draw(st.sampled_from(["", "A generated flow."]))
    # Declaration and authored order are arbitrary: shuffle (one draw, not one per item).
    shuffle = random.Random(draw(_BITS)).shuffle
    for items in (b.nodes, b.edges, b.groups):
        shuffle(items)
    body["nodes"], body["edges"] = b.nodes, b.edges
    if b.groups or draw(st.booleans()):
        body["groups"] = b.groups if b.groups else draw(st.sampled_from([[], None]))
    if draw(st.integers(0, 3)) == 0:
        body["tags"] = draw(st.lists(st.sampled_from(["finance", "legal", "qa"]), max_size=3))
    if draw(st.integers(0, 3)) == 0:
        body["triggers"] = [{"triggerId": "on-upload", "eventName": "document.uploaded", "filters": {"ext": "pdf"}}]
    if draw(st.integers(0, 3)) == 0:
        body["custom"] = {"owner": "qa", "nested": {"list": [1, 2.5, None]}}
    if draw(st.integers(0, 4)) == 0:
        body["scope"] = {"level": "organization", "organizationId": "org-1"}
    if draw(st.integers(0, 3)) == 0:  # key order of the body is echoed as sent
        keys = list(body)
        shuffle(keys)
        body = {k: body[k] for k in keys}
    return body


# ----------------------------------------------------------------------------- arbitrary graphs

_IDS = ["a", "b", "c", "d", "e", "g1", "g2"]


@st.composite
def arbitrary_definitions(draw) -> dict:
    """Schema-valid bodies over a small id pool with random edges, groups and loops."""
    node_ids = draw(st.lists(st.sampled_from(_IDS), min_size=1, max_size=6))
    nodes = []
    for nid in node_ids:
        kind = draw(st.sampled_from(["agent", "human", "webhook", "none"]))
        if kind == "none":
            nodes.append({"nodeId": nid, "type": draw(st.sampled_from(["agent", "human", "webhook"]))})
        else:
            node = {"nodeId": nid, "type": kind, "config": _node_config(draw, kind)}
            if draw(st.integers(0, 3)) == 0:
                node["slaMs"] = 1000
            nodes.append(node)
    ref = st.sampled_from(_IDS) | st.builds(grp, st.sampled_from(_IDS)) | st.builds(nd, st.sampled_from(_IDS))
    whens = st.sampled_from(
        [json.dumps(w) for w in CUSTOM_WHENS + STATUS_WHENS]
        + ['{"op": "nope", "args": []}', "not json", '{"var": "output.x"}', "[1"]
    )
    edges = draw(
        st.lists(
            st.builds(
                lambda s, t, on, when, loop: {
                    k: v
                    for k, v in (("from", s), ("to", t), ("on", on), ("when", when), ("loop", loop))
                    if v is not None
                },
                ref,
                ref,
                st.none() | st.sampled_from(["approve", "reject", "always", "exhausted", "custom"]),
                st.none() | whens,
                st.none() | st.builds(lambda n: {"maxIterations": n}, st.integers(1, 20)),
            ),
            max_size=10,
        )
    )
    groups = draw(
        st.none()
        | st.lists(
            st.builds(
                lambda gid, members, quorum, expected, policy, required: {
                    k: v
                    for k, v in (
                        ("groupId", gid),
                        ("memberNodeIds", members),
                        ("quorum", quorum),
                        ("expectedSteps", expected),
                        ("onQuorumMet", policy),
                        ("requiredNodeIds", required),
                    )
                    if v is not None
                },
                st.sampled_from(_IDS),
                st.lists(st.sampled_from(_IDS), max_size=4),
                st.none() | st.integers(-1, 5),
                st.none() | st.integers(-1, 5),
                st.none() | st.sampled_from(["waitAll", "joinOnQuorum", "cancelOnQuorum"]),
                st.none() | st.lists(st.sampled_from(_IDS), max_size=3),
            ),
            max_size=3,
        )
    )
    return definition(nodes, edges, groups)


def text_ids(min_size: int = 1, max_size: int = 64) -> st.SearchStrategy:
    """Node/group ids allowed by the schema (letters, digits, ``- _ . :``, no ``__``)."""
    return st.text(string.ascii_letters + string.digits + "-_.:", min_size=min_size, max_size=max_size).filter(
        lambda s: "__" not in s
    )
