"""Edits of a raw definition dict (a ``definitions/create`` body), one function per gesture.

The Designer keeps the definition as the JSON it will export and changes it only through
these functions, so what it exports is exactly what it shows. They keep references
consistent (renaming or removing a node updates the edges and groups that name it) and
keep each object's keys in the order the API documents them. They never validate: the
linter judges the result.

Endpoints are written the way the examples write them: a node as its bare id, a group as
``{"kind": "group", "groupId": ...}``. Python callers may pass a node id, a group as
``("group", id)``, or either wire form.

>>> raw = {"definitionId": "demo-flow", "name": "Demo", "nodes": [], "edges": []}
>>> _ = add_node(raw, "draft", "agent")
>>> _ = add_node(raw, "review", "human", config={"reviewers": [{"userId": "ann", "mandatory": True}]})
>>> add_edge(raw, "draft", "review", on="approve")
0
>>> rename_node(raw, "review", "legal-review"); raw["edges"]
[{'from': 'draft', 'to': 'legal-review', 'on': 'approve'}]
>>> remove_node(raw, "draft"); raw["edges"]
1
[]
"""

from __future__ import annotations

import copy
import re
from typing import Any

from toolkit.model.base import ID_PATTERN

__all__ = [
    "endpoint",
    "endpoint_key",
    "default_config",
    "add_node",
    "update_node",
    "rename_node",
    "remove_node",
    "set_reviewers",
    "add_edge",
    "update_edge",
    "remove_edge",
    "add_group",
    "update_group",
    "remove_group",
    "new_definition",
    "set_info",
    "node_ids",
    "group_ids",
    "find_node",
    "find_group",
    "check_id",
    "move_node",
    "clear_layout",
]

TOP_KEYS = (
    "definitionId",
    "name",
    "description",
    "tags",
    "triggers",
    "custom",
    "scope",
    "organizationId",
    "documentId",
    "nodes",
    "groups",
    "edges",
)
NODE_KEYS = ("nodeId", "type", "name", "description", "slaMs", "config")
EDGE_KEYS = ("from", "to", "on", "when", "loop")
GROUP_KEYS = (
    "groupId",
    "name",
    "description",
    "memberNodeIds",
    "expectedSteps",
    "quorum",
    "onQuorumMet",
    "requiredNodeIds",
)

# snake_case spellings accepted by the update functions
_ALIASES = {
    "node_id": "nodeId",
    "sla_ms": "slaMs",
    "group_id": "groupId",
    "member_node_ids": "memberNodeIds",
    "members": "memberNodeIds",
    "expected_steps": "expectedSteps",
    "on_quorum_met": "onQuorumMet",
    "policy": "onQuorumMet",
    "required_node_ids": "requiredNodeIds",
    "required": "requiredNodeIds",
    "source": "from",
    "from_": "from",
    "target": "to",
    "role": "on",
}


def _ordered(obj: dict, keys: tuple[str, ...]) -> dict:
    """``obj`` with ``keys`` first (in that order), other keys after, in place."""
    items = [(k, obj[k]) for k in keys if k in obj] + [(k, v) for k, v in obj.items() if k not in keys]
    obj.clear()
    obj.update(items)
    return obj


def _apply(obj: dict, changes: dict, keys: tuple[str, ...]) -> dict:
    """Set each change (``None`` removes the key) and restore the documented key order."""
    for key, value in changes.items():
        key = _ALIASES.get(key, key)
        if value is None:
            obj.pop(key, None)
        else:
            obj[key] = value
    return _ordered(obj, keys)


_ID = re.compile(ID_PATTERN)


def check_id(value: str, what: str = "node") -> str:
    """``value`` if it can be a node or group id (semantics §3), else a ValueError that says
    which characters are allowed: refused when typed, not later as a schema message."""
    if not value:
        raise ValueError(f"Give the {what} an id.")
    if not _ID.fullmatch(value):
        raise ValueError(
            f"{value!r} cannot be a {what} id: use letters, digits and . _ : - only (no spaces), at most 64 characters."
        )
    if "__" in value:
        raise ValueError(f"{value!r} cannot be a {what} id: '__' is reserved (it separates the parts of step ids).")
    return value


def new_definition(definition_id: str = "my-workflow", name: str = "My workflow") -> dict:
    """An empty definition: no nodes yet (the linter will say a definition needs one)."""
    return {"definitionId": definition_id, "name": name, "nodes": [], "edges": []}


