"""Small inline-SVG charts drawn in Python: no plotting library, no external requests.

Coordinates are rounded to 0.1 px so a report with a thousand charts stays small. Tick labels are
in engineering notation with SI prefixes (``250m``, ``12k``, ``1.5M``), with as many digits as it
takes for every label of an axis to be distinct.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

WIDTH, HEIGHT = 360, 220
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 14, 36
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f")


LARGEST = float(np.finfo(float).max) / 16  # leaves room for the axis arithmetic


def _number(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


_PREFIXES = {
    -24: "y", -21: "z", -18: "a", -15: "f", -12: "p", -9: "n", -6: "µ", -3: "m",
    0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E", 21: "Z", 24: "Y",
}  # fmt: skip


def _engineering(value: float, digits: int, plain: bool = False) -> tuple[str, float]:
    """``value`` with ``digits`` significant digits and an SI prefix (``1.5k``, ``250µ``), or
    as a plain decimal when ``plain``; and the value the text stands for."""
    if value == 0 or not math.isfinite(value):
        return ("0" if value == 0 else str(value)), value
    exponent = 3 * math.floor(math.log10(abs(value)) / 3)
    mantissa = float(f"{value / 10.0**exponent:.{digits}g}")
    if abs(mantissa) >= 1000:  # rounding carried into the next prefix (999.9 -> 1000)
        exponent, mantissa = exponent + 3, mantissa / 1000
    if exponent not in _PREFIXES or plain:
        whole = len(str(int(abs(value))))
        text = f"{value:.{max(digits - whole, 0)}f}" if plain else f"{value:.{digits}g}"
        return text, float(text)
    whole = len(str(int(abs(mantissa))))
    text = f"{mantissa:.{max(digits - whole, 0)}f}"
    return f"{text}{_PREFIXES[exponent]}", float(text) * 10.0**exponent


def tick_labels(values: Sequence[float]) -> list[str]:
    """Distinct labels for an axis' ticks: whole numbers below 100,000 as they are, axes within
    0.01..1000 as plain decimals (``0.2``, ``2.5``), the rest in engineering notation; each with
    the fewest significant digits (up to 15) that keep the labels apart and each within 0.5 % of
    its value."""
    if all(v == round(v) and abs(v) < 1e5 for v in values):
        return [str(int(v)) for v in values]
    magnitudes = [abs(v) for v in values if v != 0]
    plain = bool(magnitudes) and min(magnitudes) >= 0.01 and max(magnitudes) < 1000
    labels: list[str] = []
    for digits in range(1, 16):
        shown = [_engineering(v, digits, plain) for v in values]
        labels = [text for text, _ in shown]
        close = all(
            abs(stands - v) <= 5e-3 * abs(v) for v, (_, stands) in zip(values, shown, strict=True)
        )
        if close and len(set(labels)) == len(labels):
            break
    return [_trimmed(label) for label in labels]


def _trimmed(label: str) -> str:
    """``label`` without trailing zeros after a decimal point (``0.10`` -> ``0.1``, ``2.0k`` ->
    ``2k``); the number it stands for is unchanged, so distinct labels stay distinct."""
    match = re.fullmatch(r"(-?\d+)\.(\d*?)0*([^\d]*)", label)
    if match is None:
        return label
    whole, decimals, suffix = match.groups()
    return f"{whole}.{decimals}{suffix}" if decimals else f"{whole}{suffix}"


class LegendEntry(NamedTuple):
    """One legend line: a sample of the mark and its text (``full``, when the text is cut,
    shows on hover)."""

    color: str
    text: str
    kind: str = "box"
    full: str = ""


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
        Accessible name of the chart (shown in full on hover).
    footer : int
        Pixels below the x-axis title for a one-row legend (see :meth:`svg`).
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
    footer: int = 0
    marks: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.x = Axis(*self.x_range, LEFT, self.width - self.right, self.x_log)
        self.y = Axis(*self.y_range, self.plot_bottom, TOP, self.y_log)

    @property
    def plot_bottom(self) -> int:
        """The pixel row of the x axis."""
        return self.height - BOTTOM - self.footer

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
            f'<path d="M{px},{TOP}V{self.plot_bottom}" stroke="{color}" '
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
        legend: Sequence[tuple[str, ...]] = (),
        x_labels: dict[float, str] | None = None,
        data: dict[str, str] | None = None,
    ) -> str:
        """The finished ``<svg>`` element; ``data`` adds ``data-*`` attributes for scripts.

        ``legend`` entries are :class:`LegendEntry` tuples (or their first fields), kind ``box``
        (default), ``line``, ``dashed``, ``point`` or ``band``. They go in one row under the
        chart when it has a ``footer``, in a column right of the plot when it has a wide right
        margin, else in the plot's top right corner.
        """
        extra = "".join(f' data-{k}="{escape(v)}"' for k, v in (data or {}).items())
        parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {self.width} {self.height}" '
            f'width="{self.width}" height="{self.height}" role="img" class="chart"{extra}>',
            f"<title>{escape(self.title)}</title>",
        ]
        bottom, right = self.plot_bottom, self.width - self.right
        grid = []
        y_ticks = self.y.ticks()
        for value, label in zip(y_ticks, tick_labels(y_ticks), strict=True):
            py = _number(float(self.y(value)))
            grid.append(f"M{LEFT},{py}H{right}")
            parts.append(f'<text x="{LEFT - 4}" y="{py}" text-anchor="end" dy="3">{label}</text>')
        x_values = self.x.ticks(base=2.0)
        x_ticks = x_labels or dict(zip(x_values, tick_labels(x_values), strict=True))
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
            f'<text x="{(LEFT + right) / 2:.0f}" y="{bottom + BOTTOM - 6}" text-anchor="middle">'
            f"{escape(self.x_title)}</text>"
        )
        parts.append(
            f'<text transform="translate(12 {(TOP + bottom) / 2:.0f}) rotate(-90)" '
            f'text-anchor="middle">{escape(self.y_title)}</text>'
        )
        x, y = 8, self.height - 12
        for i, fields in enumerate(legend):
            entry = LegendEntry(*fields)
            if not self.footer:
                y = TOP + 4 + 12 * i
                x = right + 6 if self.right > RIGHT else right - 110
            hover = f"<title>{escape(entry.full)}</title>" if entry.full else ""
            parts.append(_swatch(x, y, entry.color, entry.kind))
            parts.append(
                f'<text x="{x + 18}" y="{y + 8}" class="note">{hover}{escape(entry.text)}</text>'
            )
            x += 26 + int(5.2 * len(entry.text))
        parts.append("</svg>")
        return "".join(parts)


def _swatch(x: float, y: float, color: str, kind: str) -> str:
    """The legend's sample of one mark, 14 x 8 px at ``(x, y)``."""
    middle = y + 4
    if kind in ("line", "dashed"):
        dash = ' stroke-dasharray="5 3"' if kind == "dashed" else ""
        return f'<path d="M{x},{middle}h14" stroke="{color}" stroke-width="1.6" fill="none"{dash}/>'
    if kind == "point":
        return (
            f'<path d="M{x + 7},{y}V{y + 8}" stroke="{color}" stroke-width="1"/>'
            f'<rect x="{x + 4}" y="{middle - 3}" width="6" height="6" rx="3" fill="{color}"/>'
        )
    opacity = ' fill-opacity="0.18"' if kind == "band" else ""
    return f'<rect x="{x}" y="{y}" width="14" height="8" fill="{color}"{opacity}/>'
