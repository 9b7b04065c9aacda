"""SimulationPanel: run a definition N times with reviewer and agent odds on sliders.

One slider per reviewer of the definition (the chance they approve), one per non-blocking
agent (the chance it fails) and one per blocking agent (the chance a resolution succeeds).
"Run" simulates with those odds over an optional base policy (latencies, arrival interval…),
then shows the outcome table, a cycle-time histogram and the heat map.

>>> from toolkit import examples
>>> panel = SimulationPanel(examples.load("parallel-review"), runs=200, seed=1)
>>> sorted(panel.reviewer_sliders), sorted(panel.agent_sliders)
(['alice@legal', 'bob@brand'], ['copywriter', 'publisher'])
>>> panel.reviewer_sliders["alice@legal"].value = 0.5
>>> panel.policy["reviewers"]["alice@legal"]
{'approve': 0.5}
>>> result = panel.run()
>>> int(panel.outcomes["runs"].sum())
200
"""

from __future__ import annotations

import copy
from html import escape

import ipywidgets as w

from toolkit.simulate import Policy, simulate
from toolkit.viz import render_heatmap
from toolkit.viz.definition import as_definition
from toolkit.widgets.charts import histogram_svg
from toolkit.widgets.panes import guarded, message_html, svg_html, table_html

__all__ = ["SimulationPanel"]

_SLIDER = {"min": 0.0, "max": 1.0, "step": 0.01, "readout_format": ".2f", "continuous_update": False,
           "style": {"description_width": "170px"}, "layout": w.Layout(width="380px")}

OUTCOME_SQL = """
SELECT status,
       coalesce(failure_reason, '') AS reason,
       count(*) AS runs,
       round(100.0 * count(*) / sum(count(*)) OVER (), 1) AS "share %",
       round(median(cycle_time_ms) / 3600000, 2) AS "median cycle (h)",
       round(avg(iterations), 2) AS "mean iterations"
FROM outcomes
GROUP BY ALL
ORDER BY runs DESC, status, reason
"""


