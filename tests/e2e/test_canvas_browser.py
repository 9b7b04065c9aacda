"""The Designer's canvas in a real browser, as a person uses it (one notebook session, one
step after another): select by click, hover, add by double-click, connect by drag, select
from a lint finding, delete by key (after a confirmation), undo and redo by keyboard, zoom
and fit, drag a node, export it (anyway, with lint errors) and open the file again: the node
is where it was dropped.

Every step is checked on the page itself: the canvas is redrawn from the kernel's answer, so
what the page shows after a gesture is what Python made of it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook

try:
    from playwright.sync_api import expect
except ImportError:  # the fixture reports it
    expect = None

from e2e.lab import ARTIFACTS, CURRENT, open_browser, open_notebook, run_all_cells, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
CELLS = [
    "from toolkit.widgets import Designer\ndesigner = Designer('parallel-review')\ndesigner",
    # a large definition (60 nodes), to see that its labels stay readable
    f"import sys\nsys.path.insert(0, {str(BENCHMARKS)!r})\nfrom designer import workload\n"
    "big = Designer(workload(60))\nbig",
]


def box(locator) -> dict:
    b = locator.bounding_box()
    assert b is not None, locator
    return b


def centre(locator) -> tuple[float, float]:
    b = box(locator)
    return b["x"] + b["width"] / 2, b["y"] + b["height"] / 2


def drag(page, start, end, release: bool = True) -> None:
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move((start[0] + end[0]) / 2, (start[1] + end[1]) / 2, steps=4)
    page.mouse.move(*end, steps=4)
    if release:
        page.mouse.up()


def zoom_of(canvas) -> float:
    transform = canvas.locator("g.cc-view").get_attribute("transform")
    return float(re.search(r"scale\(([\d.]+)\)", transform).group(1))


def test_canvas_gestures_in_jupyterlab(lab, tmp_path):
    notebook = new_notebook(
        cells=[new_code_cell(c) for c in CELLS],
        metadata={"kernelspec": {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}},
    )
    nbformat.write(notebook, lab.root / "canvas.ipynb")
    with open_browser(tmp_path / "profile", width=1500, height=1100) as page:
        try:
            open_notebook(page, lab, "canvas.ipynb")
            run_all_cells(page)
            designer = page.locator(f"{CURRENT} .collab-designer").first
            canvas = designer.locator(".collab-canvas")
            node = lambda node_id: canvas.locator(f".cc-node[data-key='node:{node_id}']")  # noqa: E731
            node("draft").wait_for(state="attached", timeout=120_000)
            wait_idle(page)
            canvas.scroll_into_view_if_needed()
            lint = canvas.locator(".cc-lint")
            expect(lint).to_contain_text("No findings")

            # a 60-node graph opens at a readable size (pan or zoom to see the rest), not shrunk to fit
            big = page.locator(f"{CURRENT} .collab-designer").nth(1).locator(".collab-canvas")
            big.locator(".cc-node[data-key='node:s11-publish']").wait_for(state="attached", timeout=120_000)
            page.wait_for_timeout(300)
            assert zoom_of(big) >= 0.85
            label = big.locator(".cc-node[data-key='node:s0-legal'] text").first
            assert box(label)["height"] >= 9  # pixels on screen

            # select by click: the node is marked and its form opens
            node("legal-review").click()
            expect(node("legal-review")).to_have_class(re.compile(r"\bselected\b"))
            expect(designer.locator(".collab-node-list select")).to_have_value(re.compile(r"^legal-review\s"))
            # hover shows the reviewers
            page.mouse.move(*centre(node("brand-review")))
            expect(canvas.locator(".cc-tooltip")).to_contain_text("reviewers: bob@brand (mandatory)")

            # add by double-click on the background, below the graph
            stage = box(canvas.locator(".cc-stage"))
            spot = (stage["x"] + 120, stage["y"] + stage["height"] - 40)
            page.mouse.dblclick(*spot)
            popup = canvas.locator(".cc-popup")
            expect(popup).to_be_visible()
            popup.locator("input.cc-new-id").fill("privacy-review")
            popup.locator("button.cc-type[data-type='human']").click()
            node("privacy-review").wait_for(state="attached")
            added = centre(node("privacy-review"))
            assert abs(added[0] - spot[0]) < 30 and abs(added[1] - spot[1]) < 30  # where it was clicked
            expect(designer.locator(".collab-node-list select")).to_have_value(re.compile(r"^privacy-review\s"))

            # connect by drag from the node's handle onto another node; the role chooser offers approve first
            handle = node("privacy-review").locator(".cc-handle")
            drag(page, centre(handle), centre(node("publish")))
            expect(popup).to_be_visible()
            expect(popup.locator("button.cc-role").first).to_have_text("approve")
            popup.locator("button.cc-role[data-role='approve']").click()
            canvas.locator(".cc-edge[data-key='edge:4']").wait_for(state="attached")
            expect(lint).to_contain_text("APPROVAL_HUMAN_NODE_REQUIRES_REJECT_PATH")
            message = lint.locator(".cc-finding .cc-msg").first  # the message reads on full lines
            assert box(message)["width"] > 400 and box(message)["height"] < 40

            # select from a lint finding: the node it concerns is selected and flashes
            node("draft").click()
            expect(node("draft")).to_have_class(re.compile(r"\bselected\b"))
            lint.locator(".cc-finding", has_text="privacy-review").first.click()
            expect(node("privacy-review")).to_have_class(re.compile(r"\bselected\b"))
            expect(canvas.locator(".cc-flash")).to_have_count(1)
            expect(designer.locator(".collab-node-list select")).to_have_value(re.compile(r"^privacy-review\s"))

            # delete by key: the node has an edge, so the canvas asks first
            page.keyboard.press("Delete")
            expect(popup).to_contain_text("Remove privacy-review and its 1 edge?")
            popup.locator("button.cc-confirm").click()
            expect(node("privacy-review")).to_have_count(0)
            expect(canvas.locator(".cc-edge[data-key='edge:4']")).to_have_count(0)

            # undo and redo by keyboard
            page.keyboard.press("Control+z")
            expect(node("privacy-review")).to_have_count(1)
            expect(canvas.locator(".cc-edge[data-key='edge:4']")).to_have_count(1)
            page.keyboard.press("Control+Shift+z")
            expect(node("privacy-review")).to_have_count(0)
            page.keyboard.press("Control+z")
            expect(node("privacy-review")).to_have_count(1)
            page.keyboard.press("Control+y")
            expect(node("privacy-review")).to_have_count(0)
            page.keyboard.press("Control+z")
            expect(node("privacy-review")).to_have_count(1)

            # zoom with the wheel, then fit
            fitted = zoom_of(canvas)
            page.mouse.move(*centre(node("draft")))
            page.mouse.wheel(0, -400)
            page.wait_for_function(
                "([el, k]) => !el.getAttribute('transform').includes(`scale(${k})`)",
                arg=[canvas.locator("g.cc-view").element_handle(), fitted],
            )
            assert zoom_of(canvas) > fitted * 1.3
            canvas.locator("button.cc-fit").click()
            assert zoom_of(canvas) < fitted * 1.3

            # drag a node: it stays where it is dropped, in custom.layout
            before = centre(node("publish"))
            drag(page, before, (before[0] - 10, before[1] + 90))
            wait_idle(page)
            dropped = node("publish").get_attribute("transform")
            dx, dy = map(float, re.search(r"translate\((-?[\d.e-]+),(-?[\d.e-]+)\)", dropped).groups())
            assert dy > 40 and abs(dx) < 30

            # export with lint errors: refused in plain words, with a button to export anyway
            designer.locator("input[placeholder^='file name']").fill("moved.json")
            designer.get_by_role("button", name="Export JSON").click()
            expect(designer).to_contain_text("the server would refuse this definition")
            designer.get_by_role("button", name="Export anyway").click()
            expect(designer).to_contain_text("exported moved.json")
            saved = json.loads((lab.root / "moved.json").read_text())["data"]
            assert set(saved["custom"]["layout"]) == {"privacy-review", "publish"}

            # reload: a fresh definition, then the file again; the node is drawn where it was dropped
            designer.get_by_role("button", name="New (empty)").click()
            expect(node("publish")).to_have_count(0)
            designer.locator("input[placeholder='path/to/definition.json']").fill("moved.json")
            designer.get_by_role("button", name="Open file").click()
            node("publish").wait_for(state="attached")
            page.wait_for_function(
                "el => /translate\\(-?[\\d.]+,[1-9]/.test(el.getAttribute('transform'))",
                arg=node("publish").element_handle(),
            )
            again = re.search(r"translate\((-?[\d.e-]+),(-?[\d.e-]+)\)", node("publish").get_attribute("transform"))
            assert abs(float(again.group(1)) - dx) < 0.2 and abs(float(again.group(2)) - dy) < 0.2

            # re-layout drops the dragged positions
            canvas.locator("button.cc-relayout").click()
            expect(canvas.locator("button.cc-relayout")).to_be_disabled()
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "test_canvas_gestures_in_jupyterlab.png"), full_page=True)
            (ARTIFACTS / "test_canvas_gestures_in_jupyterlab.jupyterlab.log").write_text(lab.log())
            raise
