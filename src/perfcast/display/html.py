"""One self-contained HTML report: inline CSS, inline SVG charts, a little inline JavaScript.

Nothing is loaded from the network; the file works offline and without JavaScript (which only
adds table sorting, filtering and expand/collapse). Per kernel the chart shows the measurements
(mean with min-max bars over the repetitions), the model over the measured range (solid), its
extrapolation to the target (dashed) and the 95 % prediction band (``Model.predict_interval``).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np
import pandas as pd

from perfcast.analyze.diagnosis import Diagnosis
from perfcast.analyze.scaling import Scaling
from perfcast.core.experiment import KERNEL, METRIC, VALUE, Experiment
from perfcast.core.function import Model
from perfcast.display.svg import HEIGHT, PALETTE, Chart
from perfcast.display.tables import format_warnings
from perfcast.model.registry import REGISTRY

OPEN_PLOTS = 12
LEGEND_ROW = 16

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd}
table{border-collapse:collapse;width:100%;font-size:13px}
th,td{padding:3px 6px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}
th{cursor:pointer;background:#f6f6f6;user-select:none}
td.n{text-align:right;font-variant-numeric:tabular-nums}
code{font-size:12px}.bug{color:#b00020;font-weight:600}.muted{color:#777}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{border:1px solid #ddd;border-radius:4px;padding:4px 8px}
.card summary{cursor:pointer;max-width:360px;overflow-wrap:anywhere}
svg.chart{font-size:10px;display:block}svg .grid{stroke:#eee;fill:none}
svg .axis{stroke:#999;fill:none}svg .note{font-size:9px;fill:#555}
.warn{background:#fff4f4;border-left:4px solid #b00020;padding:6px 10px}
#filter{margin:6px 0;padding:4px;width:300px}
table.matrix{width:auto}
.note-box{background:#f4f8ff;border-left:4px solid #1f77b4;padding:6px 10px}
svg .cursor{stroke:#999}svg .readout{font-size:10px;fill:#333}
"""

_JS = """
(function(){
  var table=document.getElementById('kernels');
  function cell(row,i){var c=row.cells[i];return c.getAttribute('data-v')||c.textContent;}
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      var body=table.tBodies[0],rows=Array.prototype.slice.call(body.rows);
      var up=th.getAttribute('data-dir')!=='up';th.setAttribute('data-dir',up?'up':'down');
      rows.sort(function(a,b){var x=cell(a,i),y=cell(b,i),nx=parseFloat(x),ny=parseFloat(y);
        var r=(!isNaN(nx)&&!isNaN(ny))?nx-ny:String(x).localeCompare(String(y));return up?r:-r;});
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  var filter=document.getElementById('filter'),cards=document.querySelectorAll('.card');
  filter.addEventListener('input',function(){
    var q=filter.value.toLowerCase(),shown=0;
    Array.prototype.forEach.call(table.tBodies[0].rows,function(r){
      var ok=r.getAttribute('data-k').toLowerCase().indexOf(q)>=0;
      r.style.display=ok?'':'none';if(ok)shown++;});
    Array.prototype.forEach.call(cards,function(c){
      c.style.display=c.getAttribute('data-k').toLowerCase().indexOf(q)>=0?'':'none';});
    document.getElementById('shown').textContent=shown;
  });
  document.getElementById('expand').addEventListener('click',function(){
    Array.prototype.forEach.call(cards,function(c){c.open=true;});});
  var NS='http://www.w3.org/2000/svg';
  Array.prototype.forEach.call(document.querySelectorAll('svg[data-px]'),function(svg){
    function list(n){return svg.getAttribute('data-'+n).split(',');}
    var px=list('px').map(Number),xs=list('x'),ys=list('y'),lo=list('lo'),hi=list('hi');
    var name=svg.getAttribute('data-name'),bottom=svg.getAttribute('data-bottom');
    var cursor=document.createElementNS(NS,'path');cursor.setAttribute('class','cursor');
    var text=document.createElementNS(NS,'text');text.setAttribute('class','readout');
    text.setAttribute('x','62');text.setAttribute('y','24');
    svg.appendChild(cursor);svg.appendChild(text);
    svg.addEventListener('mousemove',function(event){
      var point=svg.createSVGPoint();point.x=event.clientX;point.y=event.clientY;
      var x=point.matrixTransform(svg.getScreenCTM().inverse()).x,best=0;
      for(var i=1;i<px.length;i++){if(Math.abs(px[i]-x)<Math.abs(px[best]-x))best=i;}
      cursor.setAttribute('d','M'+px[best]+',14V'+bottom);
      text.textContent=name+'='+xs[best]+': model '+ys[best]+
        ' (95 %: '+lo[best]+' to '+hi[best]+')';
    });
    svg.addEventListener('mouseleave',function(){cursor.setAttribute('d','');text.textContent='';});
  });
  document.getElementById('shown').textContent=table.tBodies[0].rows.length;
  document.body.classList.add('js-ready');
})();
"""


