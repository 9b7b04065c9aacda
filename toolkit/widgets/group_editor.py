"""The Designer's group editor: members, quorum policy, quorum and required members."""

from __future__ import annotations

import ipywidgets as w

from toolkit.widgets import edits
from toolkit.widgets.forms import DESC, POLICIES, Editor, button, text_field, wide

__all__ = ["GroupEditor"]


class GroupEditor(Editor):
    kind = "group"

    def __init__(self, designer):
        super().__init__(designer)
        self.list = w.Select(rows=4, layout=wide())
        self.new_id = w.Text(placeholder="new group id, e.g. review-board", layout=w.Layout(width="240px"))
        self.add = button("Add group", "add a group", "primary")
        self.remove = button("Remove group", "remove the selected group and its edges", "danger")
        self.group_id = text_field("groupId")
        self.name = text_field("name")
        self.members = w.SelectMultiple(description="members", rows=5, style=DESC, layout=wide())
        self.policy = w.Dropdown(description="onQuorumMet", options=POLICIES, style=DESC)
        self.quorum = w.BoundedIntText(
            description="quorum", min=0, max=100, style=DESC, tooltip="0 = every member (the default)"
        )
        self.required = w.SelectMultiple(description="required", rows=3, style=DESC, layout=wide())
        self.form = w.VBox(
            [
                self.group_id,
                self.name,
                self.members,
                self.policy,
                self.quorum,
                w.HTML(
                    '<span style="font-size:11px;color:#607080">quorum 0 = every member; '
                    "required members must approve whatever the quorum</span>"
                ),
                self.required,
            ]
        )
        self.widget = w.VBox(
            [self.list, w.HBox([self.new_id, self.add]), self.message, w.HBox([self.remove]), self.form]
        )

        self.list.observe(self._picked, names="value")
        self.add.on_click(lambda _: self.run(self._add))
        self.remove.on_click(lambda _: self.run(self._remove))
        self._on(self.group_id, self._rename)
        self._on(self.name, lambda: self._update(name=self.name.value.strip() or None))
        self._on(self.members, lambda: self._update(members=list(self.members.value)))
        self._on(self.policy, lambda: self._update(policy=self.policy.value))
        self._on(self.quorum, lambda: self._update(quorum=self.quorum.value or None))
        self._on(self.required, lambda: self._update(required=list(self.required.value)))

    @property
    def selected(self) -> str | None:
        return self.list.value

    def _group(self) -> dict | None:
        try:
            return edits.find_group(self.raw, self.selected) if self.selected is not None else None
        except KeyError:
            return None

    def _add(self) -> None:
        group_id = self.new_id.value.strip()
        self.designer.add_group(group_id, [])
        self.new_id.value = ""
        self.list.value = group_id

    def _remove(self) -> None:
        if self.selected is not None:
            self.designer.remove_group(self.selected)

    def _rename(self) -> None:
        new, old = self.group_id.value.strip(), self.selected
        if new and old is not None and new != old:
            self.designer.update_group(old, groupId=new)
            self.list.value = new

    def _update(self, **changes) -> None:
        if self.selected is not None:
            self.designer.update_group(self.selected, **changes)

    def _refresh(self) -> None:
        ids = edits.group_ids(self.raw)
        keep = self.selected if self.selected in ids else (ids[0] if ids else None)
        self._options(self.list, [(str(i), i) for i in ids], keep)
        group = self._group()
        self.form.layout.display = "none" if group is None else None
        self.remove.disabled = group is None
        if group is None:
            return
        members = [m for m in group.get("memberNodeIds") or []]
        self._set(self.group_id, group.get("groupId") or "")
        self._set(self.name, group.get("name") or "")
        node_ids = edits.node_ids(self.raw)
        self._options(self.members, node_ids + [m for m in members if m not in node_ids], members)
        self._set(self.policy, group.get("onQuorumMet", "waitAll"))
        quorum = group.get("quorum")
        self._set(self.quorum, quorum if isinstance(quorum, int) and 0 <= quorum <= 100 else 0)
        self._options(self.required, members, group.get("requiredNodeIds") or [])
