"""Diagnoses, comparisons and configuration searches over fitted models."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from perfcast.api.modeling import fit
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.core.points import parse_point
from perfcast.model.modelset import ModelSet

if TYPE_CHECKING:
    from perfcast.analyze.bugs import Expectation
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.analyze.optimize import Constraint, Optimum


def models_of_metric(
    experiment: Experiment, models: ModelSet | None, metric: str | None, modeler: str
) -> tuple[Experiment, list[Model]]:
    """The experiment restricted to one metric and to the kernels modeled, and that metric's
    model of each kernel (fitted when ``models`` is None).

    Kernels that ``models`` lists as skipped (their data admitted no model) are left out of the
    experiment, so that every analysis sees only modeled kernels; the command line warns about
    them.

    Raises
    ------
    InputError
        When a kernel of the experiment has no model of the metric and was not skipped.
    """
    chosen = metric or (models.cost_metric() if models is not None else experiment.default_metric())
    experiment = experiment.select(metric=chosen)
    if models is None:
        models = fit(experiment, modeler=modeler, metric=chosen)
    models = models.for_experiment(experiment, chosen)
    if models.skipped:
        experiment = experiment.without_kernels(models.skipped_kernels(chosen))
    return experiment, models.models


def diagnose(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    metric: str | None = None,
    modeler: str = "pmnf",
    **options: Any,
) -> Diagnosis:
    """Rank kernels at a target scale, flag scalability bugs, crossovers, scaling error and
    hotspot shifts.

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    metric : str, optional
        Default: the experiment's only metric, or ``time``.
    modeler : str
        Used when ``models`` is None.
    **options
        ``at`` (a mapping or text such as ``"p=4096"``), ``scale``, ``mode``,
        ``roles`` (a mapping or text such as ``"p=processes,n=size"``),
        ``expectations`` (Expectation objects or text such as ``"solve:p=log"``),
        ``collective_patterns``, ``min_share`` (default 0.05), ``flag_runtime``, ``top``,
        ``along``: see :func:`perfcast.analyze.diagnosis.diagnose`.

    Returns
    -------
    Diagnosis
    """
    from perfcast.analyze.diagnosis import diagnose as run_diagnosis

    experiment, chosen = models_of_metric(experiment, models, metric, modeler)
    return run_diagnosis(experiment, chosen, **diagnosis_options(experiment, options))


def diagnosis_options(experiment: Experiment, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with a text ``at``, ``roles`` and ``expectations`` parsed."""
    from perfcast.analyze.bugs import parse_expectation
    from perfcast.analyze.points import parse_roles

    names = experiment.parameter_names
    parsed = dict(options)
    if isinstance(parsed.get("at"), str):
        parsed["at"] = parse_point(parsed["at"], names, source="at")
    if isinstance(parsed.get("roles"), str):
        parsed["roles"] = parse_roles(parsed["roles"], names)
    parsed["expectations"] = [
        parse_expectation(e, names, "expectation") if isinstance(e, str) else e
        for e in parsed.get("expectations", ())
    ]
    return parsed


def compare(
    baseline: Experiment,
    candidate: Experiment,
    *,
    metric: str | None = None,
    models: tuple[ModelSet, ModelSet] | None = None,
    with_models: bool = True,
    modeler: str = "pmnf",
    **options: Any,
) -> Comparison:
    """Find regressions and improvements of ``candidate`` against ``baseline``.

    Parameters
    ----------
    baseline, candidate : Experiment
        Measured with the same parameters.
    metric : str, optional
        Default: the baseline's only metric, or ``time``.
    models : (ModelSet, ModelSet), optional
        Models of both; fitted with ``modeler`` when None and ``with_models``.
    with_models : bool
        False compares the measurements only.
    modeler : str
    **options
        ``alpha``, ``min_effect``, ``target``: see
        :func:`perfcast.analyze.compare.compare_experiments`.

    Returns
    -------
    Comparison
    """
    from perfcast.analyze.compare import compare_experiments

    chosen = metric or baseline.default_metric()
    if not with_models:
        return compare_experiments(
            baseline.select(metric=chosen), candidate.select(metric=chosen), chosen, **options
        )
    a_models, b_models = models if models is not None else (None, None)
    a, models_a = models_of_metric(baseline, a_models, chosen, modeler)
    b, models_b = models_of_metric(candidate, b_models, chosen, modeler)
    return compare_experiments(a, b, chosen, models_a, models_b, **options)


def optimize(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    config_params: Sequence[str] | None = None,
    objective: str = "time",
    fix: Mapping[str, float] | str | None = None,
    constraints: Sequence[str | Constraint] = (),
    scale: str | None = None,
    mode: str | None = None,
    metric: str | None = None,
    modeler: str = "pmnf",
) -> Optimum:
    """The configuration that minimizes an objective according to the models.

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    config_params : sequence of str, optional
        The parameters searched; by default those whose role or name says configuration
        (threads, ranks per node, ...). Named ones count as configuration whatever their name.
    objective : {"time", "divergence"}
        Total modeled cost, or the divergence from ideal scaling along ``scale``.
    fix : mapping or str, optional
        Values of the other parameters (``{"p": 64}`` or ``"p=64"``); default: the largest
        measured.
    constraints : sequence of str or Constraint
        Conditions such as ``"p*threads<=64"``.
    scale : str, optional
        The scale parameter (divergence objective); from roles and names when None.
    mode : {"strong", "weak"}, optional
        Scaling mode (divergence objective); inferred from the measurements when None.
    metric : str, optional
    modeler : str

    Returns
    -------
    Optimum

    Raises
    ------
    InputError
        For a name that is not a parameter, a malformed point or constraint.
    """
    from perfcast.analyze.optimize import optimize_configuration, parse_constraint
    from perfcast.analyze.points import CONFIGURATION, SIZE, parameter_kinds, scale_parameter
    from perfcast.analyze.scaling import infer_mode

    experiment, chosen = models_of_metric(experiment, models, metric, modeler)
    names = experiment.parameter_names
    kinds = parameter_kinds(experiment, config_params or ())
    config = [n for n in names if kinds[n] == CONFIGURATION]
    fixed = parse_point(fix, names, source="fix") if isinstance(fix, str) else fix
    conditions = [parse_constraint(c, names) if isinstance(c, str) else c for c in constraints]
    size = None
    if objective == "divergence":
        scale = scale_parameter(experiment, scale)
        size = next((n for n in names if kinds[n] == SIZE), None)
        mode = mode or infer_mode(experiment, scale, chosen[0].metric, size)[0]
    return optimize_configuration(
        experiment, chosen, config, objective, fixed, conditions, scale, mode or "strong", size
    )


def parse_expectation(
    text: str, parameters: Sequence[str], origin: str = "expectation"
) -> Expectation:
    """Parse an expected growth ``KERNELGLOB:PARAM=GROWTH`` (see :func:`diagnose`).

    Parameters
    ----------
    text : str
    parameters : sequence of str
        The parameters it may name.
    origin : str
        Where the text came from, named in error messages.

    Returns
    -------
    Expectation
    """
    from perfcast.analyze.bugs import parse_expectation as parse

    return parse(text, parameters, origin)
