"""Designer: build a workflow definition with forms, see its graph and lint findings live.

The definition is held as the raw dict (a ``definitions/create`` body) it will export, so
what the Designer exports is exactly what it shows. Every change — a form in the browser or
a method call from Python — goes through the same methods, then the definition is linted
(:func:`toolkit.lint.lint_document`) and redrawn (:func:`toolkit.viz.render_definition`).

>>> d = Designer()
>>> d.add_node("draft", "agent")                                  # doctest: +ELLIPSIS
{'nodeId': 'draft', 'type': 'agent', 'config': {'agentId': 'draft'}}
>>> _ = d.add_node("review", "human")
>>> d.add_edge("draft", "review", on="approve")
0
>>> [f.key for f in d.findings]
['APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH']
>>> d.add_edge("review", "draft", on="reject", max_iterations=2)
1
>>> d.findings, 'id="node-review"' in d.view.source
([], True)
"""

from __future__ import annotations

import copy
import json
from html import escape
from pathlib import Path

import ipywidgets as w

from toolkit import examples
from toolkit.lint import errors_of, lint_document, unwrap
from toolkit.widgets import edits
from toolkit.widgets.edge_editor import EdgeEditor
from toolkit.widgets.group_editor import GroupEditor
from toolkit.widgets.node_editor import NodeEditor
from toolkit.widgets.panes import findings_html, guarded, message_html, svg_html
from toolkit.widgets.preview import preview

__all__ = ["Designer"]


