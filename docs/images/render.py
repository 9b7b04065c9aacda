"""Re-render the pictures in docs/images: ``.venv/bin/python docs/images/render.py``.

Deterministic: the same toolkit version and graphviz version give byte-identical SVGs.
"""

from pathlib import Path

from toolkit import examples
from toolkit.simulate import run_script, simulate
from toolkit.viz import render_definition, render_execution, render_heatmap

HERE = Path(__file__).resolve().parent
POLICY = {"nodes": {"legal-review": {"approve": 0.8}, "brand-review": {"approve": 0.85}}}


def main() -> None:
    body = examples.load("parallel-review")
    definition = render_definition(body)
    heatmap = render_heatmap(body, simulate(body, runs=2000, seed=1, policy=POLICY).summary)
    # legal approves, brand rejects: the copy goes back to the drafter, second round under way
    run = run_script(
        body,
        {
            "actions": [
                {"atMs": 3_600_000, "node": "legal-review", "reviewer": "alice@legal", "decision": "approve"},
                {
                    "atMs": 7_200_000,
                    "node": "brand-review",
                    "reviewer": "bob@brand",
                    "decision": "reject",
                    "reason": "off-brand",
                },
                {
                    "atMs": 9_000_000,
                    "node": "legal-review",
                    "occurrence": 2,
                    "reviewer": "alice@legal",
                    "decision": "approve",
                },
            ]
        },
    )
    execution = render_execution(body, run.state)
    for name, view in (
        ("parallel-review", definition),
        ("parallel-review-heatmap", heatmap),
        ("parallel-review-execution", execution),
    ):
        for suffix in (".svg", ".png"):
            print(view.save(HERE / f"{name}{suffix}"))


if __name__ == "__main__":
    main()
