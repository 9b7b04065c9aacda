"""graphviz's layout of a DOT text (``dot -Tjson``), in the form the Designer's canvas uses.

Every layout is a fresh ``dot`` process: one process laying out graph after graph places
clusters differently from the second graph on (decisions: "No long-lived dot process"), and
the picture must not depend on what was drawn before. What a fresh process costs before it
reads its graph (starting, loading graphviz's plugin configuration) is paid ahead of time:
after each layout a spare ``dot`` is started, which waits on its stdin, so the next edit finds
one ready. It is still a process that has read nothing, so its picture is the one ``dot`` run
from the command line gives. The graph is written to it in one piece (the ``graphviz``
package writes line by line: a system call, often a switch to ``dot`` and back, for each).

Layouts are kept by DOT text (the last 64): an undo, a drag or an edit that changes no DOT (a
reviewer renamed, a description: the canvas's DOT has no tooltips) starts no process. What is
kept is small: positions and sizes, and the drawing operations as JSON text
(:class:`orjson.Fragment`), which the browser reads and Python never does. Kept as parsed
JSON, 64 layouts of 100 nodes were hundreds of thousands of objects for the garbage
collector to walk, a fraction of a second each full collection.

>>> laid = layout('digraph g { a [shape=ellipse]; a -> b [id="edge-0"] }')
>>> [(n.name, n.shape) for n in laid.nodes], [(e.svg_id, e.tail, e.head) for e in laid.edges]
([('a', 'ellipse'), ('b', 'box')], [('edge-0', 'a', 'b')])
"""

from __future__ import annotations

import atexit
import os
import subprocess
import threading
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import orjson

__all__ = ["layout", "run_dot", "Layout", "LaidNode", "LaidCluster", "LaidEdge"]

COMMAND = ("dot", "-Tjson")
_lock = threading.Lock()
_spare: tuple[int, subprocess.Popen] | None = None  # (the pid that started it, the process)


def _start() -> subprocess.Popen:
    try:
        return subprocess.Popen(COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except FileNotFoundError as exc:
        raise RuntimeError(
            "the graphviz program 'dot' is not installed: run 'make graphviz' or 'sudo apt-get install graphviz'"
        ) from exc


def _take() -> subprocess.Popen:
    """The spare process if there is a live one of ours (a forked child starts its own)."""
    global _spare
    with _lock:
        spare, _spare = _spare, None
    if spare is not None and spare[0] == os.getpid() and spare[1].poll() is None:
        return spare[1]
    return _start()


def _keep_spare() -> None:
    global _spare
    proc = _start()
    with _lock:
        old, _spare = _spare, (os.getpid(), proc)
    if old is not None:  # another thread left one meanwhile
        _close(old)


def _close(spare: tuple[int, subprocess.Popen]) -> None:
    pid, proc = spare
    if pid == os.getpid():
        try:
            proc.communicate(timeout=5)  # end of input: dot exits without drawing anything
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()


@atexit.register
def _close_spare() -> None:
    global _spare
    with _lock:
        spare, _spare = _spare, None
    if spare is not None:
        _close(spare)


def run_dot(source: str) -> bytes:
    """``dot -Tjson`` of ``source``, by a fresh process (the spare when there is one); a new
    spare is started for the next call. Raises :class:`subprocess.CalledProcessError` with
    graphviz's message when ``dot`` refuses the text."""
    proc = _take()
    out, err = proc.communicate(source.encode("utf-8"))
    _keep_spare()
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, COMMAND, out, err)
    return out


class LaidNode(NamedTuple):
    """A node: its centre (y downward), size in points, shape and drawing (label included)."""

    name: str
    svg_id: str
    x: float
    y: float
    w: float
    h: float
    shape: str
    ops: orjson.Fragment


class LaidCluster(NamedTuple):
    """A group's frame: its box (y downward), drawing, label and member nodes."""

    svg_id: str
    bbox: list[float]
    ops: orjson.Fragment
    label: orjson.Fragment
    members: list[str]


class LaidEdge(NamedTuple):
    """An edge: its ends (node names; ``*_group`` when it ends at a group's frame) and drawing."""

    svg_id: str
    tail: str | None
    head: str | None
    tail_group: str | None
    head_group: str | None
    ops: orjson.Fragment
    label: orjson.Fragment


@dataclass(frozen=True)
class Layout:
    """A laid-out picture. ``flip`` is graphviz's height: its drawing operations keep its y
    axis (upward), which the browser turns over, one subtraction per point."""

    width: float
    height: float
    flip: float
    background: orjson.Fragment
    nodes: list[LaidNode]
    clusters: list[LaidCluster]
    edges: list[LaidEdge]


def _ops(obj: dict, *keys: str) -> orjson.Fragment:
    return orjson.Fragment(orjson.dumps([op for key in keys for op in obj.get(key) or ()]))


def _bbox(text: str, height: float) -> list[float]:
    x0, y0, x1, y1 = (float(v) for v in text.split(","))
    return [x0, round(height - y1, 1), x1, round(height - y0, 1)]


@lru_cache(maxsize=64)
def layout(source: str) -> Layout:
    """The layout of a DOT text (kept for the last 64 texts)."""
    laid = orjson.loads(run_dot(source))
    x0, y0, width, height = (float(v) for v in laid["bb"].split(","))
    objects = laid.get("objects") or []
    names = {o["_gvid"]: o["name"] for o in objects if "_gvid" in o}
    nodes, clusters = [], []
    for obj in objects:
        svg_id = obj.get("id", "")
        if svg_id.startswith("group-") and "bb" in obj:
            members = [names[i] for i in obj.get("nodes") or [] if i in names]
            bbox = _bbox(obj["bb"], height)
            clusters.append(LaidCluster(svg_id, bbox, _ops(obj, "_draw_"), _ops(obj, "_ldraw_"), members))
        elif "pos" in obj and "_gvid" in obj and "nodes" not in obj:
            x, y = (float(v) for v in obj["pos"].split(","))
            nodes.append(
                LaidNode(
                    obj["name"],
                    svg_id,
                    round(x, 1),
                    round(height - y, 1),
                    round(float(obj["width"]) * 72, 1),
                    round(float(obj["height"]) * 72, 1),
                    obj.get("shape", "box"),
                    _ops(obj, "_draw_", "_ldraw_"),
                )
            )
    edges = [
        LaidEdge(
            edge.get("id", ""),
            names.get(edge["tail"]),
            names.get(edge["head"]),
            # an edge from or to a group ends at the group's frame (graphviz's ltail/lhead)
            edge.get("ltail", "")[8:] or None,
            edge.get("lhead", "")[8:] or None,
            _ops(edge, "_draw_", "_hdraw_", "_tdraw_"),
            _ops(edge, "_ldraw_", "_hldraw_", "_tldraw_"),
        )
        for edge in laid.get("edges") or []
    ]
    return Layout(
        round(width - x0, 1), round(height - y0, 1), height, _ops(laid, "_draw_", "_ldraw_"), nodes, clusters, edges
    )