class SimulationPanel:
    """Sliders for the odds, a Run button with a progress bar, and the results.

    From Python: set ``reviewer_sliders[userId].value``, ``agent_sliders[agentId].value``
    or ``resolution_sliders[agentId].value``, then :meth:`run`. Results: :attr:`result`
    (the :class:`~toolkit.simulate.SimulationResult`), :attr:`outcomes` (a pandas
    DataFrame), :attr:`histogram` (SVG text), :attr:`heatmap` (a
    :class:`~toolkit.viz.View`); :attr:`policy` is the policy the sliders make.
    """

    def __init__(self, definition, runs: int = 1000, seed: int = 0, policy=None):
        self.definition = definition
        self.model = as_definition(definition)
        self.base_policy: dict = (policy.to_json() if isinstance(policy, Policy) else copy.deepcopy(policy or {}))
        base = Policy.load(self.base_policy)
        self.result = None
        self.outcomes = None
        self.histogram: str | None = None
        self.heatmap = None
        self.last_error: Exception | None = None
        self.last_traceback: str | None = None

        self.reviewer_sliders: dict[str, w.FloatSlider] = {}
        self.agent_sliders: dict[str, w.FloatSlider] = {}
        self.resolution_sliders: dict[str, w.FloatSlider] = {}
        for node in self.model.nodes:
            if node.config is None:
                continue
            if node.type == "human":
                for reviewer in node.config.reviewer_list:
                    if reviewer.user_id not in self.reviewer_sliders:
                        value = base.reviewer(node.node_id, reviewer.user_id).approve
                        self.reviewer_sliders[reviewer.user_id] = w.FloatSlider(
                            value=value, description=f"{reviewer.user_id} approves", **_SLIDER)
            elif node.type == "agent":
                agent_id = node.config.agent_id
                if node.config.blocking and agent_id not in self.resolution_sliders:
                    value = base.resolution(node.node_id, agent_id).success
                    self.resolution_sliders[agent_id] = w.FloatSlider(
                        value=value, description=f"{agent_id} resolution succeeds", **_SLIDER)
                elif not node.config.blocking and agent_id not in self.agent_sliders:
                    value = base.agent(node.node_id, agent_id).fail
                    self.agent_sliders[agent_id] = w.FloatSlider(value=value, description=f"{agent_id} fails",
                                                                 **_SLIDER)

        self.runs = w.BoundedIntText(value=runs, min=1, max=1_000_000, step=1000, description="runs",
                                     style={"description_width": "60px"}, layout=w.Layout(width="180px"))
        self.seed = w.IntText(value=seed, description="seed", style={"description_width": "40px"},
                              layout=w.Layout(width="140px"))
        self.button = w.Button(description="Run simulation", button_style="primary", icon="play",
                               layout=w.Layout(width="auto"))
        self.button.on_click(lambda _: self._run(self.run))
        self.progress = w.IntProgress(value=0, min=0, max=1, description="progress",
                                      style={"description_width": "60px"}, layout=w.Layout(width="380px"))
        self.status = w.HTML()
        self.table = w.HTML()
        self.table.add_class("collab-simulation-outcomes")
        self.chart = w.HTML()
        self.chart.add_class("collab-simulation-histogram")
        self.heat = w.HTML()
        self.heat.add_class("collab-simulation-heatmap")

        def section(title, sliders):
            return [w.HTML(f"<b>{escape(title)}</b>"), *sliders.values()] if sliders else []

        controls = w.VBox([w.HBox([self.runs, self.seed]),
                           *section("Reviewers: chance to approve", self.reviewer_sliders),
                           *section("Agents: chance to fail", self.agent_sliders),
                           *section("Blocking agents: chance a resolution succeeds", self.resolution_sliders),
                           self.button, self.progress, self.status],
                          layout=w.Layout(width="400px", min_width="400px"))
        results = w.VBox([self.table, self.chart], layout=w.Layout(padding="0 0 0 16px"))
        self.widget = w.VBox([w.HBox([controls, results]), self.heat])
        self.widget.add_class("collab-simulation-panel")

    @property
    def policy(self) -> dict:
        """The base policy with the sliders' odds written in (most specific keys)."""
        policy = copy.deepcopy(self.base_policy)
        for user, slider in self.reviewer_sliders.items():
            policy.setdefault("reviewers", {}).setdefault(user, {})["approve"] = round(slider.value, 4)
        for agent, slider in self.agent_sliders.items():
            policy.setdefault("agents", {}).setdefault(agent, {})["fail"] = round(slider.value, 4)
        for agent, slider in self.resolution_sliders.items():
            policy.setdefault("resolutions", {}).setdefault(agent, {})["success"] = round(slider.value, 4)
        return policy

    def run(self, runs: int | None = None, seed: int | None = None):
        """Simulate (``runs`` and ``seed`` default to the panel's fields) and show the results."""
        if runs is not None:
            self.runs.value = runs
        if seed is not None:
            self.seed.value = seed
        runs, seed = self.runs.value, self.seed.value
        self.button.disabled = True
        self.status.value = message_html(f"simulating {runs:,} runs…")
        try:
            self.progress.max, self.progress.value = max(1, runs), 0
            result = simulate(self.definition, runs=runs, seed=seed, policy=self.policy,
                              progress=lambda done, total: setattr(self.progress, "value", done),
                              batch_runs=max(50, runs // 25))
        finally:
            self.button.disabled = False
        self._show(result)
        return result

    def _show(self, result) -> None:
        self.result = result
        self.outcomes = result.sql(OUTCOME_SQL).df()
        cycle = [row[0] for row in result.sql(
            "SELECT cycle_time_ms FROM outcomes WHERE status <> 'running' AND cycle_time_ms IS NOT NULL").fetchall()]
        self.histogram = histogram_svg(cycle, title=f"Cycle time of {len(cycle):,} finished runs")
        self.heatmap = render_heatmap(self.model, result.summary)
        s = result.summary
        ct = s.cycle_time_ms
        facts = (f"p50 {ct['p50'] / 3_600_000:.2f} h · p90 {ct['p90'] / 3_600_000:.2f} h · "
                 if ct.get("p50") is not None else "") + f"SLA breach rate {s.sla_breach_rate:.1%}"
        self.table.value = (f"<b>Outcomes of {result.runs:,} runs</b> (seed {result.seed})"
                            f"{table_html(self.outcomes)}"
                            f'<div style="font-size:12px;margin:4px 0">{escape(facts)}</div>')
        self.chart.value = self.histogram
        self.heat.value = svg_html(self.heatmap, "collab-graph", fit=True)
        self.status.value = message_html(f"{result.runs:,} runs done", "ok")

    @guarded
    def _run(self, action):
        return action()

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = repr(self)   # what a page without the widget shows
        return bundle

    def __repr__(self) -> str:
        return f"<SimulationPanel {self.model.definition_id!r}: {len(self.reviewer_sliders)} reviewers, " \
               f"{len(self.agent_sliders) + len(self.resolution_sliders)} agents>"
