"""Names a person reads in place of internal ids: nodes, groups, loops, failure reasons.

Step ids (``step_draft_1767225600000_95aeee__to__legal-review``) and loop ids
(``loop_review-board__to__draft``) are generated; a definition gives its nodes and groups
names. Every picture and table shows the name and keeps the id for a tooltip.

>>> from toolkit import examples
>>> names = Names(examples.load("parallel-review"))
>>> names.node("legal-review"), names.node("not-declared")
('Legal review', 'not-declared')
>>> names.reason("loop-exhausted:loop_review-board__to__draft")
'rejected 3 times: Legal and brand review → Draft campaign copy'
>>> names.reason("step-failed:publish"), names.reason(None)
('Publish to the website failed', '')
>>> names.step("step_draft_1767225600000_95aeee__to__legal-review")
'Legal review'
"""

from __future__ import annotations

from toolkit.compiler import is_loop_back, loop_id
from toolkit.viz.definition import as_definition
from toolkit.viz.replay import node_of_step_id

__all__ = ["Names"]

# ``<code>:<nodeId>`` failure reasons (semantics §5.8) and what they say about the node.
_NODE_REASONS = {"step-failed": "failed", "step-breached": "missed its SLA", "step-rejected": "rejected"}


class Names:
    """The names of one definition's nodes, groups and loops (an id without a name is its
    own name)."""

    def __init__(self, definition):
        d = as_definition(definition)
        self._nodes = {n.node_id: n.name or n.node_id for n in d.nodes}
        self._groups = {g.group_id: g.name or g.group_id for g in d.group_list}
        self._loops: dict[str, tuple[str, str, int]] = {}
        for edge in d.edges:
            if is_loop_back(edge):
                source = edge.from_.ref
                source_name = self._groups.get(source, source) if edge.from_.kind == "group" else self.node(source)
                self._loops[loop_id(source, edge.to.ref)] = (
                    source_name,
                    self.node(edge.to.ref),
                    edge.loop.max_iterations,
                )

    def node(self, node_id: str | None) -> str:
        """The node's name (its id when it has none or is not declared)."""
        return self._nodes.get(node_id or "", node_id or "")

    def group(self, group_id: str | None) -> str:
        return self._groups.get(group_id or "", group_id or "")

    def step(self, step_id: str | None) -> str:
        """The name of the node a step id belongs to (the id itself when it cannot be told;
        ``""`` for no step id, as a table's empty cell gives)."""
        if not isinstance(step_id, str) or not step_id:
            return ""
        node_id = node_of_step_id(step_id)
        return self.node(node_id) if node_id else step_id

    def loop(self, loop_id_: str) -> str:
        """``source → entry`` by name, e.g. ``Legal and brand review → Draft campaign copy``."""
        found = self._loops.get(loop_id_)
        return f"{found[0]} → {found[1]}" if found else loop_id_

    def reason(self, reason: str | None) -> str:
        """A failure reason in words (``loop-exhausted:<loopId>`` names the loop and its
        attempts; ``step-failed:<nodeId>`` the node); unknown codes are kept as they are."""
        if not reason:
            return ""
        code, _, ref = reason.partition(":")
        if code == "loop-exhausted" and ref in self._loops:
            source, entry, attempts = self._loops[ref]
            return f"rejected {attempts} times: {source} → {entry}"
        if code in _NODE_REASONS and ref in self._nodes:
            return f"{self.node(ref)} {_NODE_REASONS[code]}"
        return reason
