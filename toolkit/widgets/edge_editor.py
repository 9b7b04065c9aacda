"""The Designer's edge editor: endpoints (nodes or groups), role, the predicate builder of
custom edges and loop settings."""

from __future__ import annotations

import ipywidgets as w

from toolkit.widgets import edits
from toolkit.widgets import when as when_builder
from toolkit.widgets.forms import DESC, ROLES, Editor, button, text_field, wide
from toolkit.widgets.panes import message_html

__all__ = ["EdgeEditor"]


def _endpoint_options(raw: dict, current=()) -> list[tuple[str | None, tuple]]:
    options = [(n, ("node", n)) for n in edits.node_ids(raw)]
    options += [(f"⧉ {g} (group)", ("group", g)) for g in edits.group_ids(raw)]
    for key in current:
        if key not in [o[1] for o in options] and key[1] is not None:
            options.append((f"? {key[1]} (undeclared {key[0]})", key))
    return options


def _edge_label(index: int, edge: dict) -> str:
    def name(end):
        kind, ref = edits.endpoint_key(end)
        return f"⧉{ref}" if kind == "group" else str(ref)

    loop = edge.get("loop") or {}
    extra = f" ↺{loop.get('maxIterations')}" if loop else ""
    return f"{index}: {name(edge.get('from'))} → {name(edge.get('to'))}  [{edge.get('on', 'always')}{extra}]"


