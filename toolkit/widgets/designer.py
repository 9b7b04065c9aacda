"""Designer: build a workflow definition on its picture or with forms; undo anything.

The definition is held as the raw dict (a ``definitions/create`` body) it will export, so
what the Designer exports is exactly what it shows. Every change — a gesture on the canvas,
a form, or a method call from Python — goes through the same methods; each is one step of
the undo history (:mod:`toolkit.widgets.history`), then the definition is linted
(:func:`toolkit.lint.lint_document`) and redrawn.

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
>>> d.remove_node("review"); _ = d.undo(); len(d.definition["edges"])
2
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from toolkit import examples
from toolkit.lint import errors_of, lint_document, unwrap
from toolkit.widgets import edits
from toolkit.widgets.canvas_scene import scene_data
from toolkit.widgets.designer_page import DesignerPage
from toolkit.widgets.history import History, restore, snapshot
from toolkit.widgets.preview import preview

__all__ = ["Designer"]

_KINDS = ("node", "edge", "group")
DRAWN = 16  # pictures kept by definition text: undo and redo go back to one without redrawing


def _not_json(word: str):
    raise ValueError(f"{word} is not a JSON value (Python's json module reads it, no server does).")


class Designer(DesignerPage):
    """A workflow designer: start from scratch, an example or a JSON file; edit nodes,
    edges and groups on the canvas or in the forms; undo and redo; export the JSON.

    State for code and tests: :attr:`definition` (the raw dict), :attr:`findings` (lint
    findings, schema ones included), :attr:`view` (the current picture, a
    :class:`~toolkit.viz.View`), :attr:`scene` (the canvas's data), :attr:`selection`,
    :attr:`history`, :attr:`model` (the validated :class:`~toolkit.model.Definition`, or
    ``None`` while the schema is broken), and :attr:`widget` (displaying the Designer
    displays it).
    """

    def __init__(self, definition=None):
        self._raw = edits.new_definition()
        self._state = snapshot(self._raw)
        self._clean = self._state
        self.history = History()
        self._selection: tuple | None = None
        self.findings: list = []
        self.model = None
        self.view = None
        self._scene_text = ""
        self._scene: dict | None = None
        self._drawn: OrderedDict[str, tuple] = OrderedDict()
        self.last_error: Exception | None = None
        self.last_traceback: str | None = None
        self._loading = False
        self._build()
        if definition is None:
            self._redraw()
        elif isinstance(definition, (str, Path)) and str(definition) in examples.names():
            self.load_example(str(definition))
        else:
            self.load(definition)
        self.history.clear()  # what the Designer opened with is where undo stops
        self._clean = self._state
        self._sync_history()

    @classmethod
    def from_example(cls, name: str) -> Designer:
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

    @property
    def dirty(self) -> bool:
        """Whether there are edits since the definition was opened, loaded or exported."""
        return self._state != self._clean

    def refresh(self) -> None:
        """Re-lint and redraw (after changing :attr:`definition` in place); a change is one
        history step like any other."""
        self._changed()

    # ------------------------------------------------------------------ history

    def undo(self) -> bool:
        """Take back the last change (any kind: canvas, form, code, loading a file).
        Returns False when there is nothing to undo."""
        return self._travel(self.history.undo(self._state), "undid the last change", "nothing to undo")

    def redo(self) -> bool:
        """Make again the last change undone. Returns False when there is nothing to redo."""
        return self._travel(self.history.redo(self._state), "redid it", "nothing to redo")

    def _travel(self, state: str | None, done: str, nothing: str) -> bool:
        if state is None:
            self._say(nothing, "info")
            return False
        self._raw, self._state = restore(state), state
        self._redraw(done)
        return True

    # ------------------------------------------------------------------ selection

    @property
    def selection(self) -> tuple | None:
        """What is selected: ``("node", id)``, ``("edge", index)``, ``("group", id)`` or None."""
        return self._selection

    def select(self, target) -> tuple | None:
        """Select a node, edge or group and open its form: a node id, ``("edge", i)``,
        ``("group", id)``, or a key such as ``"node:draft"``, ``"edge:2"``, ``"group:board"``
        (the form lint findings use); ``None`` or ``""`` clears the selection."""
        key = self._key(target)
        self._selection = key
        self.canvas.selection = f"{key[0]}:{key[1]}" if key else ""
        self.canvas.highlight = ""
        if key is not None:
            editor = {"node": self.node_editor, "edge": self.edge_editor, "group": self.group_editor}[key[0]]
            self.tabs.selected_index = _KINDS.index(key[0])
            if editor.list.value != key[1]:
                editor.list.value = key[1]  # its observer refreshes the form
        return key

    def _select_from_form(self, key: tuple) -> None:
        """A pick in a form's list: the canvas shows it selected (the form is already open)."""
        self._selection = key
        self.canvas.selection = f"{key[0]}:{key[1]}"
        self.canvas.highlight = ""

    def select_finding(self, index: int) -> tuple | None:
        """Select and highlight what lint finding ``index`` concerns (None when it names no
        node, edge or group, e.g. a definitionId rule)."""
        target = self.scene["findings"][index]["target"]
        key = self.select(target) if target else None
        self.canvas.highlight = target or ""
        return key

    def _key(self, target) -> tuple | None:
        if target is None or target == "":
            return None
        if isinstance(target, str) and target.split(":", 1)[0] in _KINDS and ":" in target:
            kind, ref = target.split(":", 1)
            target = (kind, int(ref) if kind == "edge" else ref)
        if isinstance(target, str):
            target = ("node", target) if target in edits.node_ids(self._raw) else ("group", target)
        kind, ref = target
        if kind == "node":
            edits.find_node(self._raw, ref)
        elif kind == "group":
            edits.find_group(self._raw, ref)
        elif not (kind == "edge" and isinstance(ref, int) and 0 <= ref < len(self._raw.get("edges") or [])):
            raise KeyError(f"There is no {kind} {ref!r}.")
        return kind, ref

    def delete_selection(self) -> None:
        """Remove what is selected (a node goes with its edges; the canvas asks first when
        there are any). Undo brings it all back."""
        if self._selection is None:
            return
        kind, ref = self._selection
        remove: dict[str, Callable[[Any], object]] = {
            "node": self.remove_node,
            "edge": self.remove_edge,
            "group": self.remove_group,
        }
        remove[kind](ref)

    # ------------------------------------------------------------------ whole definitions

    def new(self, definition_id: str = "my-workflow", name: str = "My workflow") -> dict:
        """Start from scratch: an empty definition."""
        self._raw = edits.new_definition(definition_id, name)
        self._changed(f"new definition {definition_id}", clean=True)
        return self._raw

    def load(self, source) -> dict:
        """Start from a definition: a dict (copied; a ``{"data": …}`` envelope is removed), a
        JSON string, or the path of a JSON file. One undoable step."""
        if isinstance(source, Path) or (isinstance(source, str) and not source.lstrip().startswith("{")):
            path = Path(source)
            raw = json.loads(path.read_text(encoding="utf-8"), parse_constant=_not_json)
            what = f"opened {path}"
        elif isinstance(source, str):
            raw, what = json.loads(source, parse_constant=_not_json), "loaded"
        else:
            raw, what = copy.deepcopy(source), "loaded"
        raw = unwrap(raw)
        if not isinstance(raw, dict):
            raise ValueError("A definition is a JSON object.")
        # a DefinitionView's read-only fields
        for key in ("version", "compiled", "createdAt", "updatedAt", "status", "warnings"):
            raw.pop(key, None)
        self._raw = raw
        self._changed(f"{what} {raw.get('definitionId', '')}", clean=True)
        return self._raw

    def load_example(self, name: str) -> dict:
        """Start from one of :func:`toolkit.examples.names`."""
        self.load(examples.load(name))
        self._set_quiet(self.example_field, name)
        self._say(f"loaded example {name}")
        return self._raw

    def set_info(
        self, definition_id: str | None = None, name: str | None = None, description: str | None = None
    ) -> dict:
        """Change the definition's id, name or description (``""`` removes the description)."""
        self._edit(lambda: edits.set_info(self._raw, definition_id, name, description))
        return self._raw

    def export(self, path=None, *, envelope: bool = True, force: bool = False) -> Path:
        """Write the definition as JSON to ``path`` (default ``<definitionId>.json``).

        With ``envelope`` (the default) the file is the HTTP body of
        ``POST /v2/workflow/definitions/create``, ``{"data": <definition>}``, to send as it
        is (``curl -d @file``); without, it is the bare definition (like the files in
        ``toolkit/examples``). Both open again in the Designer and in ``collab lint``. A
        definition with lint errors is refused (the server would refuse it) unless ``force``
        (the "Export anyway" button).
        """
        if self.errors and not force:
            raise ValueError(
                f"{len(self.errors)} lint error(s) to fix first: the server would refuse this "
                f"definition. Export anyway to keep a draft."
            )
        path = Path(path or f"{self._raw.get('definitionId') or 'definition'}.json")
        body = {"data": self._raw} if envelope else self._raw
        path.write_text(json.dumps(body, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        self._clean = self._state
        self._say(f"exported {path}")
        return path

    # ------------------------------------------------------------------ nodes, edges, groups

    def add_node(
        self,
        node_id: str | None = None,
        type: str = "human",
        *,
        name: str | None = None,
        sla_ms: int | None = None,
        config: dict | None = None,
        description: str | None = None,
        position: tuple[float, float] | None = None,
    ) -> dict:
        """Add a node (``type`` human, agent or webhook). Without ``config`` it gets a
        starting one: a placeholder mandatory reviewer, an agent named after the node, or an
        empty webhook config. Without ``node_id`` it is named after its type
        (``human-1``…); ``position`` (x, y) places it there on the canvas (as a drag would).
        Returns the node dict."""
        node_id = node_id or self.new_node_id(type)

        def change():
            node = edits.add_node(
                self._raw, node_id, type, name=name, sla_ms=sla_ms, config=config, description=description
            )
            if position is not None:
                edits.move_node(self._raw, node_id, *position)
            return node

        return self._edit(change, f"added node {node_id}", ("node", node_id))

    def new_node_id(self, type: str = "human") -> str:
        """The first free id of the form ``<type>-<n>``."""
        taken, n = set(edits.node_ids(self._raw)), 1
        while f"{type}-{n}" in taken:
            n += 1
        return f"{type}-{n}"

    def update_node(self, node_id: str, **changes) -> dict:
        """Change a node: ``name``, ``sla_ms``, ``description``, ``config``, ``type`` or
        ``node_id`` (renames it in edges and groups too); ``None`` removes a field."""
        node = self._edit(lambda: edits.update_node(self._raw, node_id, **changes))
        self._select_quiet(("node", node["nodeId"]))
        return node

    def set_reviewers(self, node_id: str, reviewers) -> dict:
        """Set a human node's reviewers: ``[(userId, mandatory), …]`` or ``[userId, …]``."""
        return self._edit(lambda: edits.set_reviewers(self._raw, node_id, reviewers), select=("node", node_id))

    def remove_node(self, node_id: str) -> None:
        """Remove a node with the edges that touch it and its group memberships (undo brings
        them back)."""
        dropped = edits.remove_node(copy.deepcopy(self._raw), node_id)
        self._edit(
            lambda: edits.remove_node(self._raw, node_id),
            f"removed node {node_id}" + (f" and {dropped} edge(s)" if dropped else "") + " (Ctrl+Z undoes)",
        )

    def move_node(self, node_id: str, x: float, y: float) -> dict:
        """Keep a node at (x, y) on the canvas (a drag): stored in ``custom.layout``, so it
        survives export, the server and reopening."""
        return self._edit(lambda: edits.move_node(self._raw, node_id, x, y), select=("node", node_id), layout_only=True)

    def relayout(self) -> None:
        """Forget every dragged position: graphviz places every node again."""
        self._edit(lambda: edits.clear_layout(self._raw), "every node placed by graphviz again", layout_only=True)

    def add_edge(
        self, source, target, on: str = "always", *, when: str | dict | None = None, max_iterations: int | None = None
    ) -> int:
        """Add an edge and return its index. ``source``/``target``: a node id or
        ``("group", groupId)``; ``on``: approve, reject, always, exhausted or custom;
        ``when``: the predicate of a custom edge (a JSON string or its AST as a dict; see
        :func:`toolkit.widgets.when.build_when`); ``max_iterations`` makes it a loop-back."""
        if isinstance(when, dict):
            when = json.dumps(when, ensure_ascii=False)
        index = len(self._raw.get("edges") or [])
        self._edit(
            lambda: edits.add_edge(self._raw, source, target, on, when=when, max_iterations=max_iterations),
            f"added edge {index}",
            ("edge", index),
        )
        return index

    def connect(self, source: str, target: str, role: str = "always") -> int:
        """What dragging from a node's handle onto a node or group does: an edge from
        ``source`` to ``target`` (selection keys such as ``node:draft``, ``group:board``, or
        node ids) with ``role``; ``reject-loop`` is a reject loop-back of at most 3 iterations.
        A custom edge starts with a predicate on ``output.decision`` to edit in its form."""
        ends = [self._key(source), self._key(target)]
        if ends[0] is None or ends[1] is None:
            raise KeyError("An edge needs a source and a target.")
        if role == "reject-loop":
            return self.add_edge(ends[0], ends[1], on="reject", max_iterations=3)
        when = {"op": "eq", "args": [{"var": "output.decision"}, "approve"]} if role == "custom" else None
        return self.add_edge(ends[0], ends[1], on=role, when=when)

    def update_edge(self, index: int, **changes) -> dict:
        """Change edge ``index``: ``source``, ``target``, ``on``, ``when`` (``None`` removes
        it), ``max_iterations`` (``None`` or 0 removes the loop)."""
        if isinstance(changes.get("when"), dict):
            changes["when"] = json.dumps(changes["when"], ensure_ascii=False)
        return self._edit(lambda: edits.update_edge(self._raw, index, **changes), select=("edge", index))

    def remove_edge(self, index: int) -> dict:
        return self._edit(lambda: edits.remove_edge(self._raw, index), f"removed edge {index} (Ctrl+Z undoes)")

    def add_group(
        self,
        group_id: str,
        members=(),
        *,
        policy: str = "waitAll",
        quorum: int | None = None,
        required=(),
        name: str | None = None,
    ) -> dict:
        """Add a group: ``members`` (node ids), ``policy`` (waitAll, joinOnQuorum,
        cancelOnQuorum), ``quorum`` (default: every member), ``required`` members."""
        return self._edit(
            lambda: edits.add_group(
                self._raw, group_id, members, policy=policy, quorum=quorum, required=required, name=name
            ),
            f"added group {group_id}",
            ("group", group_id),
        )

    def update_group(self, group_id: str, **changes) -> dict:
        """Change a group: ``members``, ``policy``, ``quorum``, ``required``, ``name`` or
        ``group_id`` (renames it in edges too); ``None`` removes an optional field."""
        group = self._edit(lambda: edits.update_group(self._raw, group_id, **changes))
        self._select_quiet(("group", group["groupId"]))
        return group

    def remove_group(self, group_id: str) -> None:
        """Remove a group and the edges from or to it."""
        dropped = edits.remove_group(copy.deepcopy(self._raw), group_id)
        self._edit(
            lambda: edits.remove_group(self._raw, group_id),
            f"removed group {group_id}" + (f" and {dropped} edge(s)" if dropped else "") + " (Ctrl+Z undoes)",
        )

    # ------------------------------------------------------------------ one step

    def _edit(self, change, message: str | None = None, select: tuple | None = None, layout_only: bool = False):
        """Apply ``change`` to the definition as one history step; when it fails half-way,
        the definition is put back as it was (a refused edit changes nothing). A
        ``layout_only`` change (dragged positions in ``custom.layout``) keeps the lint
        findings and the picture's layout: the linter does not read ``custom``, and the DOT
        text does not hold positions, so a drag costs no lint and no graphviz run."""
        custom = self._raw.get("custom")
        keep = layout_only and self.view is not None and (custom is None or isinstance(custom, dict))
        try:
            result = change()
        except Exception:
            self._raw = restore(self._state)
            raise
        self._changed(message, select, keep_lint=keep)
        return result

    def _changed(
        self, message: str | None = None, select: tuple | None = None, clean: bool = False, keep_lint: bool = False
    ) -> None:
        state = snapshot(self._raw)
        if state != self._state:
            self.history.record(self._state)
            self._state = state
        if clean:
            self._clean = state
        self._redraw(message, select, keep_lint)

    def _redraw(self, message: str | None = None, select: tuple | None = None, keep_lint: bool = False) -> None:
        """Lint, lay out and show the definition, or show the picture kept for this very text
        (everything drawn is a function of it)."""
        drawn = self._drawn.get(self._state)
        if drawn is not None:
            self._drawn.move_to_end(self._state)
            self.model, self.findings, self.view, self._scene_text = drawn
        else:
            if keep_lint:
                if self.model is not None:
                    self.model = self.model.model_copy(update={"custom": copy.deepcopy(self._raw.get("custom"))})
            else:
                definition, findings = lint_document(self._raw)
                self.model, self.findings = definition, findings
                self.view = preview(self._raw, findings, definition)
            self._scene_text = orjson.dumps(scene_data(self._raw, self.findings, self.view)).decode("utf-8")
            self._drawn[self._state] = (self.model, self.findings, self.view, self._scene_text)
            if len(self._drawn) > DRAWN:
                self._drawn.popitem(last=False)
        self._scene = None
        self._show(self._scene_text, message, select)

    @property
    def scene(self) -> dict:
        """What the canvas draws (:func:`~toolkit.widgets.canvas_scene.scene_data`), read
        back from the JSON text it is sent as."""
        if self._scene is None:
            self._scene = orjson.loads(self._scene_text)
        return self._scene

    def _select_quiet(self, key: tuple) -> None:
        """Keep the selection on an item that was renamed (its form stays open)."""
        if self._selection is not None and self._selection[0] == key[0]:
            self._selection = key
            self.canvas.selection = f"{key[0]}:{key[1]}"

    def __repr__(self) -> str:
        errors = len(self.errors)
        return (
            f"<Designer {self._raw.get('definitionId')!r}: {len(self._raw.get('nodes') or [])} nodes, "
            f"{len(self._raw.get('edges') or [])} edges, {errors} error(s), "
            f"{len(self.findings) - errors} warning(s)>"
        )
