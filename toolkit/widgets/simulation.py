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
import threading
import traceback
from html import escape

import ipywidgets as w

from toolkit.simulate import Policy, simulate
from toolkit.viz import View, render_heatmap
from toolkit.viz.definition import as_definition
from toolkit.viz.names import Names
from toolkit.widgets.charts import histogram_svg
from toolkit.widgets.panes import message_html, plain_error, svg_html, table_html

__all__ = ["SimulationPanel"]

_SLIDER = {
    "min": 0.0,
    "max": 1.0,
    "step": 0.01,
    "readout_format": ".2f",
    "continuous_update": False,
    "style": {"description_width": "170px"},
    "layout": w.Layout(width="380px"),
}

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


def _check_runs(runs: int) -> None:
    if runs < 1:
        raise ValueError(f"Runs must be at least 1 (it is {runs}): nothing was simulated.")


class _Cancelled(Exception):
    """Raised from the progress callback to stop a run that was cancelled."""

    def __init__(self, done: int):
        super().__init__(f"cancelled after {done} runs")
        self.done = done


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
        self.names = Names(self.model)
        self.base_policy: dict = policy.to_json() if isinstance(policy, Policy) else copy.deepcopy(policy or {})
        base = Policy.load(self.base_policy)
        self.result = None
        self.outcomes = None
        self.histogram: str | None = None
        self.heatmap: View | None = None
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
                            value=value, description=f"{reviewer.user_id} approves", **_SLIDER
                        )
            elif node.type == "agent":
                agent_id = node.config.agent_id
                if node.config.blocking and agent_id not in self.resolution_sliders:
                    value = base.resolution(node.node_id, agent_id).success
                    self.resolution_sliders[agent_id] = w.FloatSlider(
                        value=value, description=f"{agent_id} resolution succeeds", **_SLIDER
                    )
                elif not node.config.blocking and agent_id not in self.agent_sliders:
                    value = base.agent(node.node_id, agent_id).fail
                    self.agent_sliders[agent_id] = w.FloatSlider(
                        value=value, description=f"{agent_id} fails", **_SLIDER
                    )

        # a plain IntText: a bounded one would silently turn 0 into 1 (run() refuses it, saying why)
        self.runs = w.IntText(
            value=runs,
            step=1000,
            description="runs",
            style={"description_width": "60px"},
            layout=w.Layout(width="180px"),
        )
        self.seed = w.IntText(
            value=seed, description="seed", style={"description_width": "40px"}, layout=w.Layout(width="140px")
        )
        self.button = w.Button(
            description="Run simulation", button_style="primary", icon="play", layout=w.Layout(width="auto")
        )
        self.button.on_click(lambda _: self._run(self.start))
        self.cancel_button = w.Button(description="Cancel", icon="stop", disabled=True, layout=w.Layout(width="auto"))
        self.cancel_button.on_click(lambda _: self.cancel())
        self.stale = False  # True when the odds changed since the results shown
        self._cancelling = threading.Event()
        self._thread: threading.Thread | None = None
        self.progress = w.IntProgress(
            value=0,
            min=0,
            max=1,
            description="progress",
            style={"description_width": "60px"},
            layout=w.Layout(width="380px"),
        )
        self.status = w.HTML()
        self.table = w.HTML()
        self.table.add_class("collab-simulation-outcomes")
        self.chart = w.HTML()
        self.chart.add_class("collab-simulation-histogram")
        self.heat = w.HTML()
        self.heat.add_class("collab-simulation-heatmap")

        def section(title, sliders):
            return [w.HTML(f"<b>{escape(title)}</b>"), *sliders.values()] if sliders else []

        controls = w.VBox(
            [
                w.HBox([self.runs, self.seed]),
                *section("Reviewers: chance to approve", self.reviewer_sliders),
                *section("Agents: chance to fail", self.agent_sliders),
                *section("Blocking agents: chance a resolution succeeds", self.resolution_sliders),
                w.HBox([self.button, self.cancel_button]),
                self.progress,
                self.status,
            ],
            layout=w.Layout(width="400px", min_width="400px"),
        )
        self._panes: tuple[str, str, str] = ("", "", "")  # outcome table, histogram, heat map (HTML)
        self.stale_note = w.HTML()
        self.stale_note.add_class("collab-simulation-stale")
        results = w.VBox([self.stale_note, self.table, self.chart], layout=w.Layout(padding="0 0 0 16px"))
        self.widget = w.VBox([w.HBox([controls, results]), self.heat])
        self.widget.add_class("collab-simulation-panel")
        for control in (
            *self.reviewer_sliders.values(),
            *self.agent_sliders.values(),
            *self.resolution_sliders.values(),
            self.runs,
            self.seed,
        ):
            control.observe(lambda _: self._mark_stale(), names="value")

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
        """Simulate (``runs`` and ``seed`` default to the panel's fields) and show the results.
        Refuses fewer than 1 run (ValueError, said on the status line too); returns None when
        :meth:`cancel` stopped it (the results shown stay those of the previous run)."""
        if runs is not None:
            self.runs.value = runs
        if seed is not None:
            self.seed.value = seed
        runs, seed = self.runs.value, self.seed.value
        _check_runs(runs)
        self._cancelling.clear()
        self.button.disabled, self.cancel_button.disabled = True, False
        self.status.value = message_html(f"simulating {runs:,} runs…")

        def progress(done: int, total: int) -> None:
            self.progress.value = done
            if self._cancelling.is_set():  # between two batches: the only place a run can stop
                raise _Cancelled(done)

        try:
            self.progress.max, self.progress.value = max(1, runs), 0
            result = simulate(
                self.definition,
                runs=runs,
                seed=seed,
                policy=self.policy,
                progress=progress,
                batch_runs=max(50, runs // 25),
            )
        except _Cancelled as stop:
            self.status.value = message_html(
                f"cancelled after {stop.done:,} of {runs:,} runs"
                + ("; the results shown are from the previous run" if self.result else "")
            )
            if self.result is not None:
                self._mark_stale()
            return None
        finally:
            self.button.disabled, self.cancel_button.disabled = False, True
        self._show(result)
        return result

    def start(self) -> None:
        """Run in a background thread (what the Run button does), so that Cancel can be
        clicked while it simulates; :meth:`wait` blocks until it is done."""
        if self._thread is not None and self._thread.is_alive():
            return
        _check_runs(self.runs.value)  # refused here, before a thread starts
        self._thread = threading.Thread(target=self._run, args=(self.run,), daemon=True, name="collab-simulation-panel")
        self._thread.start()

    def cancel(self) -> None:
        """Stop the run under way after its current batch of runs (a no-op when none runs)."""
        if not self.cancel_button.disabled:
            self._cancelling.set()
            self.status.value = message_html("cancelling…")

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a run started with :meth:`start` is over; False if still running after ``timeout`` s."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        return thread is None or not thread.is_alive()

    def _paint(self) -> None:
        """Show the results; faded while stale."""
        fade = '<div style="opacity:0.45">{}</div>' if self.stale else "{}"
        for pane, html in zip((self.table, self.chart, self.heat), self._panes):
            pane.value = fade.format(html) if html else ""

    def _mark_stale(self) -> None:
        if self.result is None or self.stale:
            return
        self.stale = True
        self.stale_note.value = (
            '<div style="background:#FFF3E0;color:#7A4A00;border-left:3px solid #EF6C00;'
            'padding:3px 8px;font-size:12px">⚠ Settings changed since this run: these results '
            "are out of date. Run the simulation again to update them.</div>"
        )
        self._paint()

    def _show(self, result) -> None:
        self.result = result
        outcomes = result.sql(OUTCOME_SQL).df()
        # failure reasons by name (a loop's source and entry, a node's name); the code in a tooltip
        reasons = {self.names.reason(code): code for code in outcomes["reason"] if code}
        outcomes["reason"] = [self.names.reason(code) for code in outcomes["reason"]]
        self.outcomes = outcomes
        cycle = [
            row[0]
            for row in result.sql(
                "SELECT cycle_time_ms FROM outcomes WHERE status <> 'running' AND cycle_time_ms IS NOT NULL"
            ).fetchall()
        ]
        self.histogram = histogram_svg(cycle, title=f"Cycle time of {len(cycle):,} finished runs")
        self.heatmap = heatmap = render_heatmap(self.model, result.summary)
        s = result.summary
        ct = s.cycle_time_ms
        facts = (
            f"p50 {ct['p50'] / 3_600_000:.2f} h · p90 {ct['p90'] / 3_600_000:.2f} h · "
            if ct.get("p50") is not None
            else ""
        ) + f"SLA breach rate {s.sla_breach_rate:.1%}"
        self._panes = (
            f"<b>Outcomes of {result.runs:,} runs</b> (seed {result.seed})"
            f"{table_html(self.outcomes, tooltips={'reason': reasons})}"
            f'<div style="font-size:12px;margin:4px 0">{escape(facts)}</div>',
            self.histogram,
            svg_html(heatmap, "collab-graph", fit=True),
        )
        self.status.value = message_html(f"{result.runs:,} runs done", "ok")
        self.stale = False
        self.stale_note.value = ""
        self._paint()

    def _run(self, action):
        """Run a button's action; an error shows on the status line in plain words and is
        kept in ``last_error`` for tests."""
        self.last_error = self.last_traceback = None
        try:
            return action()
        except Exception as exc:  # noqa: BLE001 - shown to the person, kept for inspection
            self.last_error, self.last_traceback = exc, traceback.format_exc()
            self.status.value = message_html(plain_error(exc), "error")
            return None

    def _repr_mimebundle_(self, **kwargs):
        bundle = self.widget._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict) and "text/plain" in bundle:
            bundle["text/plain"] = repr(self)  # what a page without the widget shows
        return bundle

    def __repr__(self) -> str:
        return (
            f"<SimulationPanel {self.model.definition_id!r}: {len(self.reviewer_sliders)} reviewers, "
            f"{len(self.agent_sliders) + len(self.resolution_sliders)} agents>"
        )
