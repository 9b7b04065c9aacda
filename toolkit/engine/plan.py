"""Plan: everything the engine needs from one definition version, computed once.

The engine loop never touches pydantic models or networkx: :meth:`Plan.from_definition`
reads the validated :class:`~toolkit.model.Definition` (and the compiler's loop regions)
into plain ``__slots__`` records with every lookup the runtime needs — out-edges per source
with their parsed predicates, group and loop facts, the roots. A server caches one Plan per
(definition, version); the simulator builds one per run.

>>> from toolkit.model import Definition
>>> d = Definition.model_validate({"definitionId": "abc", "name": "x",
...     "nodes": [{"nodeId": "a", "type": "agent", "config": {"agentId": "w"}},
...               {"nodeId": "b", "type": "webhook"}],
...     "edges": [{"from": "a", "to": "b", "on": "approve"}]})
>>> plan = Plan.from_definition(d)
>>> plan.roots, [e.target_ref for e in plan.node_edges["a"]]
([('node', 'a')], ['b'])
"""

from __future__ import annotations

from typing import Any

from toolkit.compiler import is_loop_back
from toolkit.compiler import loops as compile_loops
from toolkit.model import Definition
from toolkit.model.definition import AgentConfig, AgentNode, HumanConfig, HumanNode, WebhookNode
from toolkit.predicates import Predicate, parse

__all__ = ["Plan", "NodePlan", "EdgePlan", "GroupPlan", "LoopPlan"]


class EdgePlan:
    """One authored forward edge. ``index`` is its position in the definition's ``edges``."""

    __slots__ = ("index", "role", "source_kind", "source_ref", "target_kind", "target_ref", "predicate", "reads_status")

    def __init__(
        self,
        index: int,
        role: str,
        source_kind: str,
        source_ref: str,
        target_kind: str,
        target_ref: str,
        when: str | None,
    ) -> None:
        self.index = index
        self.role = role
        self.source_kind = source_kind
        self.source_ref = source_ref
        self.target_kind = target_kind
        self.target_ref = target_ref
        self.predicate: Predicate | None = parse(when) if role == "custom" and when is not None else None
        # A breach routes only through `always` and custom edges that read the status (§5.3).
        paths: tuple[str, ...] | frozenset[str] = self.predicate.paths if self.predicate is not None else ()
        self.reads_status = any(p == "step" or p == "step.status" or p.startswith("step.status.") for p in paths)

    def __repr__(self) -> str:
        return (
            f"EdgePlan(#{self.index} {self.source_kind}:{self.source_ref} -{self.role}-> "
            f"{self.target_kind}:{self.target_ref})"
        )


class LoopPlan:
    """A reject loop-back region (semantics §4 ``loops``, §5.6)."""

    __slots__ = (
        "loop_id",
        "source_kind",
        "source_ref",
        "entry_kind",
        "entry_ref",
        "entry_node",
        "body",
        "max_iterations",
        "exhausted_edge",
        "edge_index",
    )

    # Set by Plan._loops (annotations only: the slots hold the values).
    loop_id: str
    source_kind: str
    source_ref: str
    entry_kind: str
    entry_ref: str
    entry_node: str
    body: frozenset[str]
    max_iterations: int
    exhausted_edge: EdgePlan | None
    edge_index: int

    def __repr__(self) -> str:
        return f"LoopPlan({self.loop_id}, max={self.max_iterations})"


class GroupPlan:
    """A parallel group: members, quorum policy and the edges it owns."""

    __slots__ = (
        "group_id",
        "members",
        "expected",
        "quorum",
        "policy",
        "required",
        "edges",
        "member_successor_edges",
        "loop_back",
    )

    # Set by Plan.from_definition and Plan._edges / _loops (annotations only).
    group_id: str
    members: tuple[str, ...]
    expected: int
    quorum: int
    policy: str
    required: tuple[str, ...]
    edges: tuple[EdgePlan, ...]
    member_successor_edges: tuple[EdgePlan, ...]
    loop_back: LoopPlan | None

    def __repr__(self) -> str:
        return f"GroupPlan({self.group_id}, {self.policy}, quorum={self.quorum}/{self.expected})"


