"""Jupyter widgets (ipywidgets) over the toolkit: design, replay and simulate workflows.

- :class:`Designer` — build a definition with forms (or from Python), watch its graph and
  lint findings update on every change, export the JSON the server accepts.
- :class:`Player` — step through an execution's events (a simulated run, or a server's
  event log fetched with a client), the picture redrawn at each event.
- :class:`SimulationPanel` — run N simulations with reviewer and agent odds on sliders;
  outcome table, cycle-time histogram and heat map.

Each widget shows itself when it is the last expression of a cell, and every button calls a
method that Python code (and the tests) can call as well.

>>> from toolkit.widgets import Designer
>>> Designer("parallel-review").findings
[]
"""

from toolkit.widgets.designer import Designer
from toolkit.widgets.player import Player
from toolkit.widgets.simulation import SimulationPanel

__all__ = ["Designer", "Player", "SimulationPanel"]