def set_info(
    raw: dict, definition_id: str | None = None, name: str | None = None, description: str | None = None
) -> dict:
    """Set the definition's id, name or description (``None`` leaves a field; an empty
    description removes it)."""
    for key, value in (("definitionId", definition_id), ("name", name), ("description", description)):
        if value is not None:
            if value == "" and key == "description":
                raw.pop(key, None)
            else:
                raw[key] = value
    return _ordered(raw, TOP_KEYS)


def node_ids(raw: dict) -> list[str | None]:
    """The draft's node ids, in order (None for a node given without one)."""
    return [n.get("nodeId") for n in raw.get("nodes") or [] if isinstance(n, dict)]


def group_ids(raw: dict) -> list[str | None]:
    """The draft's group ids, in order (None for a group given without one)."""
    return [g.get("groupId") for g in raw.get("groups") or [] if isinstance(g, dict)]


def _layout(raw: dict) -> dict:
    """The dragged positions (``custom.layout``), or an empty dict when there are none."""
    custom = raw.get("custom")
    layout = custom.get("layout") if isinstance(custom, dict) else None
    return layout if isinstance(layout, dict) else {}


def move_node(raw: dict, node_id: str, x: float, y: float) -> dict:
    """Keep a node where a person dragged it: ``custom.layout[nodeId] = {"x", "y"}`` (its
    centre in the picture's points, y downward). Other ``custom`` keys are left alone."""
    find_node(raw, node_id)
    custom = found if isinstance(found := raw.get("custom"), dict) else {}
    layout = found if isinstance(found := custom.get("layout"), dict) else {}
    layout[node_id] = {"x": round(float(x), 1), "y": round(float(y), 1)}
    custom["layout"] = layout
    raw["custom"] = custom
    _ordered(raw, TOP_KEYS)
    return layout[node_id]


def clear_layout(raw: dict) -> None:
    """Drop every dragged position (and ``custom`` when nothing else is in it)."""
    custom = raw.get("custom")
    if isinstance(custom, dict):
        custom.pop("layout", None)
        if not custom:
            del raw["custom"]


def find_node(raw: dict, node_id: str) -> dict:
    for node in raw.get("nodes") or []:
        if node.get("nodeId") == node_id:
            return node
    raise KeyError(f"There is no node {node_id!r} (nodes: {', '.join(map(str, node_ids(raw))) or 'none'}).")


def find_group(raw: dict, group_id: str) -> dict:
    for group in raw.get("groups") or []:
        if group.get("groupId") == group_id:
            return group
    raise KeyError(f"There is no group {group_id!r} (groups: {', '.join(map(str, group_ids(raw))) or 'none'}).")


# ---------------------------------------------------------------- endpoints


def endpoint(value: Any) -> str | dict:
    """The wire form of an endpoint given as a node id, ``("group", id)``, ``("node", id)``
    or a wire dict."""
    if isinstance(value, str):
        return value
    if isinstance(value, tuple) and len(value) == 2 and value[0] in ("node", "group"):
        return value[1] if value[0] == "node" else {"kind": "group", "groupId": value[1]}
    if isinstance(value, dict) and value.get("kind") == "node" and "nodeId" in value:
        return value["nodeId"]
    if isinstance(value, dict) and value.get("kind") == "group" and "groupId" in value:
        return {"kind": "group", "groupId": value["groupId"]}
    raise ValueError(f"an endpoint is a node id, ('group', groupId) or a wire endpoint dict, not {value!r}")


def endpoint_key(value: Any) -> tuple[str, str | None]:
    """``("node", id)`` or ``("group", id)`` for any endpoint form (``(kind, None)`` if unreadable)."""
    if isinstance(value, str):
        return "node", value
    if isinstance(value, tuple) and len(value) == 2:
        return value
    if isinstance(value, dict):
        kind = value.get("kind", "node")
        return kind, value.get("groupId" if kind == "group" else "nodeId")
    return "node", None


# ---------------------------------------------------------------- nodes


def default_config(node_type: str, node_id: str) -> dict:
    """A starting config that validates: one mandatory placeholder reviewer for a human node,
    an agent named after the node, an empty webhook config."""
    if node_type == "human":
        return {"reviewers": [{"userId": "reviewer@example.com", "mandatory": True}]}
    if node_type == "agent":
        return {"agentId": node_id}
    return {}


