"""HTML for the read-only panes the widgets share: a picture, a findings list, a status line.

Everything a widget shows is an ``ipywidgets.HTML`` value built here, so a test can read it
from Python exactly as a browser receives it.

>>> from toolkit.lint import Finding
>>> html = findings_html([Finding("schema", "error", "list should have at least 1 item", "data.nodes")])
>>> "1 error" in html and "data.nodes" in html
True
"""

from __future__ import annotations

import functools
import json
import os
import traceback
from html import escape

from toolkit.viz import View, style

__all__ = ["svg_html", "findings_html", "table_html", "message_html", "guarded", "plain_error"]

_SEVERITY_COLOUR = {"error": style.FINDING_TEXT["error"], "warning": style.FINDING_TEXT["warning"]}


def svg_html(view: View, css_class: str = "collab-graph", max_height: str | None = None, fit: bool = False) -> str:
    """The view's SVG, inline (without the XML prolog), in a scrolling box; ``fit`` shrinks
    a picture wider than the box to its width."""
    svg = view.svg()
    svg = svg[svg.find("<svg") :]
    if fit:
        svg = svg.replace("<svg", '<svg style="max-width:100%;height:auto"', 1)
    height = f"max-height:{max_height};" if max_height else ""
    return f'<div class="{css_class}" style="overflow:auto;max-width:100%;{height}">{svg}</div>'


def findings_html(findings, css_class: str = "collab-lint") -> str:
    """The lint findings as a list: severity, key, where, message (errors first)."""
    if not findings:
        return (
            f'<div class="{css_class}" data-findings="0" style="color:#2E7D32;padding:4px 0">'
            "✓ No findings: the linter is happy with this definition.</div>"
        )
    errors = sum(f.severity == "error" for f in findings)
    warnings = len(findings) - errors
    counts = ", ".join(
        t
        for t in (
            f"{errors} error{'s' * (errors != 1)}" if errors else "",
            f"{warnings} warning{'s' * (warnings != 1)}" if warnings else "",
        )
        if t
    )
    rows = "".join(
        f'<tr><td style="color:{_SEVERITY_COLOUR.get(f.severity, style.INK)};font-weight:bold;padding-right:8px">'
        f"{escape(f.severity)}</td><td><code>{escape(f.key)}</code></td>"
        f'<td style="color:{style.MUTED};padding:0 8px"><code>{escape(f.where)}</code></td>'
        f"<td>{escape(f.message)}</td></tr>"
        for f in findings
    )
    return (
        f'<div class="{css_class}" data-findings="{len(findings)}">'
        f'<div style="font-weight:bold;margin-bottom:4px">Lint: {counts}</div>'
        f'<table style="border-collapse:collapse;font-size:12px;text-align:left">{rows}</table></div>'
    )


def table_html(frame, css_class: str = "collab-table", tooltips: dict[str, dict] | None = None) -> str:
    """A pandas DataFrame as a compact HTML table styled inline (a widget's HTML does not get
    the notebook's table style): text columns left, numbers right. ``tooltips`` maps a column
    to ``{cell value: tooltip}`` (an id kept behind the name shown)."""
    numeric = [frame[c].dtype.kind in "iuf" for c in frame.columns]
    tips = [(tooltips or {}).get(c, {}) for c in frame.columns]
    cell = "padding:3px 10px;border-bottom:1px solid #E0E4E8;"
    head = "".join(
        f'<th style="{cell}text-align:{"right" if n else "left"};font-weight:bold">{escape(str(c))}</th>'
        for c, n in zip(frame.columns, numeric)
    )

    def td(value, is_number: bool, tip: dict) -> str:
        title = tip.get(value) if isinstance(value, str) else None
        title = f' title="{escape(str(title))}"' if title else ""
        return f'<td style="{cell}text-align:{"right" if is_number else "left"}"{title}>{escape(_cell(value))}</td>'

    rows = "".join(
        "<tr>" + "".join(td(v, n, t) for v, n, t in zip(row, numeric, tips)) + "</tr>"
        for row in frame.itertuples(index=False)
    )
    return (
        f'<table class="{css_class}" style="border-collapse:collapse;font-size:12px;margin:4px 0">'
        f"<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
    )


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:,.2f}".rstrip("0").rstrip(".") if value == value else ""
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def message_html(text: str, kind: str = "info") -> str:
    """A one-line status message (``info``, ``ok`` or ``error``)."""
    colour = {"ok": "#2E7D32", "error": style.FINDING_TEXT["error"]}.get(kind, style.MUTED)
    return f'<span style="color:{colour}">{escape(text)}</span>' if text else ""


def guarded(method):
    """Wrap a widget callback so an exception shows in the widget's ``status`` pane (a button
    click has nowhere else to report it) and is kept in ``last_error`` (the last action's error,
    or None) for tests."""

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        self.last_error = self.last_traceback = None
        try:
            return method(self, *args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - shown to the person, kept for inspection
            self.last_error = exc
            self.status.value = message_html(f"{type(exc).__name__}: {exc}", "error")
            self.last_traceback = traceback.format_exc()
            return None

    return wrapper


def plain_error(exc: Exception) -> str:
    """An exception in the words a person reads: no class name, no traceback; a missing
    file says where it was looked for, a file that is not JSON says so."""
    if isinstance(exc, FileNotFoundError):
        name = exc.filename or str(exc)
        return f"There is no file {str(name)!r} (looked in {os.getcwd()})."
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename!r} is a folder, not a JSON file."
    if isinstance(exc, json.JSONDecodeError):
        return f"This is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})."
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    text = str(exc) or type(exc).__name__
    return text[:1].upper() + text[1:]