def _source_hash(text: str) -> str:
    """The CSP source expression that allows exactly one inline element with this text."""
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


CONTENT_SECURITY_POLICY = (
    "default-src 'none'; "
    f"script-src {_source_hash(_JS)}; "
    f"style-src {_source_hash(_CSS)}; "
    "base-uri 'none'; form-action 'none'; connect-src 'none'"
)
"""The report's policy: nothing loaded from anywhere, only its own inline script and style (by
hash), so no event-handler attribute, ``javascript:`` URL or injected element can run script."""


def _fmt(value: float | None, digits: int = 3) -> str:
    if value is None or not np.isfinite(value):
        return "–"
    return f"{value:.{digits}g}"


def _point_text(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={v:g}" for k, v in point.items())


def plot_setting(experiment: Experiment, scale: str) -> dict[str, float]:
    """Values of the non-scale parameters with the most measured scales (largest on ties)."""
    names = list(experiment.parameter_names)
    others = [n for n in names if n != scale]
    if not others:
        return {}
    points = pd.DataFrame(experiment.points(), columns=names)
    counts = points.groupby(others)[scale].nunique()
    best = counts[counts == counts.max()].index.max()
    best = best if isinstance(best, tuple) else (best,)
    return {n: float(v) for n, v in zip(others, best, strict=True)}


@dataclass(frozen=True)
class Measured:
    """One kernel's measurements along the scale: values, mean, min, max and count."""

    x: np.ndarray
    mean: np.ndarray
    low: np.ndarray
    high: np.ndarray
    count: np.ndarray


def measurement_table(
    experiment: Experiment, metric: str, scale: str, setting: Mapping[str, float]
) -> dict[str, Measured]:
    """Per kernel: mean, min, max and count of the repetitions at ``setting`` along the scale."""
    table = experiment.frame[experiment.frame[METRIC] == metric]
    keep = np.ones(len(table), dtype=bool)
    for name, value in setting.items():
        keep &= np.isclose(table[name].to_numpy(dtype=float), value)
    table = table[keep]
    codes, kernels = pd.factorize(table[KERNEL])
    frame = pd.DataFrame(
        {"k": codes, "x": table[scale].to_numpy(dtype=float), "v": table[VALUE].to_numpy(float)}
    )
    stats = frame.groupby(["k", "x"], sort=True)["v"].agg(["mean", "min", "max", "count"])
    stats = stats.reset_index()
    k = stats["k"].to_numpy()
    columns = {c: stats[c].to_numpy() for c in ("x", "mean", "min", "max", "count")}
    result = {}
    for rows in np.split(np.arange(len(k)), np.flatnonzero(np.diff(k)) + 1):
        if len(rows):
            result[str(kernels[k[rows[0]]])] = Measured(
                *(columns[c][rows] for c in ("x", "mean", "min", "max", "count"))
            )
    return result


def kernel_chart(
    model: Model,
    measured: Measured | None,
    scale: str,
    setting: Mapping[str, float],
    target: float,
    unit: str = "",
    flagged: bool = False,
) -> str:
    """The chart of one kernel (see module doc)."""
    xs_measured = measured.x if measured is not None else np.array([])
    low_x = float(xs_measured.min()) if len(xs_measured) else target / 8
    high_measured = float(xs_measured.max()) if len(xs_measured) else low_x
    xs = np.geomspace(low_x, max(target, high_measured), 48)
    columns = {n: np.full(len(xs), v) for n, v in setting.items()}
    columns[scale] = xs
    prediction, lower, upper = model.predict_interval(columns)
    values = [prediction, upper]
    if measured is not None:
        values += [measured.high, measured.low]
    stacked = np.concatenate(values)
    positive = stacked[stacked > 0]
    y_log = bool(len(positive) and positive.max() / positive.min() > 30 and np.all(prediction > 0))
    if y_log:
        y_range = (positive.min() / 1.3, positive.max() * 1.3)
        lower = np.maximum(lower, y_range[0])
    else:
        y_range = (
            min(0.0, float(np.min(np.concatenate([stacked, lower])))),
            float(stacked.max()) * 1.08 or 1.0,
        )
    chart = Chart(
        (low_x / 1.15, max(target, high_measured) * 1.15),
        y_range,
        x_log=True,
        y_log=y_log,
        x_title=scale + (f" ({_point_text(setting)})" if setting else ""),
        y_title=f"{model.metric} [{unit}]" if unit else model.metric,
        title=model.kernel,
        height=HEIGHT + LEGEND_ROW,
        footer=LEGEND_ROW,
    )
    color = PALETTE[1] if flagged else PALETTE[0]
    chart.band(xs, lower, upper, color, "95 % prediction interval")
    inside = xs <= high_measured * (1 + 1e-9)
    chart.line(xs[inside], prediction[inside], color, label=model.expression())
    if (~inside).any():
        outside = np.flatnonzero(~inside)
        start = max(outside[0] - 1, 0)
        chart.line(xs[start:], prediction[start:], color, dashed=True, label="extrapolation")
    if measured is not None:
        labels = [
            f"{scale}={x:g}: mean {mean:.4g} (min {low:.4g}, max {high:.4g}, {int(n)} repetitions)"
            for x, mean, low, high, n in zip(
                measured.x, measured.mean, measured.low, measured.high, measured.count, strict=True
            )
        ]
        chart.points(measured.x, measured.mean, "#111", labels, measured.low, measured.high)
    if target > high_measured:
        chart.vertical(target, "#555", f"target {scale}={target:g}")
    for segment in model.segments:
        if segment.parameter == scale and segment.breakpoint is not None:
            chart.vertical(
                segment.breakpoint.value, "#a05a00", f"break {scale}={segment.breakpoint.value:.3g}"
            )
    readout = {
        "px": ",".join(f"{v:.1f}" for v in chart.x(xs)),
        "x": ",".join(f"{v:.4g}" for v in xs),
        "y": ",".join(f"{v:.4g}" for v in prediction),
        "lo": ",".join(f"{v:.4g}" for v in lower),
        "hi": ",".join(f"{v:.4g}" for v in upper),
        "name": scale,
        "bottom": f"{chart.plot_bottom}",
    }
    legend = [
        ("#111", "mean (min–max)", "point"),
        (color, "model", "line"),
        (color, "extrapolated", "dashed"),
        (color, "95 % interval", "band"),
    ]
    if measured is None:
        legend = legend[1:]
    if not (~inside).any():
        legend = [entry for entry in legend if entry[2] != "dashed"]
    return chart.svg(legend=legend, data=readout)


def segments_note(model: Model) -> str:
    """A list of a segmented model's pieces: measured range, model and the breakpoint's
    interval (empty for an ordinary model)."""
    if not model.segments:
        return ""
    items = []
    for segment, condition in zip(model.segments, model.segment_conditions(4), strict=True):
        start, end = ("" if v is None else f"{v:g}" for v in (segment.start, segment.end))
        measured = f"measured {segment.parameter}={start}..{end}"  # an open end: no value
        text = f"{condition} ({measured}): {segment.model.expression()}"
        if segment.breakpoint is not None:
            b = segment.breakpoint
            text += f"; break at {b.value:.4g}, between {b.lower:g} and {b.upper:g}"
        items.append(f"<li><code>{escape(text)}</code></li>")
    along = escape(model.segments[0].parameter)
    return f'<p class="note">segments along {along}:</p><ul>{"".join(items)}</ul>'


def scaling_chart(diagnosis: Diagnosis) -> str:
    """Scaling error from the smallest scale to every larger one: measured and modeled."""
    if diagnosis.modeled is None:
        return ""
    series = []
    if diagnosis.measured:
        main = max(diagnosis.measured, key=lambda s: len(s.scales))
        series.append(("measured", main, PALETTE[0]))
    series.append(("models", diagnosis.modeled, PALETTE[1]))
    rows = []
    for label, scaling, color in series:
        first = [e for e in scaling.errors if e.n1 == scaling.scales[0]]
        if first:
            rows.append(
                (label, color, np.array([e.n2 for e in first]), np.array([e.error for e in first]))
            )
    if not rows:
        return ""
    xs = np.concatenate([r[2] for r in rows])
    ys = np.concatenate([r[3] for r in rows])
    name = "alpha" if diagnosis.mode == "strong" else "beta"
    chart = Chart(
        (xs.min() / 1.2, xs.max() * 1.2),
        (min(0.0, float(ys.min())), float(max(ys.max(), 1e-9)) * 1.1),
        x_log=True,
        x_title=f"n2 = {diagnosis.scale} (n1 = smallest measured)",
        y_title=f"{diagnosis.mode} scaling error ({name})",
        title="scaling error",
        width=520,
    )
    for label, color, x, y in rows:
        chart.line(x, y, color, label=label)
        chart.points(
            x,
            y,
            color,
            [f"{label}: {name}({x[0]:g}->{a:g}) = {b:.4g}" for a, b in zip(x, y, strict=True)],
        )
    return chart.svg(legend=[(c, label) for label, c, _, _ in rows])


def hotspot_chart(diagnosis: Diagnosis, top: int = 7) -> str:
    """Stacked shares of the top kernels per profile and the step-wise distances."""
    shift = diagnosis.hotspots
    if shift is None:
        return ""
    totals = shift.values.sum(axis=1, keepdims=True)
    shares = np.divide(shift.values, totals, out=np.zeros_like(shift.values), where=totals > 0)
    order = np.argsort(-shares.mean(axis=0))[:top]
    positions = np.arange(len(shift.at), dtype=float)
    every = 1 + len(shift.at) // 10
    labels = {
        float(i): f"{v:g}" + ("*" if o == "models" else "")
        for i, (v, o) in enumerate(zip(shift.at, shift.origins, strict=True))
        if i % every == 0
    }
    bars = Chart(
        (-0.6, len(shift.at) - 0.4),
        (0.0, 1.0),
        x_title=f"{shift.parameter} (* = predicted by the models)",
        y_title="share of the total",
        title="hotspot profiles",
        width=560,
        right=130,
    )
    for i in range(len(shift.at)):
        bottom = 0.0
        for rank, k in enumerate(order):
            share = float(shares[i, k])
            bars.rect(
                i - 0.35,
                i + 0.35,
                bottom,
                bottom + share,
                PALETTE[rank],
                f"{shift.kernels[k]}: {100 * share:.1f} %",
            )
            bottom += share
        bars.rect(
            i - 0.35, i + 0.35, bottom, 1.0, "#ddd", f"other kernels: {100 * (1 - bottom):.1f} %"
        )
    legend = [
        (PALETTE[r], _short(shift.kernels[k]), "box", shift.kernels[k]) for r, k in enumerate(order)
    ]
    steps = Chart(
        (-0.6, len(shift.at) - 0.4),
        (0.0, 1.0),
        x_title=f"step ending at {shift.parameter}",
        y_title="difference",
        title="hotspot profile differences",
        width=560,
        right=130,
    )
    ends = positions[1:]
    measures = [
        ("Kendall distance", [s.kendall_distance for s in shift.steps], PALETTE[0]),
        ("total variation", [s.total_variation for s in shift.steps], PALETTE[2]),
        ("chi-square 1-p", [1 - s.chi_square_p for s in shift.steps], PALETTE[1]),
    ]
    for name, values, color in measures:
        steps.line(ends, values, color, label=name)
        steps.points(
            ends,
            values,
            color,
            [f"{name} {shift.at[i]:g}->{shift.at[i + 1]:g}: {v:.3g}" for i, v in enumerate(values)],
        )
    return bars.svg(legend=legend, x_labels=labels) + steps.svg(
        legend=[(c, n) for n, _, c in measures], x_labels={k: v for k, v in labels.items() if k > 0}
    )


def _short(kernel: str, length: int = 18) -> str:
    leaf = kernel.split("->")[-1]
    return leaf if len(leaf) <= length else leaf[: length - 1] + "…"


def build_report(
    experiment: Experiment,
    models: Sequence[Model],
    diagnosis: Diagnosis,
    title: str | None = None,
    modeler: str | None = None,
    progress: Callable[[int], None] | None = None,
) -> str:
    """The complete HTML document as a string.

    Parameters
    ----------
    experiment : Experiment
        The measurements.
    models : sequence of Model
        The models the diagnosis used.
    diagnosis : Diagnosis
        From :func:`perfcast.analyze.diagnosis.diagnose`.
    title : str, optional
        Defaults to the experiment's source.
    modeler : str, optional
        The registered name of the modeler that fitted the models (shown with its summary).
    progress : callable, optional
        Called with 1 after each kernel's plot is drawn.
    """
    title = title or f"perfcast report: {experiment.source or 'experiment'}"
    scale, target = diagnosis.scale, diagnosis.target
    unit = (
        experiment.metrics[diagnosis.metric].unit if diagnosis.metric in experiment.metrics else ""
    )
    setting = plot_setting(experiment, scale)
    measured = measurement_table(experiment, diagnosis.metric, scale, setting)
    by_kernel = {m.kernel: m for m in models}
    flagged = {b.kernel for b in diagnosis.flagged}
    costs = _costs(diagnosis)
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CONTENT_SECURITY_POLICY}">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{escape(title)}</h1>",
    ]
    out.append(_summary(experiment, diagnosis, len(models), modeler, costs))
    out.append(_scaling_note(diagnosis))
    out.append(_warnings(diagnosis))
    out.append(_model_warnings(models))
    out.append("<h2>Scaling error</h2>")
    out.append(_scaling_table(diagnosis))
    out.append(scaling_chart(diagnosis))
    if diagnosis.measured:
        out.append(_error_matrix(max(diagnosis.measured, key=lambda m: len(m.scales))))
    if diagnosis.hotspots is not None:
        out.append("<h2>Hotspot shift</h2>")
        most = diagnosis.hotspots.most_changed()
        out.append(
            "<p>Largest change of the profile: "
            + "; ".join(
                escape(f"{name.replace('_', ' ')} between {scale}={s.start:g} and {s.end:g}")
                for name, s in most.items()
                if s is not None
            )
            + ".</p>"
        )
        out.append(f'<div class="cards">{hotspot_chart(diagnosis)}</div>')
    out.append("<h2>Kernels</h2>")
    out.append(
        f'<input id="filter" type="search" placeholder="filter kernels"> '
        f'<span class="muted"><span id="shown">{len(diagnosis.ranking)}</span> kernels shown; '
        "click a column to sort</span>"
    )
    out.append(_kernel_table(diagnosis, by_kernel, flagged, target, costs))
    out.append(
        f'<h2>Kernel plots</h2><p class="muted">Points: mean of the repetitions, bars: min-max; '
        f"solid: model over the measured range; dashed: extrapolation to the target; band: 95 % "
        f"prediction interval. Other parameters at {escape(_point_text(setting)) or '–'}. "
        '<button id="expand" type="button">expand all</button></p><div class="cards">'
    )
    for position, rank in enumerate(diagnosis.ranking):
        model = by_kernel[rank.kernel]
        rows = measured.get(rank.kernel)
        chart = kernel_chart(
            model, rows, scale, setting, target[scale], unit, rank.kernel in flagged
        )
        opened = " open" if position < OPEN_PLOTS else ""
        out.append(
            f'<details class="card" id="k{position}" data-k="{escape(rank.kernel)}"{opened}>'
            f"<summary>{escape(rank.kernel)}</summary>{chart}{segments_note(model)}</details>"
        )
        if progress is not None:
            progress(1)
    out.append("</div>")
    out.append(f"<script>{_JS}</script></body></html>")
    return "\n".join(out)