class NodePlan:
    """A node with its config flattened into the fields the runtime reads."""

    __slots__ = (
        "node_id",
        "type",
        "config",
        "sla_ms",
        "group_id",
        "loop_id",
        "loop_back",
        "in_join_group",
        # agent
        "agent_id",
        "blocking",
        "required",
        "expected",
        "require_non_empty",
        "max_runtime_ms",
        "mock_output",
        "external",
        # human
        "reviewers",
        "reviewer_ids",
        "reviewer_set",
        "mandatory_set",
        "mandatory_count",
        "reviewer_emails",
        "comment_body",
    )

    def __init__(self, node: AgentNode | HumanNode | WebhookNode) -> None:
        self.node_id: str = node.node_id
        self.type: str = node.type
        self.sla_ms = node.sla_ms
        self.group_id: str | None = None
        self.loop_id: str | None = None
        self.loop_back: LoopPlan | None = None
        self.in_join_group = False
        cfg = node.config
        if cfg is None and node.type != "webhook":
            raise ValueError(f"node {node.node_id!r} has no config (lint: node-missing-config)")
        self.config: dict[str, Any] = cfg.model_dump(by_alias=True, mode="json") if cfg is not None else {}
        # Agent fields: None on other nodes.
        self.agent_id: str | None = None
        self.blocking: bool | None = None
        self.required: int | None = None
        self.expected: int | None = None
        self.require_non_empty = self.external = False
        self.max_runtime_ms: int | None = None
        self.mock_output: Any = None  # authored JSON, any shape
        # Human fields: empty on other nodes.
        self.reviewers: tuple[tuple[str, bool], ...] = ()
        self.reviewer_ids: tuple[str, ...] = ()
        self.reviewer_set: frozenset[str] = frozenset()
        self.mandatory_set: frozenset[str] = frozenset()
        self.mandatory_count = 0
        self.reviewer_emails: list[str] = []
        self.comment_body: str | None = None
        if isinstance(cfg, AgentConfig):  # node.type == "agent", which the config's type follows
            self.agent_id = cfg.agent_id
            self.blocking = cfg.blocking
            self.required = cfg.required_successes
            self.expected = cfg.expected_resolutions
            self.require_non_empty = cfg.require_non_empty_output
            self.max_runtime_ms = cfg.agent_max_runtime_ms
            self.mock_output = self.config.get("mockOutput")
            self.external = cfg.external
        elif isinstance(cfg, HumanConfig):
            self.reviewers = tuple((r.user_id, r.mandatory) for r in cfg.reviewer_list)
            self.reviewer_ids = tuple(u for u, _ in self.reviewers)
            self.reviewer_set = frozenset(self.reviewer_ids)
            self.mandatory_set = frozenset(u for u, m in self.reviewers if m)
            self.mandatory_count = len(self.mandatory_set)
            self.reviewer_emails = list(cfg.reviewer_emails)
            self.comment_body = cfg.comment_body

    def __repr__(self) -> str:
        return f"NodePlan({self.node_id}, {self.type})"


