"""All diagnoses of one experiment and its models, gathered into one :class:`Diagnosis`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from perfcast.analyze.bugs import (
    BugFinding,
    Expectation,
    expectations_for,
    find_scalability_bugs,
    is_runtime,
)
from perfcast.analyze.exclusive import is_inclusive_metric
from perfcast.analyze.hotspots import ProfileShift, profile_shift
from perfcast.analyze.points import (
    CONFIGURATION,
    PROBLEM_SIZE,
    PROCESSES,
    THREADS,
    ParameterRole,
    largest_point,
    parameter_roles,
    scale_parameter,
    target_point,
)
from perfcast.analyze.ranking import Crossover, KernelRank, find_crossovers, rank_kernels
from perfcast.analyze.scaling import (
    PROBLEM_SIZE_SWEEP,
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


@dataclass(frozen=True)
class RoleScaling:
    """How one parameter is judged: its role, and strong, weak or problem-size growth.

    Attributes
    ----------
    parameter : str
    role : str or None
        ``processes``, ``threads``, ``problem_size``, ``configuration`` or None (unknown).
    source : str
        Where the role came from: ``given``, ``experiment``, ``name`` or ``unknown``.
    scaling : str or None
        ``strong`` or ``weak`` (processes, threads, or the scale parameter of unknown role),
        ``problem-size sweep`` (problem size), None (not judged: configuration, unknown).
    reason : str
        Why this scaling.
    expected : str or None
        The default expected growth of a kernel in this parameter, e.g. ``p^(-1)``.
    """

    parameter: str
    role: str | None
    source: str
    scaling: str | None
    reason: str
    expected: str | None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary for JSON."""
        return {
            "role": self.role,
            "role_source": self.source,
            "scaling": self.scaling,
            "reason": self.reason,
            "expected": self.expected,
        }