@dataclass(frozen=True)
class Costs:
    """Predicted costs at the target by kernel (in ranking order), exclusive of child kernels.

    Attributes
    ----------
    inclusive : bool
        Whether the metric's values include the kernels' callees.
    exclusive : ndarray
        Each kernel's prediction minus its nearest kernel descendants' (when inclusive).
    total : float
        Sum of the positive exclusive predictions.
    shares : ndarray
        Positive exclusive prediction over the total.
    """

    inclusive: bool
    exclusive: np.ndarray
    total: float
    shares: np.ndarray


def _costs(diagnosis: Diagnosis) -> Costs:
    exclusive = np.array([r.exclusive for r in diagnosis.ranking], dtype=float)
    positive = np.maximum(np.nan_to_num(exclusive, nan=0.0, posinf=0.0), 0.0)
    total = float(positive.sum())
    shares = positive / total if total > 0 else np.zeros_like(positive)
    return Costs(diagnosis.inclusive, exclusive, total, shares)


def _scaling_note(diagnosis: Diagnosis) -> str:
    """What the plots along the scale parameter show: process scaling or problem growth."""
    scale = diagnosis.scale
    role = diagnosis.roles.get(scale)
    kind = (role.role or "no role").replace("_", " ") if role is not None else "no role"
    if diagnosis.mode == "strong":
        what = (
            f"process scaling, strong: the problem stays fixed while {scale} grows, so ideal "
            f"per-kernel cost shrinks like 1/{scale}"
        )
    elif diagnosis.mode == "weak":
        what = (
            f"process scaling, weak: the problem grows with {scale}, so ideal per-kernel cost "
            "stays constant"
        )
    elif diagnosis.mode == "problem-size sweep":
        what = (
            f"a problem-size sweep: the problem grows along {scale} while the processes stay "
            f"fixed, so costs are expected to grow (at most like {scale}); this is not process "
            "scaling and no scaling error is computed"
        )
    else:
        what = f"a configuration parameter: no expected growth along {scale}"
    roles = "; ".join(
        f"{name}: {(r.role or 'no role').replace('_', ' ')}, {r.scaling or 'not judged'}"
        for name, r in diagnosis.roles.items()
    )
    return (
        f'<p class="note-box">Along <code>{escape(scale)}</code> ({escape(kind)}): {escape(what)}. '
        f"Parameters: {escape(roles)}.</p>"
    )


