"""Plain-text renderings of the diagnoses for the terminal."""

from __future__ import annotations

import math
from collections.abc import Mapping

from perfcast.analyze.advice import Advice
from perfcast.analyze.compare import Comparison
from perfcast.analyze.diagnosis import Diagnosis
from perfcast.analyze.optimize import Optimum
from perfcast.analyze.scaling import Scaling
from perfcast.core.points import format_point, format_value


def _point(point: Mapping[str, float]) -> str:
    return ", ".join(f"{k}={format_value(v)}" for k, v in point.items())


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or value != value else f"{value:.{digits}g}"


def _scaling_line(scaling: Scaling) -> str:
    fixed = f" at {_point(scaling.fixed)}" if scaling.fixed else ""
    growth = scaling.growth
    shape = growth.kind
    if growth.kind != "undetermined":
        shape += f" (R² linear {_num(growth.linear_r2)}, exponential {_num(growth.exponential_r2)})"
    first = [e for e in scaling.errors if e.n1 == scaling.scales[0]]
    row = ", ".join(f"{e.n2:g}: {e.error:.3g}" for e in first)
    return (
        f"  {scaling.origin}{fixed}, {scaling.scales[0]:g}..{scaling.scales[-1]:g}: "
        f"efficiency loss {_num(scaling.efficiency_loss)}, "
        f"divergence -R {_num(scaling.paper_divergence)}, error growth {shape}\n"
        f"    error from {scaling.scales[0]:g} to {row}"
    )


def diagnosis_text(diagnosis: Diagnosis, top: int = 15) -> str:
    """The diagnosis as a terminal report."""
    d = diagnosis
    lines = [
        f"metric {d.metric}, along {d.scale}: {d.mode} ({d.mode_reason})",
        f"largest measured point {_point(d.reference)}; target {_point(d.target)}",
        "",
        "Parameters:",
    ]
    for name, role in d.roles.items():
        source = "" if role.role is None else f" (from the {role.source})"
        how = role.scaling or "not judged"
        expected = f"; expected per kernel at most {role.expected}" if role.expected else ""
        kind = (role.role or "no role").replace("_", " ")
        lines.append(f"  {name}: {kind}{source}, {how}{expected}")
    lines += [
        "",
        f"Scalability bugs (growing faster than expected, at least "
        f"{100 * d.min_share:.3g} % of the total at the target):",
    ]
    lines += [f"  ! {b.kernel}: {b.reason}; {100 * b.share:.1f} % at the target" for b in d.flagged]
    if not d.flagged:
        lines.append("  none")
    inherited = [b for b in d.bugs if b.inherited_from]
    lines += [f"  ({b.kernel} inherits from {b.inherited_from})" for b in inherited]
    if d.runtime:
        share = sum(max(r.share, 0.0) for r in d.runtime)
        names = ", ".join(r.kernel for r in d.runtime[:5]) + (", ..." if len(d.runtime) > 5 else "")
        judged = "judged like the program's" if d.flag_runtime else "not flagged"
        lines.append(
            f"  runtime (system libraries, {judged}): {len(d.runtime)} kernels, "
            f"{100 * share:.1f} % at the target: {names}"
        )
    heading = f"Kernels by predicted {d.metric} at the target (top {min(top, len(d.ranking))})"
    if d.inclusive:
        heading += "; values include called kernels, shares are of exclusive values"
    lines += ["", f"{heading}:"]
    for rank in d.ranking[:top]:
        own = f"exclusive {rank.exclusive:.4g}, " if d.inclusive else ""
        lines.append(
            f"  {rank.cost_rank:>3}. {rank.kernel}  {rank.predicted:.4g} "
            f"({own}{100 * rank.share:.1f} %), "
            f"growth {_num(rank.growth)}x [growth rank {rank.growth_rank}]  {rank.expression}"
        )
    growing = sorted(d.ranking, key=lambda r: r.growth_rank)[: min(5, len(d.ranking))]
    lines += ["", f"Fastest growing from {_point(d.reference)} to the target:"]
    lines += [f"  {r.growth_rank:>3}. {r.kernel}  x{_num(r.growth)}" for r in growing]
    lines += ["", "Crossovers before the target:"]
    lines += [
        f"  {c.overtaking} overtakes {c.overtaken} at "
        f"{_point({k: round(v, 3) for k, v in c.at.items()})}"
        for c in d.crossovers
    ] or ["  none"]
    if d.modeled is None:
        lines += ["", f"Scaling error: not computed along {d.scale} ({d.mode})"]
    else:
        lines += ["", f"Scaling error ({d.mode}):"]
        lines += [_scaling_line(s) for s in d.measured]
        lines.append(_scaling_line(d.modeled))
    if d.hotspots is not None:
        lines += ["", f"Hotspot shift along {d.hotspots.parameter}:"]
        for step in d.hotspots.steps:
            lines.append(
                f"  {step.start:g} -> {step.end:g} ({step.origin}): chi2 {step.chi_square:.3g} "
                f"(p {step.chi_square_p:.3g}), Kendall tau {step.kendall_tau:.3f} "
                f"(distance {step.kendall_distance:.3f}), "
                f"total variation {step.total_variation:.3f}"
            )
        for name, changed in d.hotspots.most_changed().items():
            if changed is not None:
                lines.append(
                    f"  most change by {name.replace('_', ' ')}: "
                    f"{changed.start:g} -> {changed.end:g}"
                )
    return "\n".join(lines) + "\n"


