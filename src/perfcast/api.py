"""The public Python API of perfcast: load measurements, fit models, predict, diagnose, compare,
optimize and report.

Every command of the ``perfcast`` command line does its work through these functions, and the
names are re-exported from the package, so ``import perfcast`` is all a script needs::

    import perfcast

    experiment = perfcast.load("runs.csv")
    models = perfcast.fit(experiment)            # a ModelSet: kernel -> metric -> Model
    for prediction in models.predict({"p": 4096, "n": 1e6})[:5]:
        print(prediction.kernel, prediction.value, prediction.lower, prediction.upper)

Errors in the input are :class:`~perfcast.core.errors.InputError` (naming the file and line or
record); a setting outside its allowed range is a ``ValueError`` naming the setting.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.io import read_experiment, write_experiment
from perfcast.model.modelset import ModelSet, measured_ranges
from perfcast.model.predict import Prediction
from perfcast.model.registry import make_modeler, modeler_names

if TYPE_CHECKING:
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.analyze.optimize import Optimum
    from perfcast.measure.campaign import CampaignResult
    from perfcast.measure.spec import Campaign
    from perfcast.static.report import StaticReport


def load(
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 - the documented keyword
    metric: str | None = None,
    kernels: str | None = None,
) -> Experiment:
    """Read measurements from a file or directory of any supported format.

    Parameters
    ----------
    path : str or Path
        A perfcast JSON or table (CSV, Parquet), an Extra-P file, a campaign results journal,
        a Caliper ``.cali`` file or directory, or a Score-P CUBE set.
    format : str, optional
        The format's name (see :func:`formats`); detected from the content when None.
    metric : str, optional
        Keep only this metric.
    kernels : str, optional
        Keep only the kernels matching this glob pattern.

    Returns
    -------
    Experiment

    Raises
    ------
    InputError
        When the file is missing, of unknown format or malformed, or the metric is not measured.
    """
    experiment = read_experiment(path, format)
    if metric is not None and metric not in experiment.metric_names:
        raise InputError(f"no metric '{metric}' (have {', '.join(experiment.metric_names)})", path)
    if metric is None and kernels is None:
        return experiment
    return experiment.select(kernels=kernels, metric=metric)


def fit(
    experiment: Experiment,
    *,
    modeler: str = "pmnf",
    metric: str | Sequence[str] | None = None,
    **settings: Any,
) -> ModelSet:
    """Fit a scaling model to every kernel of ``experiment``.

    Parameters
    ----------
    experiment : Experiment
        From :func:`load` or built with :meth:`Experiment.from_frame`.
    modeler : str
        A registered modeler (see :func:`modelers`): ``pmnf`` (default), ``sparse`` or
        ``hybrid`` (which needs ``report=`` from :func:`perfcast.static.analyze`).
    metric : str or sequence of str, optional
        The metric(s) to model; every metric of the experiment when None.
    **settings
        The modeler's settings, e.g. ``alpha=0.01`` or ``location="median"``; each is checked
        against its allowed range.

    Returns
    -------
    ModelSet
        Models by kernel and metric, ranked by cost at the largest measured configuration,
        recording the modeler and its settings.

    Raises
    ------
    ValueError
        For an unknown modeler or a setting outside its allowed range.
    InputError
        When the data cannot be modeled (too few points, non-positive parameter values, ...).
    """
    estimator = make_modeler(modeler, **settings)
    if metric is None:
        metrics = experiment.metric_names
    elif isinstance(metric, str):
        metrics = [metric]
    else:
        metrics = list(metric)
    models: list[Model] = []
    notes: dict[str, None] = {}
    for name in metrics:
        models.extend(estimator.fit(experiment, name).models_)
        notes.update(dict.fromkeys(estimator.notes()))
    return ModelSet(
        models,
        modeler=modeler,
        settings=estimator.get_params(),
        ranges=measured_ranges(experiment),
        source=experiment.source,
        notes=list(notes),
    )


def predict(
    models: ModelSet,
    at: Mapping[str, float],
    *,
    metric: str | None = None,
    level: float = 0.95,
) -> list[Prediction]:
    """Predict every kernel at a configuration, with prediction intervals, most expensive first.

    Parameters
    ----------
    models : ModelSet
    at : mapping of str to float
        A positive value for every parameter, e.g. ``{"p": 4096, "n": 1e6}``.
    metric : str, optional
        Default: ``time`` when modeled, else the first metric.
    level : float
        Probability of the prediction intervals.

    Returns
    -------
    list of Prediction
    """
    return models.predict(at, metric=metric, level=level)


def _models_of(
    experiment: Experiment, models: ModelSet | None, metric: str | None, modeler: str
) -> tuple[Experiment, list[Model]]:
    """The experiment restricted to one metric and that metric's models (fitted when None)."""
    chosen = metric or (models.cost_metric() if models is not None else experiment.default_metric())
    experiment = load_metric(experiment, chosen)
    if models is None:
        models = fit(experiment, modeler=modeler, metric=chosen)
    kernels = set(experiment.kernels)
    return experiment, [m for m in models.of_metric(chosen) if m.kernel in kernels]