def _summary(
    experiment: Experiment, diagnosis: Diagnosis, count: int, modeler: str | None, costs: Costs
) -> str:
    bug_kernels = {b.kernel for b in diagnosis.flagged}
    total_note = (
        " (sum of exclusive values: each kernel less the kernels it calls)"
        if costs.inclusive
        else ""
    )
    meta = "".join(
        f"<tr><th>{escape(str(k))}</th><td>{escape(str(v))}</td></tr>"
        for k, v in experiment.metadata.items()
        if isinstance(v, str | int | float)
    )
    return (
        "<h2>Summary</h2><table>"
        f"<tr><th>metric</th><td>{escape(diagnosis.metric)}</td></tr>"
        f"<tr><th>kernels</th><td>{count}</td></tr>"
        f"<tr><th>models</th><td>{_modeler_text(modeler)}</td></tr>"
        f"<tr><th>along</th><td>{escape(diagnosis.scale)}</td></tr>"
        f"<tr><th>scaling</th><td>{escape(diagnosis.mode)} "
        f"({escape(diagnosis.mode_reason)})</td></tr>"
        "<tr><th>largest measured point</th>"
        f"<td>{escape(_point_text(diagnosis.reference))}</td></tr>"
        f"<tr><th>target</th><td>{escape(_point_text(diagnosis.target))}</td></tr>"
        f"<tr><th>predicted total at target</th><td>{_fmt(costs.total, 4)}"
        f"{escape(total_note)}</td></tr>"
        f"<tr><th>kernels with scalability bugs</th><td>{len(bug_kernels)}</td></tr>"
        f"{meta}</table>"
    )


