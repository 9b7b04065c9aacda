"""Short human-readable texts for pictures: predicates, durations, node and group captions.

>>> summarize_when('{"op": "gte", "args": [{"var": "output.score"}, 0.8]}')
'score ≥ 0.8'
>>> duration(172_800_000), duration(90_000), duration(5_400_000)
('48h', '1.5min', '1.5h')
>>> host("https://hooks.example.com/slack/x")
'hooks.example.com'
"""

from __future__ import annotations

import json
from html import escape
from urllib.parse import urlsplit

__all__ = [
    "summarize_when",
    "duration",
    "host",
    "node_subtitle",
    "group_subtitle",
    "html_lines",
    "clip",
    "caption_table",
    "chip_row",
    "thousands",
]

_INFIX = {"eq": "=", "ne": "≠", "gt": ">", "gte": "≥", "lt": "<", "lte": "≤"}
_WORDS = {"includes": "contains", "startsWith": "starts with", "endsWith": "ends with", "in": "in"}
MAX_LABEL = 42


def clip(text: str, limit: int = MAX_LABEL) -> str:
    """``text`` cut to ``limit`` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _path(path: str) -> str:
    # ``output.`` is what almost every predicate reads: leave it implied.
    if path.startswith("output."):
        return path[7:]
    if path.startswith("execution.input."):
        return "input." + path[16:]
    return path


def _expr(node, top: bool = False) -> str:
    if isinstance(node, dict) and "var" in node:
        return _path(str(node["var"]))
    if isinstance(node, dict) and "op" in node:
        op, args = node.get("op"), [_expr(a) for a in node.get("args") or []]
        if op in _INFIX and len(args) == 2:
            text = f"{args[0]} {_INFIX[op]} {args[1]}"
        elif op in _WORDS and len(args) == 2:
            text = f"{args[0]} {_WORDS[op]} {args[1]}"
        elif op in ("and", "or"):
            text = f" {op} ".join(args)
        elif op == "not" and len(args) == 1:
            inner = _expr(node["args"][0], top=True)
            return f"not ({inner})" if " " in inner else f"not {inner}"
        elif op == "regex" and len(args) == 2:
            text = f"{args[0]} ~ /{node['args'][1]}/"
        elif op == "length" and len(args) == 1:
            return f"len({args[0]})"
        elif op == "isEmpty" and len(args) == 1:
            text = f"{args[0]} is empty"
        elif op == "exists" and len(args) == 1:
            text = f"{args[0]} exists"
        else:
            return f"{op}({', '.join(args)})"
        return text if top else f"({text})"
    if isinstance(node, list):
        return "[" + ", ".join(_expr(a) for a in node) + "]"
    return json.dumps(node, ensure_ascii=False)


def summarize_when(when, limit: int = MAX_LABEL) -> str:
    """A one-line summary of a predicate (a ``when`` string or an AST).

    >>> summarize_when({"op": "and", "args": [{"op": "eq", "args": [{"var": "step.status"}, "breached"]},
    ...                                      {"op": "exists", "args": [{"var": "execution.input.id"}]}]}, limit=80)
    '(step.status = "breached") and (input.id exists)'
    >>> summarize_when("not json")
    'invalid: not json'
    """
    if isinstance(when, str):
        try:
            when = json.loads(when)
        except ValueError:
            return clip("invalid: " + when, limit)
    return clip(_expr(when, top=True), limit)


def duration(ms: int) -> str:
    """A compact duration: ``48h``, ``2d 4h``, ``15min``, ``30s``."""
    if ms % 86_400_000 == 0 and ms >= 7 * 86_400_000:
        return f"{ms // 86_400_000}d"
    for unit, size in (("h", 3_600_000), ("min", 60_000), ("s", 1000)):
        if ms >= size:
            value = ms / size
            return f"{value:.0f}{unit}" if value == int(value) else f"{value:.1f}{unit}"
    return f"{ms}ms"


def host(url: str | None) -> str | None:
    """The host of a URL (None when there is none)."""
    if not url:
        return None
    try:
        return urlsplit(url).hostname or clip(url, 30)
    except ValueError:
        return clip(url, 30)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def node_subtitle(node) -> str:
    """The small second line of a node: agentId, reviewers, or webhook host.

    >>> from toolkit.model import Definition
    >>> d = Definition.model_validate({"definitionId": "abc", "name": "x", "edges": [], "nodes": [
    ...     {"nodeId": "r", "type": "human", "config": {"reviewers": [
    ...         {"userId": "a", "mandatory": True}, {"userId": "b", "mandatory": False}]}}]})
    >>> node_subtitle(d.nodes[0])
    '2 reviewers · 1 mandatory'
    """
    config = node.config
    if config is None:
        return "no config"
    if node.type == "agent":
        parts = [config.agent_id]
        if config.blocking:
            policy = config.resolution_policy
            if policy is not None and policy.kind == "minResolved":
                parts.append(f"blocking · {policy.min_count} of {config.expected_resolutions}")
            elif config.expected_resolutions > 1:
                parts.append(f"blocking · all {config.expected_resolutions}")
            else:
                parts.append("blocking")
        if config.external:
            parts.append("external")
        return " · ".join(parts)
    if node.type == "human":
        reviewers = config.reviewer_list
        mandatory = sum(r.mandatory for r in reviewers)
        if len(reviewers) == 1:
            return "1 reviewer"
        tail = "all mandatory" if mandatory == len(reviewers) else f"{mandatory} mandatory"
        return f"{_plural(len(reviewers), 'reviewer')} · {tail}"
    return host(getattr(config, "url", None)) or "webhook"


def group_subtitle(group) -> str:
    """Policy and quorum of a group, e.g. ``joinOnQuorum 2/2, requires legal``."""
    text = f"{group.on_quorum_met} {group.quorum_value}/{group.expected}"
    if group.required_node_ids:
        text += ", requires " + ", ".join(group.required_node_ids)
    return text


def html_lines(lines, align: str | None = None) -> str:
    """An HTML-like graphviz label from ``(text, options)`` lines.

    ``options`` keys: ``bold`` (bool), ``size`` (points), ``color``. Text is escaped here.
    ``align="left"`` left-aligns every line (the default centres them).

    >>> html_lines([("A & B", {"bold": True}), ("x", {"size": 9, "color": "#555"})])
    '<<b>A &amp; B</b><br/><font point-size="9" color="#555">x</font>>'
    """
    if align is not None:
        return "<" + "".join(html_lines([line])[1:-1] + f'<br align="{align}"/>' for line in lines) + ">"
    out = []
    for text, opt in lines:
        piece = escape(text, quote=False)
        if opt.get("bold"):
            piece = f"<b>{piece}</b>"
        attrs = []
        if opt.get("size"):
            attrs.append(f'point-size="{opt["size"]}"')
        if opt.get("color"):
            attrs.append(f'color="{opt["color"]}"')
        if attrs:
            piece = f"<font {' '.join(attrs)}>{piece}</font>"
        out.append(piece)
    return "<" + "<br/>".join(out) + ">"


def thousands(n: int) -> str:
    """``9671`` -> ``9,671``."""
    return f"{n:,}"


def caption_table(rows: list[str]) -> str:
    """An HTML-like table (graphviz label body) with one left-aligned row per HTML fragment."""
    cells = "".join(f'<tr><td align="left" balign="left">{row}</td></tr>' for row in rows)
    return f'<table border="0" cellborder="0" cellspacing="0" cellpadding="2">{cells}</table>'


def chip_row(chips: list[tuple[str, str, str, str]], title: str | None = None) -> str:
    """A legend row of coloured chips ``(text, fill, border, text colour)``, after an
    optional ``title`` (HTML)."""
    cells = f"<td>{title}</td>" if title else ""
    cells += "".join(
        f'<td bgcolor="{fill}" color="{border}" border="1" style="rounded" cellpadding="3">'
        f'<font point-size="9" color="{ink}">{escape(text, quote=False)}</font></td>'
        for text, fill, border, ink in chips
    )
    return f'<table border="0" cellborder="0" cellspacing="4" cellpadding="0"><tr>{cells}</tr></table>'
