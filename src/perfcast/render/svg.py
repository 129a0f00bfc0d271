"""Small inline-SVG charts drawn in Python: no plotting library, no external requests.

Coordinates are rounded to 0.1 px so a report with a thousand charts stays small.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

import numpy as np
from numpy.typing import ArrayLike

WIDTH, HEIGHT = 360, 220
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 14, 36
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")


LARGEST = float(np.finfo(float).max) / 16  # leaves room for the axis arithmetic


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _label(value: float) -> str:
    if value == 0:
        return "0"
    if value == round(value) and abs(value) < 1e7:
        return str(int(value))
    if abs(value) >= 1e4 or abs(value) < 1e-2:
        return f"{value:.0e}".replace("e+0", "e").replace("e-0", "e-")
    return f"{value:.3g}"


@dataclass
class Axis:
    """A linear or logarithmic axis mapping data values to pixels."""

    low: float
    high: float
    start: float
    end: float
    log: bool = False

    def __post_init__(self) -> None:
        # Values beyond a double (a prediction that overflowed) are drawn at the largest one.
        self.low, self.high = (float(np.clip(v, -LARGEST, LARGEST)) for v in (self.low, self.high))
        if self.log:
            self.low, self.high = math.log(max(self.low, 1e-300)), math.log(max(self.high, 1e-300))
        if self.high <= self.low:
            self.high = self.low + 1.0

    def __call__(self, values: np.ndarray | float) -> np.ndarray:
        v = np.asarray(values, dtype=float)
        if self.log:
            v = np.log(np.maximum(v, 1e-300))
        return self.start + (v - self.low) / (self.high - self.low) * (self.end - self.start)

    def ticks(self, base: float = 10.0) -> list[float]:
        """Tick values: powers of ``base`` on log axes, round steps on linear ones."""
        if self.log:
            low, high = self.low / math.log(base), self.high / math.log(base)
            exponents = range(math.floor(low), math.ceil(high) + 1)
            values = [base**e for e in exponents if low - 1e-9 <= e <= high + 1e-9]
            while len(values) > 8:
                values = values[::2]
            return values
        span = min(self.high - self.low, LARGEST)
        step = 10.0 ** math.floor(math.log10(span / 4))
        for factor in (1, 2, 5, 10):
            if span / (step * factor) <= 6:
                step *= factor
                break
        first = math.ceil(self.low / step) * step
        return [first + i * step for i in range(int((self.high - first) / step + 1e-9) + 1)]


@dataclass
class Chart:
    """An SVG chart being built: axes plus layers of marks.

    Parameters
    ----------
    x_range, y_range : tuple of float
        Data ranges of the axes.
    x_log, y_log : bool
        Logarithmic axes (x in powers of two, y in powers of ten).
    x_title, y_title : str
    title : str
        Accessible name of the chart.
    """

    x_range: tuple[float, float]
    y_range: tuple[float, float]
    x_log: bool = False
    y_log: bool = False
    x_title: str = ""
    y_title: str = ""
    title: str = ""
    width: int = WIDTH
    height: int = HEIGHT
    right: int = RIGHT
    marks: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.x = Axis(*self.x_range, LEFT, self.width - self.right, self.x_log)
        self.y = Axis(*self.y_range, self.height - BOTTOM, TOP, self.y_log)

    def _points(self, xs: ArrayLike, ys: ArrayLike) -> str:
        px, py = self.x(np.asarray(xs)), self.y(np.asarray(ys))
        return " ".join(f"{_number(a)},{_number(b)}" for a, b in zip(px, py, strict=True))

    def line(
        self, xs, ys, color: str, dashed: bool = False, width: float = 1.6, label: str = ""
    ) -> None:
        """A polyline through the points."""
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        title = f"<title>{escape(label)}</title>" if label else ""
        self.marks.append(
            f'<path d="M{self._points(xs, ys)}" fill="none" stroke="{color}" '
            f'stroke-width="{width}"{dash}>{title}</path>'
        )

    def band(self, xs, lower, upper, color: str, label: str = "") -> None:
        """A shaded area between two curves."""
        xs = np.asarray(xs)
        outline = self._points(np.concatenate([xs, xs[::-1]]), np.concatenate([upper, lower[::-1]]))
        title = f"<title>{escape(label)}</title>" if label else ""
        self.marks.append(
            f'<path d="M{outline}Z" fill="{color}" fill-opacity="0.18" stroke="none">{title}</path>'
        )

    def points(self, xs, ys, color: str, labels: Sequence[str] = (), low=None, high=None) -> None:
        """Markers with optional vertical error bars from ``low`` to ``high``."""
        px, py = self.x(np.asarray(xs)), self.y(np.asarray(ys))
        if low is not None and high is not None:
            bottom, top = self.y(np.asarray(low)), self.y(np.asarray(high))
            bars = "".join(
                f"M{_number(a)},{_number(b)}V{_number(c)}"
                f"M{_number(a - 3)},{_number(b)}h6M{_number(a - 3)},{_number(c)}h6"
                for a, b, c in zip(px, bottom, top, strict=True)
            )
            self.marks.append(f'<path d="{bars}" stroke="{color}" stroke-width="1" fill="none"/>')
        for i, (a, b) in enumerate(zip(px, py, strict=True)):
            title = f"<title>{escape(labels[i])}</title>" if i < len(labels) else ""
            self.marks.append(
                f'<circle cx="{_number(a)}" cy="{_number(b)}" r="3" fill="{color}">{title}</circle>'
            )

    def vertical(self, x: float, color: str, label: str) -> None:
        """A labelled vertical rule, e.g. at the target scale."""
        px = _number(float(self.x(x)))
        self.marks.append(
            f'<path d="M{px},{TOP}V{self.height - BOTTOM}" stroke="{color}" '
            'stroke-dasharray="2 3"/>'
            f'<text x="{px}" y="{TOP - 3}" text-anchor="end" class="note">{escape(label)}</text>'
        )

    def rect(self, x0: float, x1: float, y0: float, y1: float, color: str, label: str) -> None:
        """A filled rectangle in data coordinates (for bars)."""
        left, right = sorted(self.x(np.array([x0, x1])))
        top, bottom = sorted(self.y(np.array([y1, y0])))
        self.marks.append(
            f'<rect x="{_number(left)}" y="{_number(top)}" width="{_number(right - left)}" '
            f'height="{_number(bottom - top)}" fill="{color}"><title>{escape(label)}</title></rect>'
        )

    def svg(
        self,
        legend: Sequence[tuple[str, str]] = (),
        x_labels: dict[float, str] | None = None,
        data: dict[str, str] | None = None,
    ) -> str:
        """The finished ``<svg>`` element; ``data`` adds ``data-*`` attributes for scripts."""
        extra = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" class="chart"{extra}>',
            f"<title>{escape(self.title)}</title>",
        ]
        bottom, right = self.height - BOTTOM, self.width - self.right
        grid = []
        for value in self.y.ticks():
            py = _number(float(self.y(value)))
            grid.append(f"M{LEFT},{py}H{right}")
            parts.append(
                f'<text x="{LEFT - 4}" y="{py}" text-anchor="end" dy="3">{_label(value)}</text>'
            )
        x_ticks = x_labels or {v: _label(v) for v in self.x.ticks(base=2.0)}
        for value, text in x_ticks.items():
            px = _number(float(self.x(value)))
            grid.append(f"M{px},{TOP}V{bottom}")
            parts.append(
                f'<text x="{px}" y="{bottom + 13}" text-anchor="middle">{escape(text)}</text>'
            )
        parts.append(f'<path d="{"".join(grid)}" class="grid"/>')
        parts.append(f'<path d="M{LEFT},{TOP}V{bottom}H{right}" class="axis"/>')
        parts.extend(self.marks)
        parts.append(
            f'<text x="{(LEFT + right) / 2:.0f}" y="{self.height - 6}" text-anchor="middle">'
            f"{escape(self.x_title)}</text>"
        )
        parts.append(
            f'<text transform="translate(12 {(TOP + bottom) / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">{escape(self.y_title)}</text>'
        )
        for i, (color, text) in enumerate(legend):
            y = TOP + 4 + 12 * i
            x = right + 6 if self.right > RIGHT else right - 110
            parts.append(
                f'<rect x="{x}" y="{y}" width="8" height="8" fill="{color}"/>'
                f'<text x="{x + 12}" y="{y + 8}" class="note">{escape(text)}</text>'
            )
        parts.append("</svg>")
        return "".join(parts)