def _modeler_text(modeler: str | None) -> str:
    """The modeler's name and registry summary, escaped; "read from a file" when unknown."""
    if modeler is None:
        return "fitted elsewhere (modeler not recorded)"
    entry = REGISTRY.get(modeler)
    summary = f": {entry.summary}" if entry is not None else ""
    return escape(f"{modeler}{summary}")


def _warnings(diagnosis: Diagnosis) -> str:
    parts = ["<h2>Scalability warnings</h2>"]
    if not diagnosis.flagged and not diagnosis.crossovers:
        return parts[0] + "<p>No kernel grows faster than expected and none overtakes another.</p>"
    for bug in diagnosis.flagged:
        parts.append(
            f'<p class="warn"><span class="bug">{escape(bug.kernel)}</span>: {escape(bug.reason)}; '
            f"{100 * bug.share:.1f} % of the total at the target.</p>"
        )
    if diagnosis.crossovers:
        parts.append(
            "<table><thead><tr><th>kernel</th><th>overtakes</th><th>at</th></tr></thead><tbody>"
        )
        for c in diagnosis.crossovers[:30]:
            parts.append(
                f"<tr><td>{escape(c.overtaking)}</td><td>{escape(c.overtaken)}</td>"
                f"<td>{escape(_point_text({k: round(v, 3) for k, v in c.at.items()}))}</td></tr>"
            )
        parts.append("</tbody></table>")
    return "".join(parts)