class Plan:
    """The runtime's read-only view of one definition version.

    Attributes: ``nodes`` (id -> NodePlan, declared order), ``node_edges`` / ``group_edges``
    (source id -> forward EdgePlans in authored order, loop-backs excluded), ``groups``
    (id -> GroupPlan), ``loops`` (loopId -> LoopPlan), ``roots`` (``("node", id)`` or
    ``("group", id)`` units in declared order: root group members start together),
    ``regex_ops`` (how many ``regex`` ops all its predicates hold: a host rehearses commands
    of a plan with any, see :class:`~toolkit.work.Work`).
    """

    __slots__ = (
        "definition",
        "definition_id",
        "version",
        "nodes",
        "node_edges",
        "group_edges",
        "groups",
        "loops",
        "roots",
        "regex_ops",
    )

    # Set by from_definition and its helpers (annotations only: the slots hold the values).
    definition: Definition
    definition_id: str
    version: int
    nodes: dict[str, NodePlan]
    node_edges: dict[str, tuple[EdgePlan, ...]]
    group_edges: dict[str, tuple[EdgePlan, ...]]
    groups: dict[str, GroupPlan]
    loops: dict[str, LoopPlan]
    roots: list[tuple[str, str]]

    @classmethod
    def from_definition(cls, definition: Definition | dict[str, Any], version: int = 1) -> Plan:
        model = definition if isinstance(definition, Definition) else Definition.model_validate(definition)
        self = cls()
        self.definition = model
        self.definition_id = model.definition_id
        self.version = version
        self.nodes = {n.node_id: NodePlan(n) for n in model.nodes}
        self.groups = {}
        for g in model.group_list:
            gp = GroupPlan()
            gp.group_id = g.group_id
            gp.members = tuple(g.member_node_ids)
            gp.expected = len(gp.members)
            gp.quorum = min(g.quorum_value, gp.expected) if gp.expected else 0
            gp.policy = g.on_quorum_met
            gp.required = tuple(g.required_node_ids)
            gp.edges = ()
            gp.member_successor_edges = ()
            gp.loop_back = None
            self.groups[g.group_id] = gp
            for m in gp.members:
                node = self.nodes.get(m)
                if node is not None and node.group_id is None:
                    node.group_id = g.group_id
                    node.in_join_group = gp.policy == "joinOnQuorum"
        self._check_refs(model)
        self._edges(model)
        self._loops(model)
        self._roots(model)
        return self

    # ------------------------------------------------------------ construction helpers

    def _check_refs(self, definition: Definition) -> None:
        """The engine runs lint-clean definitions; refuse dangling references up front
        (the linter's ``dangling-edge`` / ``group-member-missing``) rather than fail mid-run."""
        for gp in self.groups.values():
            for m in gp.members:
                if m not in self.nodes:
                    raise ValueError(f"group {gp.group_id!r} names unknown member {m!r}")
        for index, edge in enumerate(definition.edges):
            for end in (edge.from_, edge.to):
                known = self.nodes if end.kind == "node" else self.groups
                if end.ref not in known:
                    raise ValueError(f"edges[{index}] refers to unknown {end.kind} {end.ref!r}")

    def _edges(self, definition: Definition) -> None:
        node_edges: dict[str, list[EdgePlan]] = {nid: [] for nid in self.nodes}
        group_edges: dict[str, list[EdgePlan]] = {gid: [] for gid in self.groups}
        for index, edge in enumerate(definition.edges):
            if is_loop_back(edge):
                continue
            ep = EdgePlan(index, edge.on, edge.from_.kind, edge.from_.ref, edge.to.kind, edge.to.ref, edge.when)
            bucket = node_edges if ep.source_kind == "node" else group_edges
            bucket.setdefault(ep.source_ref, []).append(ep)
        self.node_edges = {k: tuple(v) for k, v in node_edges.items()}
        self.regex_ops = sum(
            e.predicate.regex_ops
            for edges in (*node_edges.values(), *group_edges.values())
            for e in edges
            if e.predicate is not None
        )
        self.group_edges = {k: tuple(v) for k, v in group_edges.items()}
        for gp in self.groups.values():
            gp.edges = self.group_edges.get(gp.group_id, ())
            # joinOnQuorum successors: the members' approve/always edges (§5.5).
            member_edges = [
                e for m in gp.members for e in self.node_edges.get(m, ()) if e.role in ("approve", "always")
            ]
            gp.member_successor_edges = tuple(sorted(member_edges, key=lambda e: e.index))

    def _loops(self, definition: Definition) -> None:
        self.loops = {}
        loop_edges = [(i, e) for i, e in enumerate(definition.edges) if is_loop_back(e)]
        for (index, edge), region in zip(loop_edges, compile_loops(definition)):
            lp = LoopPlan()
            lp.loop_id = region["loopId"]
            lp.source_kind, lp.source_ref = edge.from_.kind, edge.from_.ref
            lp.entry_kind, lp.entry_ref = edge.to.kind, edge.to.ref
            lp.max_iterations = region["maxIterations"]
            lp.edge_index = index
            body: set[str] = set()
            for ref in region["bodyNodeIds"]:
                body.update(self.groups[ref].members if ref in self.groups else (ref,))
            if lp.entry_kind == "group" and lp.entry_ref in self.groups:
                body.update(self.groups[lp.entry_ref].members)
                lp.entry_node = self.groups[lp.entry_ref].members[0]
            else:
                lp.entry_node = lp.entry_ref
            lp.body = frozenset(body)
            source_edges = (self.node_edges if lp.source_kind == "node" else self.group_edges).get(lp.source_ref, ())
            lp.exhausted_edge = next((e for e in source_edges if e.role == "exhausted"), None)
            if lp.loop_id in self.loops:
                continue
            self.loops[lp.loop_id] = lp
            if lp.source_kind == "node" and lp.source_ref in self.nodes:
                node = self.nodes[lp.source_ref]
                node.loop_back = node.loop_back or lp
            elif lp.source_kind == "group" and lp.source_ref in self.groups:
                gp = self.groups[lp.source_ref]
                gp.loop_back = gp.loop_back or lp
        # Body membership, in declared loop order: a node belongs to at most one loop (lint).
        for lp in self.loops.values():
            for nid in lp.body:
                member = self.nodes.get(nid)
                if member is not None and member.loop_id is None:
                    member.loop_id = lp.loop_id

    def _roots(self, definition: Definition) -> None:
        targeted: set[str] = set()
        for edges in (*self.node_edges.values(), *self.group_edges.values()):
            for e in edges:
                if e.target_kind == "group":
                    targeted.update(self.groups[e.target_ref].members if e.target_ref in self.groups else ())
                else:
                    targeted.add(e.target_ref)
        roots: list[tuple[str, str]] = []
        seen_groups: set[str] = set()
        for nid, node in self.nodes.items():
            if nid in targeted:
                continue
            if node.group_id is not None:
                if node.group_id not in seen_groups:
                    seen_groups.add(node.group_id)
                    roots.append(("group", node.group_id))
            else:
                roots.append(("node", nid))
        self.roots = roots

    def __repr__(self) -> str:
        return f"Plan({self.definition_id} v{self.version}, {len(self.nodes)} nodes)"
