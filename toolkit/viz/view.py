"""View: a rendered picture that shows itself in Jupyter and saves to SVG, PNG or PDF.

>>> import graphviz
>>> view = View(graphviz.Digraph("g", body=['\\ta -> b\\n']))
>>> view.svg().lstrip().startswith("<?xml")
True
>>> "image/svg+xml" in view._repr_mimebundle_()
True
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import graphviz

if TYPE_CHECKING:
    from toolkit.viz.scene import Scene

__all__ = ["View"]

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}
PNG_DPI = 144  # PNGs for docs and slides: twice graphviz's 72 dpi, crisp on high-density screens


class View:
    """A graphviz picture. ``source`` is the DOT text, ``svg()`` the rendered SVG (cached),
    ``save(path)`` writes ``.svg``, ``.png`` or ``.pdf`` by the suffix. The same input always
    gives byte-identical output (no timestamps, nothing in hash order).

    Made from a :class:`~toolkit.viz.scene.Scene` (``View(scene=…)``), it keeps the scene
    (the items with their tooltips, for a reader such as the Designer's canvas) and writes
    the DOT text only when it is first asked for; the scene is not to be changed after."""

    def __init__(self, graph: graphviz.Digraph | None = None, *, scene: Scene | None = None):
        if graph is None and scene is None:
            raise TypeError("a View needs a graph or a scene")
        self._graph = graph
        self.scene = scene
        self._svg: str | None = None

    @property
    def graph(self) -> graphviz.Digraph:
        """The graphviz graph (written from the scene on first use)."""
        if self._graph is None:
            assert self.scene is not None  # __init__ requires one of the two
            self._graph = self.scene.to_digraph()
        return self._graph

    @property
    def source(self) -> str:
        """The DOT text."""
        return self.graph.source

    def svg(self) -> str:
        """The picture as an SVG document (``dot -Tsvg``)."""
        if self._svg is None:
            self._svg = _pipe(self.graph, "svg").decode("utf-8")
        return self._svg

    def render(self, format: str, dpi: int | None = None) -> bytes:
        """The picture in any graphviz output ``format`` (``png``, ``pdf``...) as bytes."""
        graph = self.graph
        if dpi is not None:
            graph = graph.copy()
            graph.body.insert(0, f'\tgraph [dpi="{int(dpi)}"]\n')
        return _pipe(graph, format)

    def save(self, path, dpi: int = PNG_DPI) -> Path:
        """Write the picture to ``path``; the suffix (.svg, .png, .pdf) picks the format.
        ``dpi`` applies to PNG only."""
        path = Path(path)
        fmt = FORMATS.get(path.suffix.lower())
        if fmt is None:
            raise ValueError(f"{path.name}: unknown picture format; use one of {', '.join(FORMATS)}")
        if fmt == "svg":
            data = self.svg().encode("utf-8")
        else:
            data = self.render(fmt, dpi=dpi if fmt == "png" else None)
        path.write_bytes(data)
        return path

    def _repr_svg_(self) -> str:
        return self.svg()

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        bundle = {"image/svg+xml": self.svg(), "text/plain": repr(self)}
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include}
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude}
        return bundle

    def __repr__(self) -> str:
        return f"<View {self.graph.name!r}: {self.source.count(' -> ')} edges>"


def _pipe(graph: graphviz.Digraph, format: str) -> bytes:
    try:
        return graph.pipe(format=format, quiet=True)
    except graphviz.ExecutableNotFound as exc:
        raise RuntimeError(
            "the graphviz program 'dot' is not installed: run 'make graphviz', "
            "'sudo apt-get install graphviz', 'brew install graphviz' or "
            "'conda env create -f environment.yml'"
        ) from exc