def _scaling_table(diagnosis: Diagnosis) -> str:
    if diagnosis.modeled is None:
        return (
            f"<p>Not computed along {escape(diagnosis.scale)} ({escape(diagnosis.mode)}: "
            f"{escape(diagnosis.mode_reason)}).</p>"
        )
    rows = [*diagnosis.measured, diagnosis.modeled]
    body = "".join(
        f"<tr><td>{escape(s.origin)}</td><td>{escape(_point_text(s.fixed)) or '–'}</td>"
        f"<td>{s.scales[0]:g}–{s.scales[-1]:g}</td><td class=n>{_fmt(s.efficiency_loss)}</td>"
        f"<td class=n>{_fmt(s.paper_divergence)}</td><td>{escape(s.growth.kind)}</td>"
        f"<td class=n>{_fmt(s.growth.linear_r2)}</td>"
        f"<td class=n>{_fmt(s.growth.exponential_r2)}</td></tr>"
        for s in rows
    )
    return (
        "<table><thead><tr><th>from</th><th>other parameters</th><th>scales</th>"
        "<th>efficiency loss</th><th>divergence −R (paper)</th><th>error growth</th>"
        "<th>R² linear</th><th>R² exponential</th></tr></thead><tbody>" + body + "</tbody></table>"
    )


