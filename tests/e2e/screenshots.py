"""The README's screenshots, taken with the browser test's machinery (``lab.py``).

    .venv/bin/python tests/e2e/screenshots.py            # writes docs/images/*.png

A throw-away notebook sets the scene (a Designer in the middle of an edit, a simulation panel
after 5,000 runs); JupyterLab runs it in headless Chromium. On the Designer's canvas a click
selects a node (its form opens) and the mouse, held down, drags a new edge from its handle
(``designer.png``), then moves a node (``canvas-drag.png``); each widget is photographed on
its own.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/, for `e2e.lab`

from e2e.lab import CURRENT, ROOT, JupyterLab, open_browser, open_notebook, run_all_cells, wait_idle  # noqa: E402

IMAGES = ROOT / "docs" / "images"

SCENE = [
    """
from toolkit import examples
from toolkit.widgets import Designer, SimulationPanel
""",
    # The Designer while a third reviewer joins the review group: the linter has two things to say.
    """
designer = Designer("parallel-review")
designer.add_node("privacy-review", "human", name="Privacy review",
                  config={"reviewers": [{"userId": "pia@privacy", "mandatory": True},
                                        {"userId": "omar@privacy", "mandatory": False}]})
designer.update_group("review-board", members=["legal-review", "brand-review", "privacy-review"])
designer.add_edge("privacy-review", "publish", on="approve")
designer
""",
    """
policy = {"reviewers": {"*": {"latencyMs": {"lognormal": {"medianMs": 3_600_000, "sigma": 0.8}}},
                        "alice@legal": {"approve": 0.8},
                        "bob@brand": {"approve": 0.85,
                                      "latencyMs": {"lognormal": {"medianMs": 7_200_000, "sigma": 1.0}}}}}
panel = SimulationPanel(examples.load("parallel-review"), runs=5_000, seed=7, policy=policy)
panel.run()
panel
""",
]


def main() -> None:
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="collab-screenshots-") as tmp:
        work = Path(tmp)
        with JupyterLab(work) as lab:
            notebook = new_notebook(
                cells=[new_code_cell(src.strip()) for src in SCENE],
                metadata={
                    "kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
                },
            )
            nbformat.write(notebook, lab.root / "screenshots.ipynb")
            with open_browser(work / "profile", width=1500, height=1100) as page:
                open_notebook(page, lab, "screenshots.ipynb")
                run_all_cells(page)
                designer = page.locator(f"{CURRENT} .collab-designer").first
                designer.locator(".collab-canvas [data-key='node:privacy-review']").wait_for(state="attached")
                page.locator(".collab-simulation-heatmap svg").first.wait_for(state="attached", timeout=120_000)
                wait_idle(page)

                canvas = designer.locator(".collab-canvas")
                node = lambda node_id: canvas.locator(f".cc-node[data-key='node:{node_id}']")  # noqa: E731
                designer.scroll_into_view_if_needed()
                node("privacy-review").click()
                designer.locator(".collab-reviewer-row input[type='text']").nth(1).wait_for(state="visible")
                wait_idle(page)
                handle = node("privacy-review").locator(".cc-handle").bounding_box()
                target = node("publish").bounding_box()
                page.mouse.move(handle["x"] + handle["width"] / 2, handle["y"] + handle["height"] / 2)
                page.mouse.down()
                page.mouse.move(target["x"] + 10, target["y"] + target["height"] / 2 + 6, steps=8)
                page.wait_for_timeout(300)
                designer.screenshot(path=str(IMAGES / "designer.png"))
                page.mouse.up()
                canvas.locator(".cc-popup button.cc-role[data-role='approve']").click()
                canvas.locator(".cc-edge[data-key='edge:5']").wait_for(state="attached")
                wait_idle(page)
                box = node("brand-review").bounding_box()
                start = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
                page.mouse.move(*start)
                page.mouse.down()
                page.mouse.move(start[0] + 20, start[1] - 150, steps=8)
                page.wait_for_timeout(300)
                canvas.screenshot(path=str(IMAGES / "canvas-drag.png"))
                page.mouse.up()
                wait_idle(page)

                panel = page.locator(".collab-simulation-panel").first
                panel.scroll_into_view_if_needed()
                page.wait_for_timeout(500)
                panel.screenshot(path=str(IMAGES / "simulation-panel.png"))
    for name in ("designer.png", "canvas-drag.png", "simulation-panel.png"):
        print(IMAGES / name)


if __name__ == "__main__":
    main()
