"""SpiffWorkflow 3.2 baseline for the simulator benchmark: the "parallel-review" workload.

The process (``parallel_review.bpmn`` beside this file):

* ``draft`` -- automated (a script task), always succeeds;
* a review round -- legal and brand review in parallel (two user tasks); each approves
  independently (``p_legal``, ``p_brand``) and both always finish;
* both approved -> ``publish`` (automated) -> end, outcome ``completed``; otherwise back to
  ``draft``, at most 3 rounds in all; a 3rd rejected round ends the process, outcome ``failed``.

The driver is what a SpiffWorkflow application would do: parse once, then per run create a
``BpmnWorkflow``, ``do_engine_steps()``, and complete the ready user tasks (decision written to
``task.data`` first, then ``task.run()`` and ``do_engine_steps()``) until ``is_completed()``.
Which reviewer finishes first is drawn per round from the seeded RNG.

How the BPMN stays correct for any completion order (see the BPMN file):

* the review round is an embedded subprocess, so every loop iteration gets a fresh
  fork/join instance;
* ``draft`` deletes the previous round's decisions. This is the part that matters:
  SpiffWorkflow's parallel join merges the branches' task data and the branch that
  arrives *last* wins on any key both carry. Without the deletion each branch still
  carries the other reviewer's decision from the previous round, and a stale rejection
  overrides a fresh approval whenever that reviewer happens to finish first -- the
  outcome then depends on the completion order. The subprocess alone does not prevent
  this (it copies the parent's data, stale keys included, into each new round); with the
  deletion, a flat fork/join inside the loop gives the same, correct outcomes in 3.2.

Every run is also checked against the outcome implied by the drawn decisions (the
``misrouted`` count in the result), and ``__main__`` checks the distribution for random and
for alternating completion order.

Run: ``python benchmarks/spiff_baseline.py [runs]`` (default 2,000).
"""

from __future__ import annotations

import math
import random
import sys
import time
from pathlib import Path

from SpiffWorkflow.bpmn import BpmnWorkflow
from SpiffWorkflow.bpmn.parser import BpmnParser
from SpiffWorkflow.util.task import TaskState

BPMN_PATH = Path(__file__).with_name("parallel_review.bpmn")
PROCESS_ID = "parallel_review"
MAX_ROUNDS = 3
ORDERS = ("random", "alternate")

_READY = TaskState.READY
_COMPLETED = TaskState.COMPLETED


def load_specs(bpmn_path: str | Path = BPMN_PATH, process_id: str = PROCESS_ID):
    """Parse the BPMN file; returns ``(spec, subprocess_specs)`` for ``BpmnWorkflow``."""
    parser = BpmnParser()
    parser.add_bpmn_file(str(bpmn_path))
    return parser.get_spec(process_id), parser.get_subprocess_specs(process_id)


def run_spiff(
    runs: int,
    seed: int,
    p_legal: float = 0.8,
    p_brand: float = 0.85,
    *,
    order: str = "random",
    bpmn_path: str | Path = BPMN_PATH,
) -> dict:
    """Run the parallel-review process ``runs`` times on SpiffWorkflow.

    ``order`` says which review is completed first in each round:

    * ``"random"`` -- a fair coin from the seeded RNG, every round;
    * ``"alternate"`` -- a coin in round 1, then the reverse of the previous round in every
      later round (the order always changes from one round to the next).

    The coin is drawn in both modes, so a given seed yields the same decisions in either
    mode and a correct process gives identical outcomes.

    Returns ``{"runs", "seconds", "executions_per_s", "outcomes": {"completed", "failed"},
    "iterations": {1, 2, 3}, "misrouted"}``; ``seconds`` covers the run loop only (not
    parsing); ``misrouted`` counts runs whose engine outcome or round count disagrees with
    what the drawn decisions imply (0 for a correct process).
    """
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, not {order!r}")
    if runs < 1:
        raise ValueError("runs must be >= 1")
    spec, subprocess_specs = load_specs(bpmn_path)
    rng = random.Random(seed)
    draw = rng.random
    alternate = order == "alternate"
    outcomes = {"completed": 0, "failed": 0}
    iterations = {r: 0 for r in range(1, MAX_ROUNDS + 1)}
    misrouted = 0

    start = time.perf_counter()
    for _ in range(runs):
        wf = BpmnWorkflow(spec, subprocess_specs)
        wf.do_engine_steps()
        rounds = 0
        approved_round = None  # first round in which both reviewers approved
        legal_first = False
        while not wf.is_completed() and rounds < MAX_ROUNDS + 1:
            ready = wf.get_tasks(state=_READY, manual=True)
            if len(ready) != 2:
                raise RuntimeError(
                    f"expected the two review tasks to be ready, got {[t.task_spec.bpmn_id for t in ready]}"
                )
            legal, brand = ready
            if legal.task_spec.bpmn_id != "legal_review":
                legal, brand = brand, legal
            if (legal.task_spec.bpmn_id, brand.task_spec.bpmn_id) != ("legal_review", "brand_review"):
                raise RuntimeError(f"unexpected ready tasks {legal.task_spec.bpmn_id}, {brand.task_spec.bpmn_id}")
            rounds += 1
            coin = draw() < 0.5
            legal_first = (not legal_first) if (alternate and rounds > 1) else coin
            legal_ok = draw() < p_legal
            brand_ok = draw() < p_brand
            if legal_ok and brand_ok and approved_round is None:
                approved_round = rounds
            legal.data["legal_ok"] = legal_ok
            brand.data["brand_ok"] = brand_ok
            first, second = (legal, brand) if legal_first else (brand, legal)
            first.run()
            wf.do_engine_steps()
            if second.state != _READY:
                raise RuntimeError(f"{second.task_spec.bpmn_id} not ready after the other review finished")
            second.run()
            wf.do_engine_steps()
        published = wf.get_next_task(spec_name="end_completed", state=_COMPLETED) is not None
        outcome = "completed" if published else "failed"
        expected = ("completed", approved_round) if approved_round else ("failed", MAX_ROUNDS)
        if (outcome, rounds) != expected or wf.data.get("round_no") != rounds or not wf.is_completed():
            misrouted += 1
        outcomes[outcome] += 1
        if rounds in iterations:
            iterations[rounds] += 1
    seconds = time.perf_counter() - start

    return {
        "runs": runs,
        "seconds": seconds,
        "executions_per_s": runs / seconds,
        "outcomes": outcomes,
        "iterations": iterations,
        "misrouted": misrouted,
    }