class Designer:
    """A workflow designer: start from scratch, an example or a JSON file; edit nodes,
    edges and groups; watch the graph and the lint findings; export the JSON.

    State for code and tests: :attr:`definition` (the raw dict), :attr:`findings` (lint
    findings, schema ones included), :attr:`view` (the current picture, a
    :class:`~toolkit.viz.View`), :attr:`model` (the validated
    :class:`~toolkit.model.Definition`, or ``None`` while the schema is broken), and
    :attr:`widget` (the ipywidgets tree; displaying the Designer displays it).
    """

    def __init__(self, definition=None):
        self._raw = edits.new_definition()
        self.findings: list = []
        self.model = None
        self.view = None
        self.last_error: Exception | None = None
        self.last_traceback: str | None = None
        self._loading = False
        self._build()
        if definition is None:
            self._changed()
        elif isinstance(definition, (str, Path)) and str(definition) in examples.names():
            self.load_example(str(definition))
        else:
            self.load(definition)

    @classmethod
    def from_example(cls, name: str) -> "Designer":
        return cls(examples.load(name))

    # ------------------------------------------------------------------ state

    @property
    def definition(self) -> dict:
        """The definition as it will be exported (the live dict: after changing it in place,
        call :meth:`refresh`)."""
        return self._raw

    @definition.setter
    def definition(self, value) -> None:
        self.load(value)

    @property
    def errors(self) -> list:
        """The findings of severity ``error`` (an export with any would be refused by the server)."""
        return errors_of(self.findings)

    def refresh(self) -> None:
        """Re-lint and redraw (after changing :attr:`definition` in place)."""
        self._changed()

    # ------------------------------------------------------------------ whole definitions

    def new(self, definition_id: str = "my-workflow", name: str = "My workflow") -> dict:
        """Start from scratch: an empty definition."""
        self._raw = edits.new_definition(definition_id, name)
        self._changed(f"new definition {definition_id}")
        return self._raw

    def load(self, source) -> dict:
        """Start from a definition: a dict (copied; a ``{"data": …}`` envelope is removed), a
        JSON string, or the path of a JSON file."""
        if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
            path = Path(source)
            raw = json.loads(path.read_text(encoding="utf-8"))
            what = f"opened {path}"
        elif isinstance(source, str):
            raw, what = json.loads(source), "loaded"
        else:
            raw, what = copy.deepcopy(source), "loaded"
        raw = unwrap(raw)
        if not isinstance(raw, dict):
            raise ValueError("a definition is a JSON object")
        # a DefinitionView's read-only fields
        for key in ("version", "compiled", "createdAt", "updatedAt", "status", "warnings"):
            raw.pop(key, None)
        self._raw = raw
        self._changed(f"{what} {raw.get('definitionId', '')}")
        return self._raw

    def load_example(self, name: str) -> dict:
        """Start from one of :func:`toolkit.examples.names`."""
        self.load(examples.load(name))
        self._set_quiet(self.example_field, name)
        self.status.value = message_html(f"loaded example {name}", "ok")
        return self._raw

    def set_info(self, definition_id: str | None = None, name: str | None = None,
                 description: str | None = None) -> dict:
        """Change the definition's id, name or description (``""`` removes the description)."""
        edits.set_info(self._raw, definition_id, name, description)
        self._changed()
        return self._raw

    def export(self, path=None, *, envelope: bool = True, force: bool = False) -> Path:
        """Write the definition as JSON to ``path`` (default ``<definitionId>.json``).

        With ``envelope`` (the default) the file is the HTTP body of
        ``POST /v2/workflow/definitions/create``, ``{"data": <definition>}``, to send as it
        is (``curl -d @file``); without, it is the bare definition (like the files in
        ``toolkit/examples``). Both open again in the Designer and in ``collab lint``. A
        definition with lint errors is refused (the server would refuse it) unless ``force``.
        """
        if self.errors and not force:
            raise ValueError(f"{len(self.errors)} lint error(s) to fix first (the server would refuse this "
                             f"definition); export(..., force=True) writes it anyway")
        path = Path(path or f"{self._raw.get('definitionId') or 'definition'}.json")
        body = {"data": self._raw} if envelope else self._raw
        path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self.status.value = message_html(f"exported {path}", "ok")
        return path

    # ------------------------------------------------------------------ nodes, edges, groups

    def add_node(self, node_id: str, type: str = "human", *, name: str | None = None, sla_ms: int | None = None,
                 config: dict | None = None, description: str | None = None) -> dict:
        """Add a node (``type`` human, agent or webhook). Without ``config`` it gets a
        starting one: a placeholder mandatory reviewer, an agent named after the node, or an
        empty webhook config. Returns the node dict."""
        node = edits.add_node(self._raw, node_id, type, name=name, sla_ms=sla_ms, config=config,
                              description=description)
        self._changed(f"added node {node_id}", select=("node", node_id))
        return node

    def update_node(self, node_id: str, **changes) -> dict:
        """Change a node: ``name``, ``sla_ms``, ``description``, ``config``, ``type`` or
        ``node_id`` (renames it in edges and groups too); ``None`` removes a field."""
        node = edits.update_node(self._raw, node_id, **changes)
        self._changed(select=("node", node["nodeId"]))
        return node

    def set_reviewers(self, node_id: str, reviewers) -> dict:
        """Set a human node's reviewers: ``[(userId, mandatory), …]`` or ``[userId, …]``."""
        node = edits.set_reviewers(self._raw, node_id, reviewers)
        self._changed(select=("node", node_id))
        return node

    def remove_node(self, node_id: str) -> None:
        """Remove a node with the edges that touch it and its group memberships."""
        dropped = edits.remove_node(self._raw, node_id)
        self._changed(f"removed node {node_id}" + (f" and {dropped} edge(s)" if dropped else ""))

    def add_edge(self, source, target, on: str = "always", *, when: str | dict | None = None,
                 max_iterations: int | None = None) -> int:
        """Add an edge and return its index. ``source``/``target``: a node id or
        ``("group", groupId)``; ``on``: approve, reject, always, exhausted or custom;
        ``when``: the predicate of a custom edge (a JSON string or its AST as a dict; see
        :func:`toolkit.widgets.when.build_when`); ``max_iterations`` makes it a loop-back."""
        if isinstance(when, dict):
            when = json.dumps(when, ensure_ascii=False)
        index = edits.add_edge(self._raw, source, target, on, when=when, max_iterations=max_iterations)
        self._changed(f"added edge {index}", select=("edge", index))
        return index

    def update_edge(self, index: int, **changes) -> dict:
        """Change edge ``index``: ``source``, ``target``, ``on``, ``when`` (``None`` removes
        it), ``max_iterations`` (``None`` or 0 removes the loop)."""
        if isinstance(changes.get("when"), dict):
            changes["when"] = json.dumps(changes["when"], ensure_ascii=False)
        edge = edits.update_edge(self._raw, index, **changes)
        self._changed(select=("edge", index))
        return edge

    def remove_edge(self, index: int) -> dict:
        edge = edits.remove_edge(self._raw, index)
        self._changed(f"removed edge {index}")
        return edge

    def add_group(self, group_id: str, members=(), *, policy: str = "waitAll", quorum: int | None = None,
                  required=(), name: str | None = None) -> dict:
        """Add a group: ``members`` (node ids), ``policy`` (waitAll, joinOnQuorum,
        cancelOnQuorum), ``quorum`` (default: every member), ``required`` members."""
        group = edits.add_group(self._raw, group_id, members, policy=policy, quorum=quorum, required=required,
                                name=name)
        self._changed(f"added group {group_id}", select=("group", group_id))
        return group

    def update_group(self, group_id: str, **changes) -> dict:
        """Change a group: ``members``, ``policy``, ``quorum``, ``required``, ``name`` or
        ``group_id`` (renames it in edges too); ``None`` removes an optional field."""
        group = edits.update_group(self._raw, group_id, **changes)
        self._changed(select=("group", group["groupId"]))
        return group

    def remove_group(self, group_id: str) -> None:
        """Remove a group and the edges from or to it."""
        dropped = edits.remove_group(self._raw, group_id)
        self._changed(f"removed group {group_id}" + (f" and {dropped} edge(s)" if dropped else ""))

    # ------------------------------------------------------------------ the widget

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = repr(self)   # what a page without the widget shows
        return bundle

    def __repr__(self) -> str:
        errors = len(self.errors)
        return (f"<Designer {self._raw.get('definitionId')!r}: {len(self._raw.get('nodes') or [])} nodes, "
                f"{len(self._raw.get('edges') or [])} edges, {errors} error(s), "
                f"{len(self.findings) - errors} warning(s)>")

    def _build(self) -> None:
        """The widget tree. Its parts are attributes so that code and tests can drive them as a
        person would: ``example_field`` + ``load_example_button``, ``path_field`` +
        ``open_button``, ``upload``, ``new_button``, ``id_field``, ``name_field``, the three
        editors (``node_editor``, ``edge_editor``, ``group_editor``), ``export_path_field`` +
        ``export_button``; ``graph``, ``lint``, ``json_view`` and ``status`` show the results."""
        self.status = w.HTML()
        self.example_field = w.Dropdown(options=examples.names(), value="parallel-review",
                                        layout=w.Layout(width="220px"))
        self.load_example_button = w.Button(description="Load example", layout=w.Layout(width="auto"))
        self.path_field = w.Text(placeholder="path/to/definition.json", layout=w.Layout(width="220px"))
        self.open_button = w.Button(description="Open file", layout=w.Layout(width="auto"))
        self.upload = w.FileUpload(accept=".json", multiple=False, description="Upload JSON")
        self.new_button = w.Button(description="New (empty)", layout=w.Layout(width="auto"))
        self.id_field = w.Text(description="definitionId", continuous_update=False,
                               style={"description_width": "90px"}, layout=w.Layout(width="320px"))
        self.name_field = w.Text(description="name", continuous_update=False, style={"description_width": "50px"},
                                 layout=w.Layout(width="380px"))
        self.node_editor, self.edge_editor, self.group_editor = NodeEditor(self), EdgeEditor(self), GroupEditor(self)
        self.json_view = w.HTML()
        tabs = w.Tab(children=[self.node_editor.widget, self.edge_editor.widget, self.group_editor.widget,
                              self.json_view])
        tabs.titles = ("Nodes", "Edges", "Groups", "JSON")
        self.graph = w.HTML(layout=w.Layout(min_height="120px"))
        self.lint = w.HTML()
        self.export_path_field = w.Text(placeholder="file name (default <definitionId>.json)",
                                        layout=w.Layout(width="300px"))
        self.export_button = w.Button(description="Export JSON", button_style="success", icon="download",
                                      layout=w.Layout(width="auto"))

        self.load_example_button.on_click(lambda _: self._run(lambda: self.load_example(self.example_field.value)))
        self.open_button.on_click(lambda _: self._run(lambda: self.load(self.path_field.value.strip())))
        self.new_button.on_click(lambda _: self._run(self.new))
        self.export_button.on_click(
            lambda _: self._run(lambda: self.export(self.export_path_field.value.strip() or None)))
        self.upload.observe(lambda change: self._run(self._uploaded), names="value")
        for widget, key in ((self.id_field, "definition_id"), (self.name_field, "name")):
            widget.observe(lambda change, key=key: None if self._loading else
                           self._run(lambda: self.set_info(**{key: change["new"].strip()})), names="value")

        start = w.HBox([w.HTML("<b>Start from</b>&nbsp;"), self.example_field, self.load_example_button,
                        self.path_field, self.open_button, self.upload, self.new_button],
                       layout=w.Layout(flex_flow="row wrap", align_items="center"))
        info = w.HBox([self.id_field, self.name_field])
        editor = w.VBox([tabs], layout=w.Layout(width="470px", min_width="470px"))
        right = w.VBox([self.graph, self.lint], layout=w.Layout(flex="1 1 auto", overflow="auto",
                                                                padding="0 0 0 12px"))
        right.add_class("collab-designer-output")
        save = w.HBox([self.export_path_field, self.export_button, self.status], layout=w.Layout(align_items="center"))
        self.widget = w.VBox([start, info, w.HBox([editor, right]), save])
        self.widget.add_class("collab-designer")
        self.graph.add_class("collab-designer-graph")
        self.lint.add_class("collab-designer-lint")

    def _uploaded(self) -> None:
        files = self.upload.value
        if files:
            item = files[0]
            self.load(bytes(item["content"]).decode("utf-8"))
            self.status.value = message_html(f"opened {item['name']}", "ok")

    @guarded
    def _run(self, action):
        """Run a UI action; an error shows in the status line instead of vanishing."""
        return action()

    def _set_quiet(self, widget, value) -> None:
        self._loading = True
        try:
            if widget.value != value:
                widget.value = value
        finally:
            self._loading = False

    def _changed(self, message: str | None = None, select: tuple | None = None) -> None:
        definition, findings = lint_document(self._raw)
        self.model, self.findings = definition, findings
        self.view = preview(self._raw, findings, definition)
        self.graph.value = svg_html(self.view, "collab-graph", fit=True)
        self.lint.value = findings_html(findings)
        self.json_view.value = (f'<pre style="font-size:11px;max-height:520px;overflow:auto">'
                            f"{escape(json.dumps(self._raw, indent=2, ensure_ascii=False))}</pre>")
        self._set_quiet(self.id_field, str(self._raw.get("definitionId") or ""))
        self._set_quiet(self.name_field, str(self._raw.get("name") or ""))
        for editor in (self.node_editor, self.edge_editor, self.group_editor):
            editor.refresh()
        if select is not None:
            editor = {"node": self.node_editor, "edge": self.edge_editor, "group": self.group_editor}[select[0]]
            if editor.list.value != select[1]:
                editor.list.value = select[1]   # its observer refreshes the form
        self.status.value = message_html(message, "ok") if message else ""