def comparison_text(comparison: Comparison) -> str:
    """The comparison as a terminal report."""
    c = comparison
    lines = [
        f"metric {c.metric}; family-wise alpha {c.alpha}, "
        f"minimum effect {100 * c.min_effect:.0f} %",
        "",
    ]
    lines += c.summary()
    if c.only_in_a or c.only_in_b:
        lines += [
            "",
            f"only in A: {', '.join(c.only_in_a) or '-'}",
            f"only in B: {', '.join(c.only_in_b) or '-'}",
        ]
    lines += ["", "Per kernel (B/A ratio range, adjusted p slower / faster, verdict):"]
    for k in c.kernels:
        lines.append(
            f"  {k.kernel}: {k.min_ratio:.3f}..{k.max_ratio:.3f}, p {_num(k.p_slower, 2)} / "
            f"{_num(k.p_faster, 2)}, {k.verdict}"
        )
        if k.models:
            m = k.models
            lead = "; ".join(f"{p}: {a} -> {b}" for p, (a, b) in m["lead"].items())
            lines.append(f"      A: {m['a']}\n      B: {m['b']}\n      lead order {lead}")
            for crossing in m["crossings"]:
                side = "B slower" if crossing["b_slower_after"] else "B faster"
                lines.append(f"      models cross at {_point(crossing['at'])} ({side} after)")
            for p, line in m["linear"].items():
                lines.append(
                    f"      linear in {p}: slope {line['slope'][0]:.4g} -> {line['slope'][1]:.4g}, "
                    f"intercept {line['intercept'][0]:.4g} -> {line['intercept'][1]:.4g}"
                )
    return "\n".join(lines) + "\n"


def optimum_text(optimum: Optimum) -> str:
    """The configuration search as a terminal report."""
    o = optimum
    lines = [
        f"objective {o.objective}: best {_num(o.value, 4)} at {_point(o.configuration)}",
        f"fixed {_point(o.fixed) or '-'}; {o.feasible} of {o.evaluated} configurations feasible",
    ]
    if o.constraints:
        lines.append(f"constraints: {'; '.join(o.constraints)}")
    if o.paper_divergence is not None:
        lines.append(f"paper divergence -R at the optimum: {o.paper_divergence:.3f}")
    lines += ["", "What matters (range varying one variable alone at the optimum; variance share):"]
    for imp in o.importance:
        lines.append(
            f"  {imp.parameter}: range {imp.range:.4g} ({100 * imp.relative_range:.1f} % of the "
            f"optimum; best {imp.best:g}, worst {imp.worst:g}), "
            f"variance share {imp.variance_share:.2f}"
        )
    lines += ["", "Best configurations:", o.ranking.to_string(index=False)]
    return "\n".join(lines) + "\n"


def advice_text(advice: Advice) -> str:
    """Measurement-point advice as a terminal report: the target's interval now, the points to
    measure in order (cost, interval after, why) and what limits the advice."""
    a = advice
    lines = [
        f"target {format_point(a.target)} ({a.metric}, all kernels): prediction "
        f"{_num(a.prediction, 4)}, {a.level:.0%} interval ±{_percent(a.width_before)}",
        f"budget {a.budget.text()}, {a.repetitions} repetition(s) per point; the suggestions "
        f"take {a.runs} runs"
        + (f", {a.core_hours:.3g} core-hours" if a.core_hours is not None else "")
        + _cost_interval(a.core_hours_interval, a.level)
        + f", and narrow the interval to ±{_percent(a.width_after)} (measuring cannot go "
        f"below ±{_percent(a.floor)})",
    ]
    if a.suggestions:
        lines += ["", "measure next:"]
        for i, s in enumerate(a.suggestions, 1):
            cost = (
                f", {s.core_hours:.3g} core-hours{_cost_interval(s.core_hours_interval)}"
                if s.core_hours is not None
                else ""
            )
            lines.append(
                f"  {i}. {format_point(s.point)}: {s.runs} runs{cost}; interval after "
                f"±{_percent(s.width_after)}; {'; '.join(s.reasons)}"
            )
    else:
        lines += ["", "no candidate point narrows the interval within the budget"]
    if a.warnings:
        lines += ["", "warnings:", *(f"  {w.message}" for w in a.warnings)]
    return "\n".join(lines) + "\n"


def _cost_interval(interval: tuple[float, float] | None, level: float | None = None) -> str:
    """`` (0.8-1.3)`` after a cost: its interval, ``unbounded`` above where the models give no
    bound; the level named when given."""
    if interval is None:
        return ""
    low, high = interval
    upper = f"{high:.3g}" if math.isfinite(high) else "unbounded"
    return f" ({low:.3g}-{upper}" + (f" at {level:.0%})" if level is not None else ")")


def _percent(width: float) -> str:
    return f"{width:.1%}" if math.isfinite(width) else "unbounded"
