"""The Designer's canvas: the graph as an editor (an ``anywidget``).

The browser side (the ES modules in ``canvas_js/``, joined into one by
:func:`toolkit.widgets.bundle.bundle`, and ``canvas.css``, shipped in the package) draws
:attr:`Canvas.scene` and reports gestures as messages; this side hands each message to the
Designer method of the same name, so a click and a call from Python do the same thing.
State is a few synced traits: ``scene`` (the picture's data,
:func:`toolkit.widgets.canvas_scene.scene_data`, as JSON text: sent as one string, which
costs far less than ipywidgets walking a nested dict of every drawing operation), ``selection`` and ``highlight``
(selection keys such as ``node:draft``), ``history`` (steps that can be undone / redone),
``status`` (the last canvas action's message) and ``zoom`` (written by the browser).
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from toolkit.widgets.bundle import bundle

__all__ = ["Canvas"]

_HERE = Path(__file__).parent


class Canvas(anywidget.AnyWidget):
    """The picture of the definition; gestures call ``designer`` methods."""

    _esm = bundle(_HERE / "canvas_js", "canvas.js")
    _css = _HERE / "canvas.css"

    scene = traitlets.Unicode("").tag(sync=True)  # JSON text: one string, not a tree to walk
    selection = traitlets.Unicode("").tag(sync=True)
    highlight = traitlets.Unicode("").tag(sync=True)
    history = traitlets.List([0, 0]).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    zoom = traitlets.Float(1.0).tag(sync=True)

    def __init__(self, designer, **kwargs):
        super().__init__(**kwargs)
        self._designer = designer
        self.on_msg(self._message)

    def fit(self) -> None:
        """Zoom so that the whole graph shows (the "Fit" button)."""
        self.send({"type": "fit"})

    def say(self, text: str, kind: str = "ok") -> None:
        """Show a message in the canvas's toolbar (``ok`` or ``error``)."""
        self.status = f"{text}\0{kind}" if text else ""

    def _message(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict):
            self._designer._canvas_action(content)
