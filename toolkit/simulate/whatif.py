"""What-if: calibrate from a recorded log, then simulate the recorded version and another one
under the same fitted policy and seeds, and compare them with 95% intervals (``collab whatif``).

Both versions run ``runs × replications`` executions with the same seed, so they draw the same
random numbers wherever their paths agree (common random numbers: differences show sooner).
A metric is flagged when the two versions' 95% t intervals across replications do not overlap
(:meth:`Intervals.compare`) — a conservative test: a flagged difference is real at well below 5%.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from toolkit.simulate.calibrate import Calibration, calibrate, open_source
from toolkit.simulate.intervals import METRICS, Interval, _format

if TYPE_CHECKING:
    from toolkit.simulate import SimulationResult  # the package imports this module

__all__ = ["WhatIf", "whatif", "recorded_definition", "stored_definition"]


def recorded_definition(source, definition_id: str) -> dict:
    """The body of the latest recorded version of ``definition_id`` (a server's
    ``definition_versions``). ``LookupError`` when the log does not store it (a simulation's
    database does not: pass the definition yourself)."""
    return stored_definition(open_source(source), definition_id)


def stored_definition(con, definition_id: str) -> dict:
    """:func:`recorded_definition` on a connection calibration already opened."""
    tables = {row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "definition_versions" not in tables:
        raise LookupError(
            "this log does not store definition bodies (a simulation's database): "
            "give the recorded definition (--definition-file)"
        )
    rows = con.execute(
        "SELECT body FROM definition_versions WHERE definition_id = ? ORDER BY version DESC LIMIT 1", [definition_id]
    ).fetchall()
    if not rows:
        raise LookupError(f"definition {definition_id!r} is not in definition_versions")
    body = json.loads(rows[0][0])
    return body.get("data", body) if isinstance(body, dict) and "nodes" not in body else body


@dataclass
class WhatIf:
    """The fitted ``calibration``, the two ``SimulationResult`` s (``baseline``: the recorded
    version, ``candidate``: the other) and ``comparison``: ``metric -> (baseline interval,
    candidate interval, differs)``."""

    calibration: Calibration
    baseline: SimulationResult
    candidate: SimulationResult
    comparison: dict[str, tuple[Interval, Interval, bool]]
    candidate_definition: object = None

    @property
    def flagged(self) -> list[str]:
        """The metrics whose intervals do not overlap."""
        return [m for m, (_, _, differs) in self.comparison.items() if differs]

    def rows(self) -> list[tuple[str, str, str, str]]:
        out = []
        for metric, (label, unit) in METRICS.items():
            if metric in self.comparison:
                a, b, differs = self.comparison[metric]
                out.append((label, _show(a, unit), _show(b, unit), "DIFFERS" if differs else ""))
        return out

    def table(self) -> str:
        r = self.baseline.replications
        lines = [
            f"what-if: {r} replications of {self.baseline.runs} runs per version, seed {self.baseline.seed}; "
            "95% t intervals, DIFFERS where they do not overlap",
            f"  {'metric':<24}{'recorded version':>36}{'candidate':>36}  flag",
        ]
        lines += [f"  {m:<24}{a:>36}{b:>36}  {f}" for m, a, b, f in self.rows()]
        return "\n".join(lines)

    def markdown(self) -> str:
        lines = ["| metric | recorded version | candidate | differs |", "|---|---:|---:|---|"]
        lines += [f"| {m} | {a} | {b} | {'**yes**' if f else ''} |" for m, a, b, f in self.rows()]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "policy": self.calibration.policy,
            "calibration": self.calibration.report,
            "runs": self.baseline.runs,
            "replications": self.baseline.replications,
            "seed": self.baseline.seed,
            "metrics": {
                m: {"recorded": a._asdict(), "candidate": b._asdict(), "differs": d}
                for m, (a, b, d) in self.comparison.items()
            },
        }

    def heatmap(self):
        """A picture of where the candidate's runs go differently (:func:`toolkit.viz.render_heatmap_diff`)."""
        from toolkit.viz import render_heatmap_diff

        return render_heatmap_diff(self.candidate_definition, self.baseline.summary, self.candidate.summary)


def _show(iv: Interval, unit: str) -> str:
    return f"{_format(iv.mean, unit)} [{_format(iv.low, unit)}, {_format(iv.high, unit)}]"


def whatif(
    source,
    definition_id: str,
    against,
    definition=None,
    runs: int = 1000,
    replications: int = 10,
    seed: int = 0,
    since=None,
    until=None,
    workers: int = 1,
) -> WhatIf:
    """Calibrate from ``source`` (see :func:`calibrate`), then simulate the recorded version
    (``definition``, else the latest body in the log's ``definition_versions``) and
    ``against`` under the fitted policy with the same seed; compare (see the module doc)."""
    from toolkit.simulate import simulate

    if replications < 2:
        raise ValueError("what-if needs at least 2 replications for its intervals")
    recorded = definition if definition is not None else recorded_definition(source, definition_id)
    calibration = calibrate(source, definition_id, since=since, until=until, definition=recorded)

    def run(definition) -> SimulationResult:
        return simulate(
            definition,
            runs=runs,
            seed=seed,
            policy=calibration.policy,
            replications=replications,
            workers=workers,
            progress=False,
        )

    baseline, candidate = run(recorded), run(against)
    # (replications >= 2, so both carry intervals)
    assert baseline.intervals is not None and candidate.intervals is not None
    return WhatIf(calibration, baseline, candidate, baseline.intervals.compare(candidate.intervals), against)
