"""All diagnoses of one experiment and its models, gathered into one :class:`Diagnosis`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfcast.analyze.bugs import BugFinding, Expectation, find_scalability_bugs
from perfcast.analyze.hotspots import ProfileShift, profile_shift
from perfcast.analyze.points import (
    SIZE,
    largest_point,
    parameter_kinds,
    scale_parameter,
    target_point,
)
from perfcast.analyze.ranking import Crossover, KernelRank, find_crossovers, rank_kernels
from perfcast.analyze.scaling import (
    STRONG,
    WEAK,
    Scaling,
    infer_mode,
    measured_scalings,
    modeled_scaling,
)
from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model


@dataclass
class Diagnosis:
    """Everything :func:`diagnose` finds.

    Attributes
    ----------
    metric, scale, mode, mode_reason : str
        The metric diagnosed, the scale parameter, ``strong``/``weak`` and why.
    target, reference : dict
        The forecast configuration and the largest measured point.
    ranking : list of KernelRank
    bugs : list of BugFinding
        Candidates whose lead order exceeds the expectation; ``flagged`` marks the bugs.
    crossovers : list of Crossover
    measured : list of Scaling
        Scaling errors of the measured totals.
    modeled : Scaling
        Scaling errors of the summed models up to the target.
    kernel_scaling : dict of str to Scaling
        Modeled scaling of the ``top`` most expensive kernels.
    hotspots : ProfileShift or None
    """

    metric: str
    scale: str
    mode: str
    mode_reason: str
    target: dict[str, float]
    reference: dict[str, float]
    ranking: list[KernelRank]
    bugs: list[BugFinding]
    crossovers: list[Crossover]
    measured: list[Scaling]
    modeled: Scaling
    kernel_scaling: dict[str, Scaling] = field(default_factory=dict)
    hotspots: ProfileShift | None = None

    @property
    def flagged(self) -> list[BugFinding]:
        """The reported scalability bugs."""
        return [b for b in self.bugs if b.flagged]

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON (``perfcast diagnose --format json``)."""
        return {
            "metric": self.metric,
            "scale": self.scale,
            "scaling_mode": {"mode": self.mode, "reason": self.mode_reason},
            "target": self.target,
            "reference": self.reference,
            "ranking": [r.to_dict() for r in self.ranking],
            "scalability_bugs": [b.to_dict() for b in self.flagged],
            "candidates_not_flagged": [b.to_dict() for b in self.bugs if not b.flagged],
            "crossovers": [c.to_dict() for c in self.crossovers],
            "scaling_error": {
                "measured": [s.to_dict() for s in self.measured],
                "modeled": self.modeled.to_dict(),
                "kernels": {k: s.to_dict() for k, s in self.kernel_scaling.items()},
            },
            "hotspot_shift": None if self.hotspots is None else self.hotspots.to_dict(),
        }


def diagnose(
    experiment: Experiment,
    models: Sequence[Model],
    *,
    at: Mapping[str, float] | None = None,
    scale: str | None = None,
    mode: str | None = None,
    expectations: Sequence[Expectation] = (),
    collective_patterns: Sequence[str] = (),
    min_share: float = 0.01,
    top: int = 20,
    along: str | None = None,
) -> Diagnosis:
    """Rank kernels, flag scalability bugs, find crossovers, scaling errors and hotspot shifts.

    Parameters
    ----------
    experiment : Experiment
        The measurements.
    models : sequence of Model
        One model per kernel of one metric, fitted to ``experiment``.
    at : mapping, optional
        The target configuration (see :func:`perfcast.analyze.points.target_point`).
    scale : str, optional
        The scale parameter; inferred from roles and names when None.
    mode : {"strong", "weak"}, optional
        Inferred by :func:`perfcast.analyze.scaling.infer_mode` when None.
    expectations, collective_patterns, min_share
        See :func:`perfcast.analyze.bugs.find_scalability_bugs`.
    top : int
        How many of the most expensive kernels get their own scaling analysis and enter the
        crossover search.
    along : str, optional
        Parameter the hotspot shift follows (default: the scale).

    Raises
    ------
    InputError
        When there are no models or they do not match the experiment.
    """
    if not models:
        raise InputError("no models to diagnose", experiment.source)
    metric = models[0].metric
    if any(m.metric != metric for m in models):
        raise InputError(
            "the models are of several metrics "
            f"({', '.join(sorted({m.metric for m in models}))}); diagnose one at a time",
            experiment.source,
            reason="mixed-metrics",
            value=sorted({m.metric for m in models}),
        )
    if tuple(models[0].parameters) != experiment.parameter_names:
        raise InputError(
            f"the models' parameters ({', '.join(models[0].parameters)}) are not the "
            f"experiment's ({', '.join(experiment.parameter_names)})",
            experiment.source,
        )
    experiment = experiment.select(metric=metric)
    scale = scale_parameter(experiment, scale)
    kinds = parameter_kinds(experiment)
    size = next((n for n in experiment.parameter_names if kinds[n] == SIZE), None)
    if mode is None:
        mode, reason = infer_mode(experiment, scale, metric, size)
    elif mode in (STRONG, WEAK):
        reason = "given by the user"
    else:
        raise InputError(
            f"the scaling mode must be 'strong' or 'weak', not {mode!r}",
            reason="unknown-scaling-mode",
            value=mode,
        )
    target = target_point(experiment, at, scale)
    reference = largest_point(experiment)
    ranking = rank_kernels(models, target, reference)
    bugs = find_scalability_bugs(
        experiment,
        models,
        scale,
        mode,
        target,
        metric,
        expectations,
        collective_patterns,
        min_share=min_share,
    )
    crossovers = find_crossovers(models, reference, target, top=top)
    measured_scales = sorted(set(experiment.points()[:, experiment.parameter_names.index(scale)]))
    measured = measured_scalings(experiment, scale, mode, metric, size)
    modeled = modeled_scaling(models, scale, mode, target, measured_scales, size)
    by_kernel = {m.kernel: m for m in models}
    kernel_scaling = {
        r.kernel: modeled_scaling([by_kernel[r.kernel]], scale, mode, target, measured_scales, size)
        for r in ranking[:top]
    }
    along = along or scale
    if along not in experiment.parameter_names:
        raise InputError(
            f"cannot follow '{along}': not a parameter ({', '.join(experiment.parameter_names)})",
            experiment.source,
            value=along,
        )
    try:
        hotspots = profile_shift(experiment, along, metric, models, target[along])
    except InputError:
        hotspots = None
    return Diagnosis(
        metric,
        scale,
        mode,
        reason,
        target,
        reference,
        ranking,
        bugs,
        crossovers,
        measured,
        modeled,
        kernel_scaling,
        hotspots,
    )