class EdgeEditor(Editor):
    kind = "edge"

    def __init__(self, designer):
        super().__init__(designer)
        self.list = w.Select(rows=6, layout=wide())
        small = w.Layout(width="150px")
        self.new_from = w.Dropdown(layout=small)
        self.new_to = w.Dropdown(layout=small)
        self.new_on = w.Dropdown(options=ROLES, value="approve", layout=w.Layout(width="100px"))
        self.add = button("Add edge", "add an edge between these two", "primary")
        self.remove = button("Remove edge", "remove the selected edge", "danger")
        self.source = w.Dropdown(description="from", style=DESC)
        self.target = w.Dropdown(description="to", style=DESC)
        self.on = w.Dropdown(description="on (role)", options=ROLES, style=DESC)
        # the predicate builder (custom edges)
        self.path = w.Combobox(
            description="variable",
            placeholder="output.score",
            options=when_builder.PATH_EXAMPLES,
            ensure_option=False,
            continuous_update=False,
            style=DESC,
        )
        self.op = w.Dropdown(description="op", options=when_builder.OPS, value="eq", style=DESC)
        self.value = text_field("value", 'JSON or text: 0.8, "web", ["a","b"]')
        self.negate = w.Checkbox(description="negate (not …)", indent=False)
        self.when = w.Textarea(
            description="when (JSON)", continuous_update=False, style=DESC, layout=w.Layout(width="95%", height="60px")
        )
        self.when_status = w.HTML()
        self.builder_box = w.VBox(
            [
                w.HTML("<b>Predicate</b>: routes when it is true"),
                self.path,
                self.op,
                self.value,
                self.negate,
                self.when,
                self.when_status,
            ]
        )
        self.is_loop = w.Checkbox(description="loop-back (re-runs the loop body)", indent=False)
        self.max_iterations = w.BoundedIntText(description="maxIterations", min=1, max=20, value=3, style=DESC)
        self.form = w.VBox([self.source, self.target, self.on, self.builder_box, self.is_loop, self.max_iterations])
        self.widget = w.VBox(
            [
                self.list,
                w.HBox([self.new_from, w.HTML("→"), self.new_to, self.new_on]),
                w.HBox([self.add, self.remove]),
                self.message,
                self.form,
            ]
        )

        self.list.observe(self._picked, names="value")
        self.add.on_click(lambda _: self.run(self._add))
        self.remove.on_click(lambda _: self.run(self._remove))
        self._on(self.source, lambda: self._update(source=self.source.value))
        self._on(self.target, lambda: self._update(target=self.target.value))
        self._on(self.on, self._role_changed)
        for widget in (self.path, self.op, self.value, self.negate):
            self._on(widget, self._built)
        self._on(self.when, self._when_typed)
        self._on(self.is_loop, self._loop_changed)
        self._on(self.max_iterations, self._loop_changed)

    @property
    def selected(self) -> int | None:
        return self.list.value

    def _edge(self) -> dict | None:
        edges = self.raw.get("edges") or []
        return edges[self.selected] if self.selected is not None and self.selected < len(edges) else None

    def _add(self) -> None:
        index = self.designer.add_edge(self.new_from.value, self.new_to.value, on=self.new_on.value)
        self.list.value = index

    def _remove(self) -> None:
        if self.selected is not None:
            self.designer.remove_edge(self.selected)

    def _update(self, **changes) -> None:
        if self.selected is not None:
            self.designer.update_edge(self.selected, **changes)

    def _role_changed(self) -> None:
        role = self.on.value
        if role == "custom":
            edge = self._edge() or {}
            when = edge.get("when") or when_builder.build_when(
                self.path.value or "output.decision", self.op.value, self.value.value or "approve", self.negate.value
            )
            self._update(on=role, when=when)
        else:
            self._update(on=role, when=None)

    def _built(self) -> None:
        path = self.path.value.strip()
        if not path:
            self.when_status.value = message_html("give a variable path, e.g. output.score", "error")
            return
        self._update(when=when_builder.build_when(path, self.op.value, self.value.value, self.negate.value))

    def _when_typed(self) -> None:
        self._update(when=self.when.value.strip() or None)

    def _loop_changed(self) -> None:
        self._update(max_iterations=self.max_iterations.value if self.is_loop.value else None)

    def _refresh(self) -> None:
        edges = self.raw.get("edges") or []
        keep = self.selected if self.selected is not None and self.selected < len(edges) else (0 if edges else None)
        self._options(self.list, [(_edge_label(i, e), i) for i, e in enumerate(edges)], keep)
        ends = _endpoint_options(self.raw)
        self._options(self.new_from, ends, self.new_from.value)
        self._options(self.new_to, ends, self.new_to.value)
        if self.new_to.value == self.new_from.value and len(ends) > 1:  # suggest an edge between two
            self._set(self.new_to, next(v for _, v in ends if v != self.new_from.value))
        self.add.disabled = not ends
        edge = self._edge()
        self.form.layout.display = "none" if edge is None else None
        self.remove.disabled = edge is None
        if edge is None:
            return
        keys = (edits.endpoint_key(edge.get("from")), edits.endpoint_key(edge.get("to")))
        options = _endpoint_options(self.raw, keys)
        self._options(self.source, options, keys[0])
        self._options(self.target, options, keys[1])
        self._set(self.on, edge.get("on", "always") if edge.get("on", "always") in ROLES else "always")
        when = edge.get("when")
        self.builder_box.layout.display = None if edge.get("on") == "custom" or when else "none"
        self._set(self.when, when or "")
        parts = when_builder.split_when(when)
        for widget in (self.path, self.op, self.value, self.negate):
            widget.disabled = when is not None and parts is None
        if parts is not None:
            self._set(self.path, parts["path"])
            self._set(self.op, parts["op"])
            self._set(self.value, parts["value"])
            self._set(self.negate, parts["negate"])
        problem = when_builder.check(when) if when else None
        if when and parts is None and problem is None:
            self.when_status.value = message_html("a compound predicate: edit it as JSON above")
        elif problem:
            self.when_status.value = message_html(problem, "error")
        else:
            self.when_status.value = ""
        loop = edge.get("loop") if isinstance(edge.get("loop"), dict) else None
        self._set(self.is_loop, loop is not None)
        if loop is not None and isinstance(loop.get("maxIterations"), int) and 1 <= loop["maxIterations"] <= 20:
            self._set(self.max_iterations, loop["maxIterations"])
        self.max_iterations.layout.display = None if loop is not None else "none"
