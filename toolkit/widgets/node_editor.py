"""The Designer's node editor: the list of nodes, add/remove, and a form per node type
(reviewers with mandatory flags; agent options; webhook URL; SLA)."""

from __future__ import annotations

import json

import ipywidgets as w

from toolkit.widgets import edits
from toolkit.widgets.forms import DESC, NODE_TYPES, Editor, button, text_field, wide
from toolkit.widgets.panes import message_html

__all__ = ["NodeEditor"]


class NodeEditor(Editor):
    kind = "node"

    def __init__(self, designer):
        super().__init__(designer)
        self.list = w.Select(rows=6, layout=wide())
        self.new_id = w.Text(placeholder="new node id, e.g. legal-review", layout=w.Layout(width="220px"))
        self.new_type = w.Dropdown(options=NODE_TYPES, layout=w.Layout(width="100px"))
        self.add = button("Add node", "add a node of this type", "primary")
        self.remove = button("Remove node", "remove the selected node and its edges", "danger")
        self.node_id = text_field("nodeId")
        self.name = text_field("name", "shown in the picture")
        self.type = w.Dropdown(description="type", options=NODE_TYPES, style=DESC)
        self.sla_hours = w.BoundedFloatText(
            description="SLA (hours)", min=0, max=1e6, step=1, style=DESC, tooltip="0 = no SLA"
        )
        # human
        self.reviewer_rows = w.VBox()
        self.add_reviewer = button("+ reviewer")
        self.human_box = w.VBox(
            [w.HTML("<b>Reviewers</b> (✓ = mandatory)"), self.reviewer_rows, w.HBox([self.add_reviewer])]
        )
        # agent
        self.agent_id = text_field("agentId")
        self.blocking = w.Checkbox(description="blocking (waits for resolutions)", indent=False)
        self.resolution_policy = w.Dropdown(
            description="resolutionPolicy", options=("allResolved", "minResolved"), style=DESC
        )
        self.min_count = w.BoundedIntText(description="minCount", min=1, max=100, value=1, style=DESC)
        self.expected = w.BoundedIntText(
            description="expected", min=1, max=100, value=1, style=DESC, tooltip="expectedResolutions"
        )
        self.blocking_box = w.VBox([self.resolution_policy, self.expected, self.min_count])
        self.mock_output = w.Textarea(
            description="mockOutput",
            placeholder='{"decision": "approve"}',
            continuous_update=False,
            style=DESC,
            layout=w.Layout(width="95%", height="80px"),
        )
        self.mock_status = w.HTML()
        self.agent_box = w.VBox([self.agent_id, self.blocking, self.blocking_box, self.mock_output, self.mock_status])
        # webhook
        self.url = text_field("url", "https://…")
        self.webhook_box = w.VBox([self.url])
        self.config_box = w.VBox()
        self.form = w.VBox([self.node_id, self.name, self.type, self.sla_hours, self.config_box])
        self.widget = w.VBox(
            [
                self.list,
                w.HBox([self.new_id, self.new_type, self.add]),
                self.message,
                w.HBox([self.remove]),
                self.ask_row,
                self.form,
            ]
        )

        self.list.add_class("collab-node-list")
        self.list.observe(self._picked, names="value")
        self.add.on_click(lambda _: self.run(self._add))
        self.remove.on_click(lambda _: self.run(self._remove))
        self.add_reviewer.on_click(lambda _: self.run(self._add_reviewer))
        self._on(self.node_id, self._rename)
        self._on(self.name, lambda: self._update(name=self.name.value.strip() or None))
        self._on(self.type, lambda: self._update(type=self.type.value))
        self._on(self.sla_hours, lambda: self._update(slaMs=round(self.sla_hours.value * 3_600_000) or None))
        for widget in (self.agent_id, self.blocking, self.resolution_policy, self.min_count, self.expected):
            self._on(widget, self._agent_changed)
        self._on(self.mock_output, self._mock_changed)
        self._on(self.url, lambda: self._config(url=self.url.value.strip() or None))

    @property
    def selected(self) -> str | None:
        return self.list.value

    def _node(self) -> dict | None:
        try:
            return edits.find_node(self.raw, self.selected) if self.selected is not None else None
        except KeyError:
            return None

    def _add(self) -> None:
        node_id = self.new_id.value.strip()
        self.designer.add_node(node_id, self.new_type.value)
        self.new_id.value = ""
        self.select(node_id)

    def _remove(self) -> None:
        node_id = self.selected
        if node_id is None:
            return
        edges = sum(
            1
            for e in self.raw.get("edges") or []
            if ("node", node_id) in (edits.endpoint_key(e.get("from")), edits.endpoint_key(e.get("to")))
        )
        if edges:
            self.ask(
                f"Remove {node_id} and its {edges} edge{'s' * (edges != 1)}?",
                lambda: self.designer.remove_node(node_id),
            )
        else:
            self.designer.remove_node(node_id)

    def select(self, node_id: str) -> None:
        self.list.value = node_id

    def _rename(self) -> None:
        new = self.node_id.value.strip()
        old = self.selected
        if new and old is not None and new != old:
            self.designer.update_node(old, nodeId=new)
            self.select(new)

    def _update(self, **changes) -> None:
        if self.selected is not None:
            self.designer.update_node(self.selected, **changes)

    def _config(self, **changes) -> None:
        node = self._node()
        if node is None:
            return
        config = dict(node.get("config") or {})
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        self._update(config=config)

    def _agent_changed(self) -> None:
        blocking = self.blocking.value
        changes = {
            "agentId": self.agent_id.value.strip(),
            "blocking": True if blocking else None,
            "resolutionPolicy": None,
            "expectedResolutions": None,
        }
        if blocking:
            policy = {"kind": self.resolution_policy.value}
            if policy["kind"] == "minResolved":
                policy["minCount"] = self.min_count.value
            changes["resolutionPolicy"] = policy
            changes["expectedResolutions"] = self.expected.value if self.expected.value != 1 else None
        node = self._node()
        if node is not None and "blocking" in (node.get("config") or {}) and not blocking:
            changes["blocking"] = False  # keep an explicit false that was already there
        self._config(**changes)

    def _mock_changed(self) -> None:
        text = self.mock_output.value.strip()
        if not text:
            self.mock_status.value = ""
            self._config(mockOutput=None)
            return
        try:
            value = json.loads(text)
        except ValueError as exc:
            self.mock_status.value = message_html(
                f"not JSON ({exc}); the definition keeps the last valid value", "error"
            )
            return
        if not isinstance(value, dict):
            self.mock_status.value = message_html("mockOutput must be a JSON object", "error")
            return
        self.mock_status.value = ""
        self._config(mockOutput=value)

    # reviewers: one row per reviewer, rebuilt only when their number changes
    def _reviewer_row(self, index: int) -> w.HBox:
        user = w.Text(placeholder="userId", continuous_update=False, layout=w.Layout(width="220px"))
        mandatory = w.Checkbox(description="mandatory", indent=False, layout=w.Layout(width="110px"))
        drop = w.Button(description="✕", tooltip="remove this reviewer", layout=w.Layout(width="36px"))
        self._on(user, self._reviewers_changed)
        self._on(mandatory, self._reviewers_changed)
        drop.on_click(lambda _: self.run(lambda: self._drop_reviewer(index)))
        row = w.HBox([user, mandatory, drop])
        row.add_class("collab-reviewer-row")
        return row

    def _reviewers(self) -> list[dict]:
        config = (self._node() or {}).get("config") or {}
        if "reviewers" in config:
            return [r if isinstance(r, dict) else {"userId": str(r)} for r in config["reviewers"] or []]
        return [{"userId": u, "mandatory": True} for u in config.get("reviewerIds") or []]

    def _reviewers_changed(self) -> None:
        rows = [(row.children[0].value.strip(), row.children[1].value) for row in self.reviewer_rows.children]
        self.designer.set_reviewers(self.selected, rows)

    def _add_reviewer(self) -> None:
        current = [(r.get("userId"), r.get("mandatory", True)) for r in self._reviewers()]
        self.designer.set_reviewers(self.selected, current + [(f"reviewer-{len(current) + 1}@example.com", True)])

    def _drop_reviewer(self, index: int) -> None:
        current = [(r.get("userId"), r.get("mandatory", True)) for r in self._reviewers()]
        self.designer.set_reviewers(self.selected, current[:index] + current[index + 1 :])

    def _refresh(self) -> None:
        ids = edits.node_ids(self.raw)
        types = {n.get("nodeId"): n.get("type") for n in self.raw.get("nodes") or []}
        keep = self.selected if self.selected in ids else (ids[0] if ids else None)
        self._options(self.list, [(f"{i}  ·  {types.get(i)}", i) for i in ids], keep)
        node = self._node()
        self.form.layout.display = "none" if node is None else None
        self.remove.disabled = node is None
        if node is None:
            return
        config = node.get("config") or {}
        self._set(self.node_id, node.get("nodeId") or "")
        self._set(self.name, node.get("name") or "")
        self._set(self.type, node.get("type") if node.get("type") in NODE_TYPES else "human")
        sla = node.get("slaMs")
        self._set(self.sla_hours, round(sla / 3_600_000, 4) if isinstance(sla, (int, float)) else 0)
        kind = node.get("type")
        if kind == "human":
            reviewers = self._reviewers()
            if len(self.reviewer_rows.children) != len(reviewers):
                self.reviewer_rows.children = [self._reviewer_row(i) for i in range(len(reviewers))]
            for row, r in zip(self.reviewer_rows.children, reviewers):
                self._set(row.children[0], str(r.get("userId") or ""))
                self._set(row.children[1], bool(r.get("mandatory", True)))
            self.config_box.children = [self.human_box]
        elif kind == "agent":
            self._set(self.agent_id, str(config.get("agentId") or ""))
            self._set(self.blocking, bool(config.get("blocking")))
            policy = config.get("resolutionPolicy") or {}
            policy = {"kind": policy} if isinstance(policy, str) else policy
            self._set(self.resolution_policy, policy.get("kind", "allResolved"))
            self._set(self.min_count, int(policy.get("minCount") or 1))
            self._set(self.expected, int(config.get("expectedResolutions") or 1))
            self.blocking_box.layout.display = None if self.blocking.value else "none"
            self.min_count.layout.display = None if self.resolution_policy.value == "minResolved" else "none"
            mock = config.get("mockOutput")
            current = self.mock_output.value.strip()
            try:
                same = current and json.loads(current) == mock
            except ValueError:
                same = False
            if not same:
                self._set(self.mock_output, json.dumps(mock, indent=1) if mock is not None else "")
            self.config_box.children = [self.agent_box]
        else:
            self._set(self.url, str(config.get("url") or ""))
            self.config_box.children = [self.webhook_box]