def add_node(
    raw: dict,
    node_id: str,
    node_type: str = "human",
    *,
    name: str | None = None,
    description: str | None = None,
    sla_ms: int | None = None,
    config: dict | None = None,
) -> dict:
    """Append a node (``config`` defaults to :func:`default_config`); returns it."""
    check_id(node_id, "node")
    if node_id in node_ids(raw):
        raise ValueError(f"There is already a node {node_id!r}.")
    node = {"nodeId": node_id, "type": node_type}
    _apply(
        node,
        {
            "name": name or None,
            "description": description or None,
            "slaMs": sla_ms or None,
            "config": copy.deepcopy(config) if config is not None else default_config(node_type, node_id),
        },
        NODE_KEYS,
    )
    raw.setdefault("nodes", []).append(node)
    _ordered(raw, TOP_KEYS)
    return node


def update_node(raw: dict, node_id: str, **changes: Any) -> dict:
    """Change fields of a node (camelCase or snake_case; ``None`` removes an optional field).
    A new ``type`` without a ``config`` gets that type's default config; a new ``nodeId``
    renames the node everywhere."""
    node = find_node(raw, node_id)
    changes = {_ALIASES.get(k, k): v for k, v in changes.items()}
    new_id = changes.pop("nodeId", None)
    if "type" in changes and changes["type"] != node.get("type") and "config" not in changes:
        changes["config"] = default_config(changes["type"], node_id)
    _apply(node, changes, NODE_KEYS)
    if new_id is not None and new_id != node_id:
        rename_node(raw, node_id, new_id)
    return node


def rename_node(raw: dict, old: str, new: str) -> None:
    """Rename a node and every reference to it (edge endpoints, group members)."""
    check_id(new, "node")
    if new in node_ids(raw):
        raise ValueError(f"There is already a node {new!r}.")
    find_node(raw, old)["nodeId"] = new
    layout = _layout(raw)
    if old in layout:
        layout[new] = layout.pop(old)
    for edge in raw.get("edges") or []:
        for side in ("from", "to"):
            end = edge.get(side)
            if end == old:
                edge[side] = new
            elif isinstance(end, dict) and end.get("kind", "node") == "node" and end.get("nodeId") == old:
                end["nodeId"] = new
    for group in raw.get("groups") or []:
        for key in ("memberNodeIds", "requiredNodeIds"):
            if key in group:
                group[key] = [new if m == old else m for m in group[key]]


def remove_node(raw: dict, node_id: str) -> int:
    """Remove a node, the edges that touch it and its group memberships; returns how many
    edges went with it."""
    node = find_node(raw, node_id)
    raw["nodes"].remove(node)
    if node_id in _layout(raw):
        del _layout(raw)[node_id]
        if not _layout(raw):
            clear_layout(raw)
    before = len(raw.get("edges") or [])
    raw["edges"] = [
        e
        for e in raw.get("edges") or []
        if ("node", node_id) not in (endpoint_key(e.get("from")), endpoint_key(e.get("to")))
    ]
    for group in raw.get("groups") or []:
        for key in ("memberNodeIds", "requiredNodeIds"):
            if key in group:
                group[key] = [m for m in group[key] if m != node_id]
        if isinstance(group.get("expectedSteps"), int) and group["expectedSteps"] > len(group["memberNodeIds"]):
            group["expectedSteps"] = len(group["memberNodeIds"])
    return before - len(raw["edges"])


def set_reviewers(raw: dict, node_id: str, reviewers) -> dict:
    """Set a human node's reviewers from ``[(userId, mandatory), ...]``, ``[userId, ...]``
    (all mandatory) or reviewer dicts; replaces legacy ``reviewerIds``."""
    node = find_node(raw, node_id)
    out = []
    for r in reviewers:
        if isinstance(r, str):
            out.append({"userId": r, "mandatory": True})
        elif isinstance(r, dict):
            out.append({"userId": r.get("userId"), "mandatory": bool(r.get("mandatory", True))})
        else:
            user_id, mandatory = r
            out.append({"userId": user_id, "mandatory": bool(mandatory)})
    config = node.setdefault("config", {})
    config.pop("reviewerIds", None)
    config["reviewers"] = out
    return node