@dataclass
class Diagnosis:
    """Everything :func:`diagnose` finds.

    Attributes
    ----------
    metric, scale, mode, mode_reason : str
        The metric diagnosed, the scale parameter, how it scales (``strong``, ``weak``,
        ``problem-size sweep``, or ``none`` for a configuration parameter) and why.
    target, reference : dict
        The forecast configuration and the largest measured point.
    ranking : list of KernelRank
    bugs : list of BugFinding
        Candidates whose lead order exceeds the expectation; ``flagged`` marks the bugs.
    crossovers : list of Crossover
    measured : list of Scaling
        Scaling errors of the measured totals (empty along a problem-size parameter).
    modeled : Scaling or None
        Scaling errors of the summed models up to the target (None along a problem-size
        parameter: the scaling error measures process or thread scaling).
    kernel_scaling : dict of str to Scaling
        Modeled scaling of the ``top`` most expensive kernels.
    hotspots : ProfileShift or None
    roles : dict of str to RoleScaling
        Every parameter's role and how it is judged.
    runtime : list of KernelRank
        System-library kernels (dynamic linker, C library, MPI internals), by predicted cost.
    min_share : float
        Share of the total at the target below which a kernel is not flagged.
    flag_runtime : bool
        Whether runtime kernels were judged like the program's own.
    inclusive : bool
        Whether the metric's values include those of called kernels; shares then come from
        exclusive values (``KernelRank.exclusive``).
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
    modeled: Scaling | None
    kernel_scaling: dict[str, Scaling] = field(default_factory=dict)
    hotspots: ProfileShift | None = None
    roles: dict[str, RoleScaling] = field(default_factory=dict)
    runtime: list[KernelRank] = field(default_factory=list)
    min_share: float = 0.05
    flag_runtime: bool = False
    inclusive: bool = False

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
            "parameters": {name: role.to_dict() for name, role in self.roles.items()},
            "min_share": self.min_share,
            "runtime": {
                "flagged_when_growing": self.flag_runtime,
                "share": sum(max(r.share, 0.0) for r in self.runtime),
                "kernels": [r.kernel for r in self.runtime],
            },
            "target": self.target,
            "reference": self.reference,
            "values": "inclusive" if self.inclusive else "exclusive",
            "total_from": "exclusive",
            "ranking": [r.to_dict() for r in self.ranking],
            "scalability_bugs": [b.to_dict() for b in self.flagged],
            "candidates_not_flagged": [b.to_dict() for b in self.bugs if not b.flagged],
            "crossovers": [c.to_dict() for c in self.crossovers],
            "scaling_error": {
                "measured": [s.to_dict() for s in self.measured],
                "modeled": None if self.modeled is None else self.modeled.to_dict(),
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
    roles: Mapping[str, str] | None = None,
    expectations: Sequence[Expectation] = (),
    collective_patterns: Sequence[str] = (),
    min_share: float = 0.05,
    flag_runtime: bool = False,
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
        The parameter the target, scaling error and hotspot shift follow; from the roles when
        None (:func:`perfcast.analyze.points.scale_parameter`).
    mode : {"strong", "weak"}, optional
        How process and thread parameters scale; inferred per parameter by
        :func:`perfcast.analyze.scaling.infer_mode` when None.
    roles : mapping, optional
        Roles of some parameters (``{"p": "processes", "n": "size"}``), overriding the
        experiment's and the names' (:func:`perfcast.analyze.points.parameter_roles`).
    expectations, collective_patterns, min_share, flag_runtime
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
    if mode is not None and mode not in (STRONG, WEAK):
        raise InputError(
            f"the scaling mode must be 'strong' or 'weak', not {mode!r}",
            reason="unknown-scaling-mode",
            value=mode,
        )
    experiment = experiment.select(metric=metric)
    found_roles = parameter_roles(experiment, roles)
    scale = scale_parameter(experiment, scale, found_roles)
    judged = _role_scalings(experiment, metric, found_roles, scale, mode)
    scale_role = judged[scale]
    size = next((n for n, r in found_roles.items() if r.role == PROBLEM_SIZE), None)
    target = target_point(experiment, at, scale)
    reference = largest_point(experiment)
    inclusive = is_inclusive_metric(experiment, metric)
    ranking = rank_kernels(models, target, reference, inclusive)
    scalings = {name: r.scaling for name, r in judged.items() if r.scaling is not None}
    bugs = find_scalability_bugs(
        experiment,
        models,
        scalings,
        target,
        metric,
        expectations,
        collective_patterns,
        min_share=min_share,
        flag_runtime=flag_runtime,
    )
    crossovers = find_crossovers(models, reference, target, top=top)
    measured: list[Scaling] = []
    modeled: Scaling | None = None
    kernel_scaling: dict[str, Scaling] = {}
    scale_mode = scale_role.scaling or "none"
    if scale_mode in (STRONG, WEAK):
        column = experiment.parameter_names.index(scale)
        measured_scales = sorted(set(experiment.points()[:, column]))
        size_along = size if size != scale else None
        measured = measured_scalings(experiment, scale, scale_mode, metric, size_along)
        modeled = modeled_scaling(models, scale, scale_mode, target, measured_scales, size_along)
        by_kernel = {m.kernel: m for m in models}
        kernel_scaling = {
            r.kernel: modeled_scaling(
                [by_kernel[r.kernel]], scale, scale_mode, target, measured_scales, size_along
            )
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
        hotspots = profile_shift(
            experiment, along, metric, models, target[along], inclusive=inclusive
        )
    except InputError:
        hotspots = None
    return Diagnosis(
        metric,
        scale,
        scale_mode,
        scale_role.reason,
        target,
        reference,
        ranking,
        bugs,
        crossovers,
        measured,
        modeled,
        kernel_scaling,
        hotspots,
        judged,
        [r for r in ranking if is_runtime(r.kernel)],
        min_share,
        flag_runtime,
        inclusive,
    )


def _role_scalings(
    experiment: Experiment,
    metric: str,
    roles: Mapping[str, ParameterRole],
    scale: str,
    mode: str | None,
) -> dict[str, RoleScaling]:
    """How every parameter is judged (see :class:`RoleScaling`).

    Processes and threads scale strong or weak (``mode``, else inferred per parameter); a
    problem size is a problem-size sweep; the scale parameter of unknown role is judged as a
    process count; configuration and other parameters have no expected order.
    """
    size = next((n for n, r in roles.items() if r.role == PROBLEM_SIZE), None)
    result: dict[str, RoleScaling] = {}
    for name, found in roles.items():
        scaling: str | None
        if found.role in (PROCESSES, THREADS) or (found.role is None and name == scale):
            if mode is not None:
                scaling, reason = mode, "given by the user"
            else:
                scaling, reason = infer_mode(
                    experiment, name, metric, size if size != name else None
                )
            if found.role is None:
                reason += f"; {name} has no role and is judged as a process count"
        elif found.role == PROBLEM_SIZE:
            scaling = PROBLEM_SIZE_SWEEP
            reason = (
                f"{name} is the problem size: growth with the problem, measured against "
                f"work in proportion to {name}, not process scaling"
            )
        else:
            scaling = None
            reason = (
                f"{name} is a configuration parameter: no expected order"
                if found.role == CONFIGURATION
                else f"{name} has no role: no expected order"
            )
        expected = expectations_for("", {name: scaling} if scaling else {}, ())
        result[name] = RoleScaling(
            name,
            found.role,
            found.source,
            scaling,
            reason,
            expected[name].text() if name in expected else None,
        )
    return result
