"""Small charts as plain SVG (no plotting library): the cycle-time histogram of a simulation.

>>> svg = histogram_svg([3_600_000, 5_400_000, 7_200_000, 7_300_000], title="cycle time")
>>> svg.startswith("<svg") and "cycle time" in svg and svg.count('class="bar"') == 20
True
"""

from __future__ import annotations

import math
from html import escape

from toolkit.viz import style

__all__ = ["histogram_svg", "nice_ceiling", "time_unit"]

_BAR = "#FF9240"
_SHORT = {"days": "d", "hours": "h", "minutes": "min", "seconds": "s", "ms": "ms"}
_MARK = "#5E35B1"


def nice_ceiling(x: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is at least ``x`` (axis ends).

    >>> [nice_ceiling(v) for v in (0.7, 9.7, 12, 26, 480)]
    [1.0, 10.0, 20.0, 50.0, 500.0]
    """
    if x <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(x))
    for step in (1, 2, 2.5, 5, 10):
        if step * power >= x - 1e-12:
            return float(step * power)
    return float(10 * power)


def time_unit(ms: float) -> tuple[str, float]:
    """``(name, ms per unit)`` to show durations around ``ms``."""
    for name, size in (("days", 86_400_000), ("hours", 3_600_000), ("minutes", 60_000), ("seconds", 1000)):
        if ms >= size:
            return name, size
    return "ms", 1


def _quantile(values: list[float], q: float) -> float:
    position = (len(values) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(values) - 1)
    return values[low] + (values[high] - values[low]) * (position - low)


def _fmt(x: float) -> str:
    if x == int(x):
        return str(int(x))
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.1f}"


def histogram_svg(
    durations_ms, bins: int = 20, width: int = 480, height: int = 230, title: str = "", label: str = "cycle time"
) -> str:
    """A histogram of durations (ms): ``bins`` equal bars from 0 to a round number at or
    above the 99th percentile (longer ones join the last bar), with p50 and p90 marked;
    ``label`` names the x axis (the unit is added)."""
    values = sorted(float(v) for v in durations_ms if v is not None)
    left, right, top, bottom = 48, 14, 30 if title else 12, 40
    plot_w, plot_h = width - left - right, height - top - bottom
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="collab-histogram" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="{style.FONT}" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="white"/>',
    ]
    if title:
        out.append(
            f'<text x="{left}" y="18" font-size="13" font-weight="bold" fill="{style.INK}">{escape(title)}</text>'
        )
    if not values:
        out.append(f'<text x="{left}" y="{top + plot_h / 2}" fill="{style.MUTED}">nothing to count</text></svg>')
        return "".join(out)
    unit, size = time_unit(_quantile(values, 0.5))
    end = nice_ceiling(_quantile(values, 0.99) / size) * size
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int(v / end * bins))] += 1
    peak = max(counts)
    bar_w = plot_w / bins
    for i, n in enumerate(counts):
        h = plot_h * n / peak
        x = left + i * bar_w
        lo, hi = end * i / bins / size, end * (i + 1) / bins / size
        more = "+" if i == bins - 1 and values[-1] > end else ""
        out.append(
            f'<rect class="bar" x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" '
            f'height="{h:.1f}" fill="{_BAR}"><title>{_fmt(lo)}–{_fmt(hi)}{more} {unit}: {n} runs'
            f"</title></rect>"
        )
    axis_y = top + plot_h
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="{style.MUTED}"/>')
    out.append(f'<line x1="{left}" y1="{top}" x2="{left}" y2="{axis_y}" stroke="{style.MUTED}"/>')
    for k in range(5):
        value = end * k / 4
        x = left + plot_w * k / 4
        out.append(
            f'<text x="{x:.1f}" y="{axis_y + 14}" text-anchor="middle" fill="{style.MUTED}">{_fmt(value / size)}</text>'
        )
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" fill="{style.INK}">'
        f"{escape(label)} ({unit})</text>"
    )
    out.append(f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" fill="{style.MUTED}">{peak}</text>')
    out.append(f'<text x="{left - 6}" y="{axis_y}" text-anchor="end" fill="{style.MUTED}">0</text>')
    out.append(
        f'<text x="12" y="{top + plot_h / 2}" text-anchor="middle" fill="{style.INK}" '
        f'transform="rotate(-90 12 {top + plot_h / 2})">runs</text>'
    )
    for name, q in (("p50", 0.5), ("p90", 0.9)):
        v = _quantile(values, q)
        x = left + plot_w * min(v, end) / end
        out.append(
            f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{axis_y}" stroke="{_MARK}" stroke-dasharray="4 3"/>'
        )
        out.append(f'<text x="{x + 3:.1f}" y="{top + 10}" fill="{_MARK}">{name} {_fmt(v / size)} {_SHORT[unit]}</text>')
    out.append("</svg>")
    return "".join(out)