# ---------------------------------------------------------------- edges


def _edge_changes(changes: dict) -> dict:
    changes = {_ALIASES.get(k, k): v for k, v in changes.items()}
    for side in ("from", "to"):
        if changes.get(side) is not None:
            changes[side] = endpoint(changes[side])
    if "max_iterations" in changes:
        n = changes.pop("max_iterations")
        changes["loop"] = {"maxIterations": int(n)} if n else None
    return changes


def add_edge(
    raw: dict, source, target, on: str = "always", *, when: str | None = None, max_iterations: int | None = None
) -> int:
    """Append an edge; ``max_iterations`` makes it a loop-back. Returns its index."""
    edge = _apply(
        {},
        _edge_changes({"from": source, "to": target, "on": on, "when": when, "max_iterations": max_iterations}),
        EDGE_KEYS,
    )
    raw.setdefault("edges", []).append(edge)
    _ordered(raw, TOP_KEYS)
    return len(raw["edges"]) - 1


def update_edge(raw: dict, index: int, **changes: Any) -> dict:
    """Change an edge: ``source``/``target`` (or ``from``/``to``), ``on``, ``when``,
    ``max_iterations`` (0 or ``None`` removes the loop); ``None`` removes ``when``."""
    edge = raw["edges"][index]
    return _apply(edge, _edge_changes(changes), EDGE_KEYS)


def remove_edge(raw: dict, index: int) -> dict:
    return raw["edges"].pop(index)


# ---------------------------------------------------------------- groups


def add_group(
    raw: dict,
    group_id: str,
    members=(),
    *,
    policy: str = "waitAll",
    quorum: int | None = None,
    required=(),
    name: str | None = None,
) -> dict:
    """Append a group of ``members`` (node ids) with its quorum policy; returns it."""
    check_id(group_id, "group")
    if group_id in group_ids(raw):
        raise ValueError(f"There is already a group {group_id!r}.")
    group = _apply(
        {"groupId": group_id},
        {
            "name": name or None,
            "memberNodeIds": list(members),
            "quorum": quorum,
            "onQuorumMet": policy,
            "requiredNodeIds": list(required) or None,
        },
        GROUP_KEYS,
    )
    raw.setdefault("groups", []).append(group)
    _ordered(raw, TOP_KEYS)
    return group


def update_group(raw: dict, group_id: str, **changes: Any) -> dict:
    """Change a group (``members``, ``policy``, ``quorum``, ``required``, ``name`` or the
    wire names; ``None`` removes an optional field; a new ``groupId`` renames it in edges
    too). A stated ``expectedSteps`` follows the member count when it matched it before."""
    group = find_group(raw, group_id)
    changes = {_ALIASES.get(k, k): v for k, v in changes.items()}
    new_id = changes.pop("groupId", None)
    if "memberNodeIds" in changes:
        members = list(changes["memberNodeIds"] or [])
        changes["memberNodeIds"] = members
        if group.get("expectedSteps") == len(group.get("memberNodeIds") or []):
            changes.setdefault("expectedSteps", len(members))
        if "requiredNodeIds" not in changes and group.get("requiredNodeIds"):
            kept = [m for m in group["requiredNodeIds"] if m in members]
            changes["requiredNodeIds"] = kept or None
    if "requiredNodeIds" in changes and not changes["requiredNodeIds"]:
        changes["requiredNodeIds"] = None
    _apply(group, changes, GROUP_KEYS)
    if new_id is not None and new_id != group_id:
        check_id(new_id, "group")
        if new_id in group_ids(raw):
            raise ValueError(f"There is already a group {new_id!r}.")
        group["groupId"] = new_id
        for edge in raw.get("edges") or []:
            for side in ("from", "to"):
                if endpoint_key(edge.get(side)) == ("group", group_id):
                    edge[side] = endpoint(("group", new_id))
    return group


def remove_group(raw: dict, group_id: str) -> int:
    """Remove a group and the edges from or to it; returns how many edges went with it."""
    raw["groups"].remove(find_group(raw, group_id))
    if not raw["groups"]:
        del raw["groups"]
    before = len(raw.get("edges") or [])
    raw["edges"] = [
        e
        for e in raw.get("edges") or []
        if ("group", group_id) not in (endpoint_key(e.get("from")), endpoint_key(e.get("to")))
    ]
    return before - len(raw["edges"])