def expected_distribution(p_legal: float = 0.8, p_brand: float = 0.85) -> dict:
    """Exact probabilities: outcome shares and rounds used per run."""
    p = p_legal * p_brand  # a round is approved
    q = 1.0 - p
    return {
        "completed": 1.0 - q**MAX_ROUNDS,
        "failed": q**MAX_ROUNDS,
        "iterations": {1: p, 2: q * p, 3: q * q},  # round 3 is reached with prob. q^2
    }


def check_distribution(result: dict, p_legal: float = 0.8, p_brand: float = 0.85, tol: float = 0.03) -> None:
    """Assert the observed shares are within ``tol`` (absolute) of the exact ones.

    For small ``runs`` the bound widens to 4 standard errors so that a correct process
    does not fail by chance; at 2,000 runs 3 points is already about 3 standard errors.
    """
    n = result["runs"]
    exp = expected_distribution(p_legal, p_brand)

    def off(share: float, prob: float) -> bool:
        return abs(share - prob) > max(tol, 4 * math.sqrt(prob * (1 - prob) / n))

    problems = []
    for key in ("completed", "failed"):
        share = result["outcomes"][key] / n
        if off(share, exp[key]):
            problems.append(f"{key}: observed {share:.4f}, expected {exp[key]:.4f}")
    for r, prob in exp["iterations"].items():
        share = result["iterations"][r] / n
        if off(share, prob):
            problems.append(f"iterations={r}: observed {share:.4f}, expected {prob:.4f}")
    if result["misrouted"]:
        problems.append(f"{result['misrouted']} runs disagree with the drawn decisions")
    assert not problems, "; ".join(problems)


def _shares(result: dict) -> str:
    n = result["runs"]
    out = ", ".join(f"{k} {v / n:.1%}" for k, v in result["outcomes"].items())
    its = ", ".join(f"{k}: {v / n:.1%}" for k, v in result["iterations"].items())
    return f"{out}; rounds {its}"


def main(argv: list[str]) -> None:
    runs = int(argv[1]) if len(argv) > 1 else 2000
    seed = 20240601
    exp = expected_distribution()
    print(
        f"expected: completed {exp['completed']:.1%}, failed {exp['failed']:.1%}; rounds "
        + ", ".join(f"{k}: {v:.1%}" for k, v in exp["iterations"].items())
    )

    result = run_spiff(runs, seed)
    print(result)
    print(f"random order:    {result['executions_per_s']:.0f} executions/s; {_shares(result)}")
    check_distribution(result)

    # Misrouting check: the completion order changes every round. Same seed -> same
    # decisions, so the outcomes must not just be close but identical.
    alt = run_spiff(runs, seed, order="alternate")
    print(f"alternate order: {alt['executions_per_s']:.0f} executions/s; {_shares(alt)}")
    check_distribution(alt)
    assert (alt["outcomes"], alt["iterations"]) == (result["outcomes"], result["iterations"]), (
        "completion order changed the outcome"
    )
    print("ok: distribution matches the exact one and does not depend on the completion order")


if __name__ == "__main__":
    main(sys.argv)