def load_metric(experiment: Experiment, metric: str) -> Experiment:
    """``experiment`` with only ``metric``.

    Raises
    ------
    InputError
        When the metric is not measured (the error names the metrics there are).
    """
    if metric not in experiment.metric_names:
        raise InputError(
            f"no metric '{metric}' (have {', '.join(experiment.metric_names)})",
            experiment.source,
        )
    return experiment.select(metric=metric)


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
        ``at``, ``scale``, ``mode``, ``expectations``, ``collective_patterns``, ``min_share``,
        ``top``, ``along``: see :func:`perfcast.analyze.diagnosis.diagnose`.

    Returns
    -------
    Diagnosis
    """
    from perfcast.analyze.diagnosis import diagnose as run_diagnosis

    experiment, chosen = _models_of(experiment, models, metric, modeler)
    return run_diagnosis(experiment, chosen, **options)


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
            load_metric(baseline, chosen), load_metric(candidate, chosen), chosen, **options
        )
    a_models, b_models = models if models is not None else (None, None)
    a, models_a = _models_of(baseline, a_models, chosen, modeler)
    b, models_b = _models_of(candidate, b_models, chosen, modeler)
    return compare_experiments(a, b, chosen, models_a, models_b, **options)


def optimize(
    experiment: Experiment,
    config_params: Sequence[str],
    models: ModelSet | None = None,
    *,
    metric: str | None = None,
    modeler: str = "pmnf",
    **options: Any,
) -> Optimum:
    """The configuration that minimizes an objective according to the models.

    Parameters
    ----------
    experiment : Experiment
    config_params : sequence of str
        The parameters searched.
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    metric : str, optional
    modeler : str
    **options
        ``objective``, ``fix``, ``constraints``, ``scale``, ``mode``, ``size``: see
        :func:`perfcast.analyze.optimize.optimize_configuration`.

    Returns
    -------
    Optimum
    """
    from perfcast.analyze.optimize import optimize_configuration

    experiment, chosen = _models_of(experiment, models, metric, modeler)
    return optimize_configuration(experiment, chosen, config_params, **options)


def report(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    path: str | Path | None = None,
    title: str | None = None,
    metric: str | None = None,
    modeler: str = "pmnf",
    diagnosis: Diagnosis | None = None,
    png_directory: str | Path | None = None,
    **options: Any,
) -> str:
    """A self-contained HTML report: models, plots, warnings, scaling error, hotspot shifts.

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    path : str or Path, optional
        Also write the report there.
    title : str, optional
        Default: from the experiment's source.
    metric : str, optional
    modeler : str
    diagnosis : Diagnosis, optional
        Of these models; made with ``options`` when None.
    png_directory : str or Path, optional
        Also write static PNG plots (matplotlib) there.
    **options
        Passed to :func:`diagnose`.

    Returns
    -------
    str
        The HTML document.

    Raises
    ------
    InputError
        When ``path`` cannot be written.
    """
    from perfcast.analyze.diagnosis import diagnose as run_diagnosis
    from perfcast.render.html import build_report

    experiment, chosen = _models_of(experiment, models, metric, modeler)
    if diagnosis is None:
        diagnosis = run_diagnosis(experiment, chosen, **options)
    html = build_report(experiment, chosen, diagnosis, title)
    if path is not None:
        try:
            Path(path).write_text(html, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", path) from None
    if png_directory is not None:
        from perfcast.render.png import write_pngs

        write_pngs(experiment, chosen, diagnosis, Path(png_directory))
    return html


def save(experiment: Experiment, path: str | Path, *, format: str | None = None) -> None:  # noqa: A002
    """Write measurements in any writable format (see :func:`formats`).

    Parameters
    ----------
    experiment : Experiment
    path : str or Path
    format : str, optional
        The format's name; from the file's suffix when None.

    Raises
    ------
    InputError
        When the format is unknown or the file cannot be written.
    """
    write_experiment(experiment, path, format)


def import_profiles(
    paths: Sequence[str | Path],
    *,
    profile_format: str | None = None,
    pattern: str | None = None,
    params: Mapping[str, str] | None = None,
    rank_statistic: str = "avg",
    location_statistic: str = "mean",
) -> Experiment:
    """Read profiles of one tool (Caliper ``.cali``, Score-P CUBE), one run each, as an experiment.

    Parameters
    ----------
    paths : sequence of str or Path
        Profiles or directories of profiles.
    profile_format : {"caliper", "cube"}, optional
        Detected from the first path when None.
    pattern : str, optional
        Run parameters from file or directory names, e.g. ``"mm.x{x}y{y}.r{rep}"``.
    params : mapping of str to str, optional
        Caliper metadata key to parameter name (``rep`` marks the repetition).
    rank_statistic : {"avg", "min", "max", "sum"}
        How Caliper records of several MPI ranks reduce.
    location_statistic : {"mean", "sum", "min", "max"}
        How CUBE values of several locations reduce.

    Returns
    -------
    Experiment
        Its metadata says which keys became parameters and which were dropped.
    """
    from perfcast.io.importers import import_profiles as read_profiles

    return read_profiles(
        paths,
        profile_format=profile_format,
        pattern=pattern,
        params=params,
        rank_statistic=rank_statistic,
        location_statistic=location_statistic,
    )


def load_campaign(
    source: str | Path | Mapping[str, Any], overrides: Mapping[str, Any] | None = None
) -> Campaign:
    """A validated measurement campaign from a TOML file or a mapping of its keys.

    Parameters
    ----------
    source : str, Path or mapping
        The campaign file, or the campaign-file keys (``command``, ``parameters``, ...).
    overrides : mapping, optional
        Keys that replace the file's.

    Raises
    ------
    InputError
        Naming the file and line of anything wrong (unknown keys, bad ranges, a missing program).
    """
    from perfcast.measure.spec import campaign_from_mapping
    from perfcast.measure.spec import load_campaign as read_campaign

    if isinstance(source, Mapping):
        return campaign_from_mapping({**source, **(overrides or {})})
    return read_campaign(source, overrides=overrides)


def run_campaign(campaign: Campaign, *, retry_failed: bool = False) -> CampaignResult:
    """Take every run of a campaign not yet recorded in its results journal.

    Parameters
    ----------
    campaign : Campaign
        From :func:`load_campaign`.
    retry_failed : bool
        Also repeat runs that failed before.

    Returns
    -------
    CampaignResult
        The experiment so far, runs taken, skipped and failed.
    """
    from perfcast.measure.campaign import run_campaign as take_runs

    return take_runs(campaign, retry_failed=retry_failed)


def analyze_source(
    sources: Sequence[str | Path], parameters: Sequence[str], compile_args: Sequence[str] = ()
) -> StaticReport:
    """Count every function and loop of C sources symbolically over the named parameters.

    Parameters
    ----------
    sources : sequence of str or Path
        The C files of one program.
    parameters : sequence of str
        Source names of the input parameters (macros, globals, locals, arguments, fields).
    compile_args : sequence of str
        Flags for clang (``-D``, ``-I``, ...).

    Returns
    -------
    StaticReport
        Pass it to :func:`fit` as ``report=`` with ``modeler="hybrid"``.
    """
    from perfcast.static import analyze

    return analyze(sources, parameters, compile_args)


def modelers() -> tuple[str, ...]:
    """Names of the registered modelers (see :mod:`perfcast.model.registry`)."""
    return modeler_names()


def formats() -> dict[str, dict[str, bool]]:
    """Every data format by name, with whether perfcast can read and write it."""
    from perfcast.io import formats as format_modules

    return {
        name: {"read": hasattr(module, "read"), "write": hasattr(module, "write")}
        for name, module in format_modules().items()
    }


__all__ = [
    "ModelSet",
    "analyze_source",
    "compare",
    "diagnose",
    "fit",
    "formats",
    "import_profiles",
    "load",
    "load_campaign",
    "load_metric",
    "modelers",
    "optimize",
    "predict",
    "report",
    "run_campaign",
    "save",
]
