"""Pictures of workflows (graphviz): a definition, a running execution, a simulation heat map.

>>> from toolkit import examples
>>> from toolkit.viz import render_definition
>>> view = render_definition(examples.load("parallel-review"))
>>> view.save("parallel-review.svg")          # doctest: +SKIP
>>> view                                       # in Jupyter: drawn inline  # doctest: +SKIP

Every function returns a :class:`View` (``.svg()``, ``.source``, ``.save(path)``). In the
SVG a node is ``<g id="node-<nodeId>">`` titled with its nodeId, an edge ``edge-<index>``
(its index among the authored edges), a group ``group-<groupId>``.
"""

from toolkit.viz.definition import render_definition
from toolkit.viz.execution import render_execution, render_execution_from_events
from toolkit.viz.heatmap import render_heatmap
from toolkit.viz.heatmap_diff import render_heatmap_diff
from toolkit.viz.view import View

__all__ = [
    "View",
    "render_definition",
    "render_execution",
    "render_execution_from_events",
    "render_heatmap",
    "render_heatmap_diff",
]
