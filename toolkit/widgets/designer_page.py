"""The Designer's page: its widgets, how a click reaches a Designer method, and how the
result (or an error, in plain words next to the control that caused it) comes back.

:class:`DesignerPage` is the widget half of :class:`~toolkit.widgets.Designer`; the
definition, history and edit methods live there. Destructive page actions ask first:
"Load example", "Open file" and "Upload" over unsaved edits, "Remove node" when edges go
with it; and each is one undoable step anyway.
"""

from __future__ import annotations

import json
import traceback
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING

import ipywidgets as w

from toolkit import examples
from toolkit.widgets import edits
from toolkit.widgets.canvas import Canvas
from toolkit.widgets.edge_editor import EdgeEditor
from toolkit.widgets.group_editor import GroupEditor
from toolkit.widgets.node_editor import NodeEditor
from toolkit.widgets.panes import message_html, plain_error

if TYPE_CHECKING:
    from toolkit.widgets.history import History

__all__ = ["DesignerPage"]


class DesignerPage:
    """Widgets and page actions of the Designer (mixed into it)."""

    if TYPE_CHECKING:  # what the Designer provides: the page calls it, type checkers hold it to this
        _raw: dict
        _selection: tuple | None
        history: History

        @property
        def dirty(self) -> bool: ...
        @property
        def errors(self) -> list: ...
        def load(self, source) -> dict: ...
        def load_example(self, name: str) -> dict: ...
        def new(self, definition_id: str = ..., name: str = ...) -> dict: ...
        def set_info(
            self, definition_id: str | None = ..., name: str | None = ..., description: str | None = ...
        ) -> dict: ...
        def export(self, path=..., *, envelope: bool = ..., force: bool = ...) -> Path: ...
        def select(self, target) -> tuple | None: ...
        def select_finding(self, index: int) -> tuple | None: ...
        def connect(self, source: str, target: str, role: str = ...) -> int: ...
        def add_node(
            self,
            node_id: str | None = ...,
            type: str = ...,
            *,
            name: str | None = ...,
            sla_ms: int | None = ...,
            config: dict | None = ...,
            description: str | None = ...,
            position: tuple[float, float] | None = ...,
        ) -> dict: ...
        def move_node(self, node_id: str, x: float, y: float) -> dict: ...
        def delete_selection(self) -> None: ...
        def undo(self) -> bool: ...
        def redo(self) -> bool: ...
        def relayout(self) -> None: ...

    def _build(self) -> None:
        """The widget tree. Its parts are attributes so that code and tests can drive them as a
        person would: ``example_field`` + ``load_example_button``, ``path_field`` +
        ``open_button``, ``upload``, ``new_button``, ``id_field``, ``name_field``, the three
        editors (``node_editor``, ``edge_editor``, ``group_editor``), ``export_path_field`` +
        ``export_button`` (+ ``export_anyway_button``), ``confirm_box`` (a pending question
        with ``confirm_button`` / ``cancel_button``); ``canvas``, ``json_view`` and
        ``status`` show the results."""
        self.status = w.HTML()
        self.start_status = w.HTML()
        self.example_field = w.Dropdown(
            options=examples.names(), value="parallel-review", layout=w.Layout(width="220px")
        )
        self.load_example_button = w.Button(description="Load example", layout=w.Layout(width="auto"))
        self.path_field = w.Text(placeholder="path/to/definition.json", layout=w.Layout(width="220px"))
        self.open_button = w.Button(description="Open file", layout=w.Layout(width="auto"))
        self.upload = w.FileUpload(accept=".json", multiple=False, description="Upload JSON")
        self.new_button = w.Button(description="New (empty)", layout=w.Layout(width="auto"))
        self.confirm_text = w.HTML()
        self.confirm_button = w.Button(description="Replace", button_style="danger", layout=w.Layout(width="auto"))
        self.cancel_button = w.Button(description="Cancel", layout=w.Layout(width="auto"))
        self.confirm_box = w.HBox(
            [self.confirm_text, self.confirm_button, self.cancel_button],
            layout=w.Layout(display="none", align_items="center"),
        )
        self.confirm_box.add_class("collab-confirm")
        self._pending = None
        self.id_field = w.Text(
            description="definitionId",
            continuous_update=False,
            style={"description_width": "90px"},
            layout=w.Layout(width="320px"),
        )
        self.name_field = w.Text(
            description="name",
            continuous_update=False,
            style={"description_width": "50px"},
            layout=w.Layout(width="380px"),
        )
        self.info_status = w.HTML()
        self.node_editor, self.edge_editor, self.group_editor = NodeEditor(self), EdgeEditor(self), GroupEditor(self)
        self.json_view = w.HTML()
        self.tabs = w.Tab(
            children=[self.node_editor.widget, self.edge_editor.widget, self.group_editor.widget, self.json_view]
        )
        self.tabs.titles = ("Nodes", "Edges", "Groups", "JSON")
        self.tabs.observe(lambda change: self._show_json() if change["new"] == 3 else None, names="selected_index")
        self.canvas = Canvas(self)
        self.canvas.add_class("collab-designer-graph")
        self.export_path_field = w.Text(
            placeholder="file name (default <definitionId>.json)", layout=w.Layout(width="300px")
        )
        self.export_button = w.Button(
            description="Export JSON", button_style="success", icon="download", layout=w.Layout(width="auto")
        )
        self.export_anyway_button = w.Button(
            description="Export anyway",
            button_style="warning",
            tooltip="write the file with its lint errors (a draft the server would refuse)",
            layout=w.Layout(width="auto", display="none"),
        )

        self.load_example_button.on_click(
            lambda _: self._ask_replace(
                f"example {self.example_field.value}",
                lambda: self.load_example(self.example_field.value),
                self.start_status,
            )
        )
        self.open_button.on_click(
            lambda _: self._ask_replace(
                self.path_field.value.strip() or "(no file name)", self._open_typed, self.start_status
            )
        )
        self.new_button.on_click(lambda _: self._ask_replace("an empty definition", self.new, self.start_status))
        self.upload.observe(lambda change: self._uploaded(), names="value")
        self.confirm_button.on_click(lambda _: self._answer(True))
        self.cancel_button.on_click(lambda _: self._answer(False))
        self.export_button.on_click(lambda _: self._export_clicked(False))
        self.export_anyway_button.on_click(lambda _: self._export_clicked(True))
        for widget, key in ((self.id_field, "definition_id"), (self.name_field, "name")):
            widget.observe(
                lambda change, key=key: (
                    None
                    if self._loading
                    else self._run(lambda: self.set_info(**{key: change["new"].strip()}), self.info_status)
                ),
                names="value",
            )

        start = w.HBox(
            [
                w.HTML("<b>Start from</b>&nbsp;"),
                self.example_field,
                self.load_example_button,
                self.path_field,
                self.open_button,
                self.upload,
                self.new_button,
                self.start_status,
            ],
            layout=w.Layout(flex_flow="row wrap", align_items="center"),
        )
        info = w.HBox([self.id_field, self.name_field, self.info_status], layout=w.Layout(align_items="center"))
        editor = w.VBox([self.tabs], layout=w.Layout(width="470px", min_width="470px"))
        right = w.VBox([self.canvas], layout=w.Layout(flex="1 1 auto", min_width="0", padding="0 0 0 12px"))
        right.add_class("collab-designer-output")
        save = w.HBox(
            [self.export_path_field, self.export_button, self.export_anyway_button, self.status],
            layout=w.Layout(align_items="center"),
        )
        self.widget = w.VBox([start, self.confirm_box, info, w.HBox([editor, right]), save])
        self.widget.add_class("collab-designer")

    # ------------------------------------------------------------------ page actions

    def _run(self, action, where=None):
        """Run a page action; an error shows in plain words in ``where`` (the message line
        beside the control that was used; the export line by default) and is kept in
        ``last_error`` / ``last_traceback`` for code and tests."""
        self.last_error = self.last_traceback = None
        target = where if where is not None else self.status
        try:
            result = action()
        except Exception as exc:  # noqa: BLE001 - shown to the person, kept for inspection
            self.last_error, self.last_traceback = exc, traceback.format_exc()
            if isinstance(target, Canvas):
                target.say(plain_error(exc), "error")
            else:
                target.value = message_html(plain_error(exc), "error")
            return None
        if isinstance(target, w.HTML) and target is not self.status:
            target.value = ""
        return result

    def _ask_replace(self, what: str, action, where) -> None:
        """Replace the definition, asking first when there are unsaved edits."""
        if not self.dirty:
            self._run(action, where)
            return
        self._ask(
            f"Replace your unsaved edits with {what}? (Ctrl+Z on the canvas undoes it too)",
            "Replace",
            lambda: self._run(action, where),
        )

    def _ask(self, question: str, verb: str, action) -> None:
        self.confirm_text.value = f'<b style="color:#B26A00">{escape(question)}</b>&nbsp;'
        self.confirm_button.description = verb
        self.confirm_box.layout.display = "flex"
        self._pending = action

    def _answer(self, yes: bool) -> None:
        action, self._pending = self._pending, None
        self.confirm_box.layout.display = "none"
        if yes and action is not None:
            action()

    def _open_typed(self):
        path = self.path_field.value.strip()
        if not path:
            raise ValueError("Type the path of a JSON file first.")
        return self.load(path)

    def _uploaded(self) -> None:
        files = self.upload.value
        if files:
            item = files[0]

            def read():
                self.load(bytes(item["content"]).decode("utf-8"))
                self._say(f"opened {item['name']}")

            self._ask_replace(item["name"], read, self.start_status)

    def _export_clicked(self, force: bool) -> None:
        self.export_anyway_button.layout.display = "none"
        path = self.export_path_field.value.strip() or None
        if self.errors and not force:
            n = len(self.errors)
            self.status.value = message_html(
                f"{n} lint error{'s' * (n != 1)}: the server would refuse this "
                f"definition. Fix {'them' if n != 1 else 'it'} (see the list under "
                "the graph) or export anyway to keep a draft.",
                "error",
            )
            self.export_anyway_button.layout.display = None
            return
        self._run(lambda: self.export(path, force=force))

    def _canvas_action(self, msg: dict) -> None:
        """A gesture on the canvas: the Designer method it stands for. Errors show in the
        canvas's own message line."""
        kind = msg.get("type")
        actions = {
            "select": lambda: self.select(msg.get("target") or None),
            "finding": lambda: self.select_finding(int(msg["index"])),
            "connect": lambda: self.connect(msg["source"], msg["target"], msg.get("role", "always")),
            "add_node": lambda: self.add_node(
                msg.get("node_id") or None, msg.get("node_type", "human"), position=(msg["x"], msg["y"])
            ),
            "move": lambda: self.move_node(msg["node"], msg["x"], msg["y"]),
            "delete": self.delete_selection,
            "undo": self.undo,
            "redo": self.redo,
            "relayout": self.relayout,
        }
        if kind in actions:
            self.canvas.status = ""
            self._run(actions[kind], self.canvas)

    # ------------------------------------------------------------------ showing a change

    def _say(self, text: str, kind: str = "ok") -> None:
        self.status.value = message_html(text, kind)
        self.canvas.say(text, kind)

    def _sync_history(self) -> None:
        self.canvas.history = [self.history.can_undo, self.history.can_redo]

    def _set_quiet(self, widget, value) -> None:
        self._loading = True
        try:
            if widget.value != value:
                widget.value = value
        finally:
            self._loading = False

    def _show(self, scene: str, message: str | None, select: tuple | None) -> None:
        """Put the new state on the page: canvas (``scene``: its data as JSON text), JSON tab,
        info fields, forms, selection."""
        self.canvas.scene = scene
        if self.tabs.selected_index == 3:
            self._show_json()
        self._set_quiet(self.id_field, str(self._raw.get("definitionId") or ""))
        self._set_quiet(self.name_field, str(self._raw.get("name") or ""))
        for editor in (self.node_editor, self.edge_editor, self.group_editor):
            editor.refresh()
        if self._selection is not None and not self._exists(self._selection):
            self._selection = None
            self.canvas.selection = ""
        if select is not None:
            self.select(select)
        self._sync_history()
        self.export_anyway_button.layout.display = "none"
        self.status.value = message_html(message, "ok") if message else ""
        self.canvas.say(message or "")

    def _show_json(self) -> None:
        """Fill the JSON tab (only while it is open: a 100-node definition takes a while to
        indent and escape, and most edits happen with another tab open)."""
        self.json_view.value = (
            f'<pre style="font-size:11px;max-height:520px;overflow:auto">'
            f"{escape(json.dumps(self._raw, indent=2, ensure_ascii=False))}</pre>"
        )

    def _exists(self, key: tuple) -> bool:
        kind, ref = key
        if kind == "node":
            return ref in edits.node_ids(self._raw)
        if kind == "group":
            return ref in edits.group_ids(self._raw)
        return isinstance(ref, int) and 0 <= ref < len(self._raw.get("edges") or [])

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = repr(self)  # what a page without the widget shows
        return bundle
