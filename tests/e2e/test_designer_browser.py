"""End to end, as a person: JupyterLab in Chromium opens 01-design.ipynb, runs all its cells
from the Run menu, and the Designer's canvas shows the graph and the lint panel; a click in
the Designer's form reaches the kernel and comes back as a new lint finding on the canvas.

Needs Chromium (``make test`` installs Debian's package when root). Without it the test
fails and says how to get it; ``COLLAB_SKIP_BROWSER=1`` skips it instead. On failure, a
screenshot and the JupyterLab log are saved under ``tests/artifacts/``.
"""

from __future__ import annotations

import pytest

try:
    from playwright.sync_api import expect
except ImportError:  # the fixture reports it
    expect = None

from e2e.lab import ARTIFACTS, CURRENT, open_browser, open_notebook, run_all_cells, wait_idle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NODES = ("draft", "legal-review", "brand-review", "publish")


def test_designer_runs_in_jupyterlab(lab, tmp_path):
    with open_browser(tmp_path / "profile") as page:
        try:
            open_notebook(page, lab, "01-design.ipynb")
            run_all_cells(page)
            designer = page.locator(f"{CURRENT} .collab-designer").first
            graph = designer.locator(".collab-designer-graph svg")
            for node in NODES:
                graph.locator(f"[data-key='node:{node}']").wait_for(state="attached", timeout=120_000)
            wait_idle(page)
            designer.scroll_into_view_if_needed()
            lint = designer.locator(".collab-designer-lint")
            expect(lint).to_be_visible()
            expect(lint).to_contain_text("No findings", use_inner_text=True)
            assert page.locator(".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']").count() == 0

            # A change made in the browser goes to the kernel and comes back as a finding.
            designer.locator(".collab-node-list select").select_option(label="legal-review  ·  human")
            row = designer.locator(".collab-reviewer-row").first
            expect(row.locator("input[type='text']")).to_have_value("alice@legal")
            row.locator("input[type='checkbox']").uncheck()
            expect(lint).to_contain_text("at least one reviewer must be mandatory", use_inner_text=True)
            expect(graph.locator("[data-key='node:legal-review']")).to_contain_text("schema")
            row.locator("input[type='checkbox']").check()
            expect(lint).to_contain_text("No findings", use_inner_text=True)
        except Exception:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "test_designer_runs_in_jupyterlab.png"), full_page=True)
            (ARTIFACTS / "test_designer_runs_in_jupyterlab.jupyterlab.log").write_text(lab.log())
            raise