def _error_matrix(scaling: Scaling, limit: int = 16) -> str:
    """Every pair's scaling error as a table (rows n1, columns n2), like the paper's contours."""
    scales = scaling.scales[:limit]
    errors = {(e.n1, e.n2): e.error for e in scaling.errors}
    name = "alpha" if scaling.mode == "strong" else "beta"
    head = "".join(f"<th>{n:g}</th>" for n in scales[1:])
    rows = "".join(
        f"<tr><th>{n1:g}</th>"
        + "".join(
            f"<td class=n>{_fmt(errors[(n1, n2)])}</td>" if n2 > n1 else "<td></td>"
            for n2 in scales[1:]
        )
        + "</tr>"
        for n1 in scales[:-1]
    )
    return (
        f"<p>Measured {name}(n1, n2) for every pair"
        f"{' at ' + escape(_point_text(scaling.fixed)) if scaling.fixed else ''} "
        f'(rows n1, columns n2):</p><table class="matrix"><thead><tr><th>n1 \\ n2</th>{head}'
        f"</tr></thead><tbody>{rows}</tbody></table>"
    )


def _model_warnings(models: Sequence[Model]) -> str:
    """The models' own warnings (poor fit, two regimes, too few points, oversubscription, ...),
    one item each, as :func:`perfcast.display.tables.format_warnings` words them."""
    lines = format_warnings(models).splitlines()
    if not lines:
        return "<h2>Model warnings</h2><p>None: every model passed the quality checks.</p>"
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    return f"<h2>Model warnings</h2><ul>{items}</ul>"


