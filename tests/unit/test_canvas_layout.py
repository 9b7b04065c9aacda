"""The canvas's picture is the same however it was reached: laid out by the spare ``dot`` or by
one started for it, from the DOT with or without its tooltips, kept from before (an edit that
moves nothing, an undo) or drawn anew."""

from __future__ import annotations

import subprocess

import orjson
import pytest

from toolkit import examples
from toolkit.widgets import Designer
from toolkit.widgets.canvas_scene import layout_source
from toolkit.widgets.layout import COMMAND, Layout, layout, run_dot


def drawn(laid: Layout) -> bytes:
    """Everything a layout draws, as JSON (its drawing operations are JSON text already)."""
    return orjson.dumps(
        [
            laid.width,
            laid.height,
            laid.flip,
            laid.background,
            [list(n) for n in laid.nodes],
            [list(c) for c in laid.clusters],
            [list(e) for e in laid.edges],
        ]
    )


@pytest.mark.parametrize("name", examples.names())
def test_tooltips_move_and_draw_nothing(name):
    d = Designer(name)
    d.update_node(d.definition["nodes"][0]["nodeId"], description='a "quoted" \\ description\non two lines')
    lean = layout_source(d.view)
    assert "tooltip" in d.view.source and "tooltip" not in lean
    assert drawn(layout(lean)) == drawn(layout(d.view.source))


def test_the_spare_dot_draws_what_a_dot_started_for_the_graph_draws():
    source = layout_source(Designer("parallel-review").view)
    started = subprocess.run(COMMAND, input=source.encode(), capture_output=True, check=True).stdout
    assert run_dot(source) == started
    assert run_dot(source) == started  # by the spare the first call left


def test_dot_refusing_the_text_says_why():
    with pytest.raises(subprocess.CalledProcessError) as refused:
        run_dot("digraph { a -> }")
    assert b"syntax error" in refused.value.stderr


def test_an_edit_that_moves_nothing_is_not_laid_out_again_and_undo_shows_the_kept_picture():
    d = Designer("parallel-review")
    view, text = d.view, d.canvas.scene
    laid = layout.cache_info().misses
    d.update_node("draft", description="Writes the first version")
    assert layout.cache_info().misses == laid  # only a tooltip changed
    assert "Writes the first version" in d.view.svg()  # the SVG view has it
    d.update_node("draft", name="Draft the copy (a layout test's name)")
    assert layout.cache_info().misses == laid + 1  # a new label: a new size, a new layout
    d.undo()
    d.undo()
    assert d.view is view and d.canvas.scene == text  # the picture kept: not linted, not drawn again
