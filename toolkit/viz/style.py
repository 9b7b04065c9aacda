"""Colours, shapes and fonts of every picture, in one place.

Colours are chosen to stay distinct for the common colour-vision deficiencies: roles and
statuses never rely on hue alone (line style, labels and shapes carry the same meaning).
"""

from __future__ import annotations

FONT = "Helvetica,Arial,sans-serif"
INK = "#263238"  # titles and default text
MUTED = "#607080"  # second lines, captions
FAINT = "#B0BEC5"  # not reached / never traversed

GRAPH = {
    "rankdir": "LR",
    "compound": "true",
    "newrank": "true",
    "fontname": FONT,
    "fontsize": "11",
    "fontcolor": INK,
    "nodesep": "0.35",
    "ranksep": "0.55",
    "pad": "0.25",
    "bgcolor": "white",
    "labeljust": "l",
}
NODE = {
    "fontname": FONT,
    "fontsize": "11",
    "fontcolor": INK,
    "shape": "box",
    "style": "rounded,filled",
    "margin": "0.14,0.06",
    "penwidth": "1.2",
}
EDGE = {"fontname": FONT, "fontsize": "9", "arrowsize": "0.7", "penwidth": "1.3"}

# Node look by kind: agent, blocking agent, human, webhook (and a placeholder for an
# endpoint that names nothing declared).
NODE_KIND = {
    "agent": {"shape": "box", "style": "rounded,filled", "fillcolor": "#E3F2FD", "color": "#1E88E5"},
    "blocking": {
        "shape": "box",
        "style": "rounded,filled",
        "fillcolor": "#EDE7F6",
        "color": "#5E35B1",
        "peripheries": "2",
    },
    "human": {"shape": "ellipse", "style": "filled", "fillcolor": "#FFF8E1", "color": "#F9A825", "margin": "0.04,0.04"},
    "webhook": {"shape": "cds", "style": "filled", "fillcolor": "#E0F2F1", "color": "#00897B", "margin": "0.22,0.1"},
    "missing": {"shape": "box", "style": "dashed", "fillcolor": "white", "color": "#9E9E9E", "fontcolor": "#9E9E9E"},
}

# Edge look by role; a reject loop-back is dashed on top of the reject colour.
ROLE = {
    "approve": {"color": "#2E7D32", "fontcolor": "#2E7D32", "style": "solid"},
    "reject": {"color": "#C62828", "fontcolor": "#C62828", "style": "solid"},
    "always": {"color": "#8D99A6", "fontcolor": "#6D7A86", "style": "solid"},
    "exhausted": {"color": "#EF6C00", "fontcolor": "#E65100", "style": "dotted", "penwidth": "1.8"},
    "custom": {"color": "#1565C0", "fontcolor": "#1565C0", "style": "solid"},
}
ROLE_MARK = {"approve": "✓", "reject": "✗", "always": "", "exhausted": "exhausted", "custom": ""}
# Loop-backs do not take part in ranking, so the flow keeps reading left to right.
LOOP_BACK = {"style": "dashed", "penwidth": "1.5", "constraint": "false"}

GROUP = {
    "style": "rounded,filled",
    "fillcolor": "#F5F7FA",
    "color": "#90A4AE",
    "penwidth": "1.2",
    "fontname": FONT,
    "fontsize": "11",
    "fontcolor": INK,
    "margin": "12",
    "labeljust": "l",
}

# Lint findings: outline colour and width by severity.
FINDING = {"error": {"color": "#D50000", "penwidth": "3"}, "warning": {"color": "#FFAB00", "penwidth": "2.6"}}
FINDING_TEXT = {"error": "#C62828", "warning": "#B26A00"}
SLA_TEXT = "#8E24AA"
SLA_MARK = "◷"  # a clock face every common font has (U+23F1 is missing from DejaVu/Liberation)

# Execution overlay: fill, outline and text colour by the status of a node's latest step.
# "rejected" is a step that completed with decision reject: red and doubly outlined, so that it
# never reads as a success (and its label says "rejected ✗").
STATUS = {
    "not reached": {"fillcolor": "#FFFFFF", "color": "#B0BEC5", "fontcolor": "#90A4AE", "style": "dashed"},
    "pending": {"fillcolor": "#E3F2FD", "color": "#1E88E5"},
    "running": {"fillcolor": "#BBDEFB", "color": "#1565C0"},
    "waiting": {"fillcolor": "#FFE082", "color": "#FF8F00"},
    "completed": {"fillcolor": "#C8E6C9", "color": "#2E7D32"},
    "rejected": {"fillcolor": "#FFEBEE", "color": "#C62828", "peripheries": "2"},
    "failed": {"fillcolor": "#FFCDD2", "color": "#C62828"},
    "breached": {"fillcolor": "#E1BEE7", "color": "#8E24AA"},
    "cancelled": {"fillcolor": "#ECEFF1", "color": "#78909C", "fontcolor": "#607D8B"},
    "skipped": {"fillcolor": "#F5F5F5", "color": "#9E9E9E", "fontcolor": "#757575", "style": "dashed"},
}
# Text on a status fill (darker than the outline, for contrast).
STATUS_TEXT = {
    "not reached": "#90A4AE",
    "pending": "#0D47A1",
    "running": "#0D47A1",
    "waiting": "#7A4A00",
    "completed": "#1B5E20",
    "rejected": "#B71C1C",
    "failed": "#B71C1C",
    "breached": "#6A1B9A",
    "cancelled": "#546E7A",
    "skipped": "#616161",
}
STATUS_ORDER = (
    "waiting",
    "running",
    "completed",
    "rejected",
    "failed",
    "breached",
    "cancelled",
    "skipped",
    "not reached",
)
CURRENT = {"penwidth": "3.2", "color": "#212121"}  # the node the player's current event concerns

# Heat map: a sequential orange scale, white = never, light = rare, strong = frequent. It stops
# at a mid tone so that dark text stays readable on every step of it.
HEAT = ("#FFFFFF", "#FFF4E5", "#FFE3BF", "#FFCC8F", "#FFB062", "#FF9240", "#F2731F")
HEAT_PEN = (1.0, 9.0)  # penwidth of the rarest and the most frequent edge

# What-if difference heat map: more steps per run in the candidate (warm) or fewer (cool).
MORE = ("#FFFFFF", "#FDE0DD", "#FBB4AE", "#F4837D", "#E34A33")
FEWER = ("#FFFFFF", "#DEEBF7", "#B3D1EE", "#7FB0DF", "#3E84C8")