def _kernel_table(
    diagnosis: Diagnosis,
    by_kernel: Mapping[str, Model],
    flagged: set[str],
    target: Mapping[str, float],
    costs: Costs,
) -> str:
    scale = diagnosis.scale
    value = "inclusive at" if costs.inclusive else "at"
    exclusive_head = "<th>exclusive</th>" if costs.inclusive else ""
    head = (
        '<table id="kernels"><thead><tr><th>#</th><th>kernel</th>'
        f"<th>{value} {escape(_point_text(target))}</th>{exclusive_head}"
        "<th>share</th><th>growth</th>"
        f"<th>lead in {escape(scale)}</th><th>model</th><th>SMAPE %</th><th>adj. R²</th>"
        "</tr></thead><tbody>"
    )
    rows = []
    for position, rank in enumerate(diagnosis.ranking):
        quality = by_kernel[rank.kernel].quality
        smape = quality.smape if quality else None
        adj = quality.adj_r2 if quality else None
        name = escape(rank.kernel)
        marker = ' <span class="bug">bug</span>' if rank.kernel in flagged else ""
        growth = rank.growth if np.isfinite(rank.growth) else None
        share = float(costs.shares[position])
        exclusive = float(costs.exclusive[position])
        exclusive_cell = (
            f'<td class=n data-v="{exclusive!r}">{_fmt(exclusive, 4)}</td>'
            if costs.inclusive
            else ""
        )
        rows.append(
            f'<tr data-k="{name}"><td class=n>{rank.cost_rank}</td>'
            f'<td><a href="#k{position}">{name}</a>{marker}</td>'
            f'<td class=n data-v="{rank.predicted!r}">{_fmt(rank.predicted, 4)}</td>'
            f"{exclusive_cell}"
            f'<td class=n data-v="{share!r}">{100 * share:.1f} %</td>'
            f'<td class=n data-v="{growth if growth is not None else 1e308!r}">{_fmt(growth)}×</td>'
            f"<td><code>{escape(rank.lead.get(scale, '1'))}</code></td>"
            f"<td><code>{escape(rank.expression)}</code></td>"
            f'<td class=n data-v="{smape if smape is not None else ""}">{_fmt(smape)}</td>'
            f'<td class=n data-v="{adj if adj is not None else ""}">{_fmt(adj)}</td></tr>'
        )
    return head + "".join(rows) + "</tbody></table>"
