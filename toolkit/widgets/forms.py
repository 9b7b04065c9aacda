"""What the Designer's three editors (nodes, edges, groups) share.

Each editor is a list of the items, an "add" row, a remove button and a form for the
selected item. A form change calls the matching :class:`~toolkit.widgets.Designer` method
(the same one a Python caller uses), so a value typed in a form and a method call leave the
definition in the same state. ``refresh()`` re-reads the definition after any change; it
sets widget values under a guard so that no handler fires while it does.
"""

from __future__ import annotations

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
    return w.Text(description=description, placeholder=placeholder, continuous_update=False, style=DESC,
                  layout=wide(), **kw)


def button(description: str, tooltip: str = "", style: str = "") -> w.Button:
    return w.Button(description=description, tooltip=tooltip or description, button_style=style,
                    layout=w.Layout(width="auto"))


class Editor:
    """Shared plumbing: a guard while the form is filled from the definition, and helpers to
    set a selection widget's options without losing (or announcing) its value."""

    def __init__(self, designer):
        self.designer = designer
        self._loading = False

    @property
    def raw(self) -> dict:
        return self.designer.definition

    def _on(self, widget, handler) -> None:
        def call(change):
            if not self._loading:
                self.designer._run(handler)
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
