"""What the Designer's three editors (nodes, edges, groups) share.

Each editor is a list of the items, an "add" row, a remove button and a form for the
selected item. A form change calls the matching :class:`~toolkit.widgets.Designer` method
(the same one a Python caller uses), so a value typed in a form and a method call leave the
definition in the same state. ``refresh()`` re-reads the definition after any change; it
sets widget values under a guard so that no handler fires while it does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import ipywidgets as w

__all__ = ["Editor", "NODE_TYPES", "ROLES", "POLICIES", "DESC", "wide", "text_field", "button"]

NODE_TYPES = ("human", "agent", "webhook")
ROLES = ("approve", "reject", "always", "exhausted", "custom")
POLICIES = ("waitAll", "joinOnQuorum", "cancelOnQuorum")
DESC = {"description_width": "110px"}


def wide() -> w.Layout:
    """A fresh layout as wide as the editor (a Layout shared between widgets would be one)."""
    return w.Layout(width="95%")


def text_field(description: str, placeholder: str = "", **kw) -> w.Text:
    """A text field that reports when the person is done typing (Enter or leaving the field)."""
    return w.Text(
        description=description, placeholder=placeholder, continuous_update=False, style=DESC, layout=wide(), **kw
    )


def button(description: str, tooltip: str = "", style: str = "") -> w.Button:
    return w.Button(
        description=description, tooltip=tooltip or description, button_style=style, layout=w.Layout(width="auto")
    )


class Editor:
    """Shared plumbing: a guard while the form is filled from the definition, helpers to
    set a selection widget's options without losing (or announcing) its value, a message
    line under the add row (an error shows there, beside the control that caused it) and a
    question row for actions that take more than they say."""

    kind = ""  # "node", "edge" or "group": what the list selects on the canvas too
    list: w.Select  # each editor's list of its nodes, edges or groups

    if TYPE_CHECKING:

        def _refresh(self) -> None: ...  # each editor fills its form from the definition

    def __init__(self, designer):
        self.designer = designer
        self._loading = False
        self.message = w.HTML()
        self.message.add_class(f"collab-{self.kind}-message")
        self.question = w.HTML()
        self.yes = w.Button(description="Remove", button_style="danger", layout=w.Layout(width="auto"))
        self.no = w.Button(description="Cancel", layout=w.Layout(width="auto"))
        self.ask_row = w.HBox([self.question, self.yes, self.no], layout=w.Layout(display="none", align_items="center"))
        self._pending = None
        self.yes.on_click(lambda _: self._answer(True))
        self.no.on_click(lambda _: self._answer(False))

    def run(self, action) -> None:
        """Run a form action; an error shows in this editor's message line."""
        self.designer._run(action, self.message)

    def ask(self, question: str, action) -> None:
        """Ask before ``action`` (the Remove button when edges would go with a node)."""
        self.question.value = f'<b style="color:#B26A00">{question}</b>&nbsp;'
        self.ask_row.layout.display = "flex"
        self._pending = action

    def _answer(self, yes: bool) -> None:
        action, self._pending = self._pending, None
        self.ask_row.layout.display = "none"
        if yes and action is not None:
            self.run(action)

    def _picked(self, change) -> None:
        """The person picked an item in the list: it is the canvas's selection too."""
        if not self._loading:
            self.refresh()
            if change["new"] is not None:
                self.designer._select_from_form((self.kind, change["new"]))

    @property
    def raw(self) -> dict:
        return self.designer.definition

    def _on(self, widget, handler) -> None:
        def call(change):
            if not self._loading:
                self.run(handler)

        widget.observe(call, names="value")

    def _set(self, widget, value) -> None:
        if widget.value != value:
            widget.value = value

    def _options(self, widget, options, keep=None) -> None:
        values = [o[1] if isinstance(o, tuple) else o for o in options]
        if list(widget.options) != list(options):
            widget.options = options
        if isinstance(widget, w.SelectMultiple):
            self._set(widget, tuple(v for v in (keep or ()) if v in values))
        else:
            self._set(widget, keep if keep in values else (values[0] if values else None))

    def refresh(self) -> None:
        self._loading = True
        try:
            self._refresh()
        finally:
            self._loading = False
