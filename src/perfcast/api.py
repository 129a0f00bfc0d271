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

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from perfcast.core.errors import InputError, WorkError
from perfcast.core.jsonout import dumps
from perfcast.core.points import parse_point
from perfcast.core.progress import ProgressBar

# Names of the measurement and modeling layers (numpy, pandas, scipy) load on first use, so
# that a command that needs none of them (``perfcast static``) does not pay for them at start-up;
# the functions below import what they use.
if TYPE_CHECKING:
    from perfcast.core.experiment import Experiment
    from perfcast.core.function import Model
    from perfcast.display.tables import FORMATS as TABLE_FORMATS
    from perfcast.model.distributed import DaskChunks, dask_client, scheduler_address
    from perfcast.model.fitting.assembly import Skip
    from perfcast.model.fitting.location import LOCATIONS
    from perfcast.model.modelset import ModelSet
    from perfcast.model.predict import Prediction

#: Name -> (module, name there) of the names that load on first use (the ones above and more).
_ON_FIRST_USE = {
    "Experiment": ("perfcast.core.experiment", "Experiment"),
    "Model": ("perfcast.core.function", "Model"),
    "TABLE_FORMATS": ("perfcast.display.tables", "FORMATS"),
    "read_experiment": ("perfcast.io", "read_experiment"),
    "write_experiment": ("perfcast.io", "write_experiment"),
    "BACKTEST_KERNELS": ("perfcast.model.backtest", "CHUNK_KERNELS"),
    "backtest": ("perfcast.model.backtest", "backtest"),
    "DaskChunks": ("perfcast.model.distributed", "DaskChunks"),
    "dask_client": ("perfcast.model.distributed", "dask_client"),
    "scheduler_address": ("perfcast.model.distributed", "scheduler_address"),
    "Skip": ("perfcast.model.fitting.assembly", "Skip"),
    "require_models": ("perfcast.model.fitting.assembly", "require_models"),
    "LOCATIONS": ("perfcast.model.fitting.location", "LOCATIONS"),
    "gate_models": ("perfcast.model.gates", "gate_models"),
    "ModelSet": ("perfcast.model.modelset", "ModelSet"),
    "measured_ranges": ("perfcast.model.modelset", "measured_ranges"),
    "Prediction": ("perfcast.model.predict", "Prediction"),
    "make_modeler": ("perfcast.model.registry", "make_modeler"),
    "modeler_names": ("perfcast.model.registry", "modeler_names"),
    "selection_spread": ("perfcast.model.rivals", "selection_spread"),
}


def __getattr__(name: str) -> Any:
    """The names of :data:`_ON_FIRST_USE`, imported when first asked for."""
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _ON_FIRST_USE[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


#: Seconds of work before a progress bar shows.
PROGRESS_DELAY = 1.0

# The result types, named here for annotations (``perfcast.api.Diagnosis``); importing their
# modules at run time would put the analyses' dependencies into every command's start-up.
if TYPE_CHECKING:
    from distributed import Client

    from perfcast.analyze.advice import Advice as Advice
    from perfcast.analyze.advice import AdvisedRound as AdvisedRound
    from perfcast.analyze.bugs import Expectation as Expectation
    from perfcast.analyze.compare import Comparison as Comparison
    from perfcast.analyze.convolve import Convolution as Convolution
    from perfcast.analyze.diagnosis import Diagnosis as Diagnosis
    from perfcast.analyze.extrapolate import Extrapolation as Extrapolation
    from perfcast.analyze.optimize import Constraint as Constraint
    from perfcast.analyze.optimize import Optimum as Optimum
    from perfcast.io.machine_profile import MachineProfile as MachineProfile
    from perfcast.io.online_store import ModelStore as ModelStore
    from perfcast.io.run_table import RunTable as RunTable
    from perfcast.measure.campaign import CampaignResult as CampaignResult
    from perfcast.measure.spec import Campaign as Campaign
    from perfcast.model.learned import LearnedModel as LearnedModel
    from perfcast.model.learned import RunPrediction as RunPrediction
    from perfcast.model.online import OnlineModeler as OnlineModeler
    from perfcast.static.binary import Binary
    from perfcast.static.features import InstrumentedSource as InstrumentedSource
    from perfcast.static.instruction_mix import InstructionMix as InstructionMix
    from perfcast.static.report import StaticReport as StaticReport

if TYPE_CHECKING:  # Meliora (issue 18)
    from perfcast.analyze.matching import Matches as Matches
    from perfcast.analyze.tuning import TuningResult as TuningResult
    from perfcast.analyze.tuning import TuningSpace as TuningSpace
    from perfcast.static.hcfg import CodeGraph as CodeGraph


def load(
    path: str | Path,
    *,
    format: str | None = None,  # noqa: A002 - the documented keyword
    metric: str | None = None,
    kernels: str | Sequence[str] | None = None,
    exclude: str | Sequence[str] = (),
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
    kernels : str or sequence of str, optional
        Keep only the kernels matching one of these glob patterns (each must match one).
    exclude : str or sequence of str
        Leave out the kernels matching one of these glob patterns.

    Returns
    -------
    Experiment

    Raises
    ------
    InputError
        When the file is missing, of unknown format or malformed, the metric is not measured,
        a pattern of ``kernels`` matches nothing or no kernel is left.
    """
    from perfcast.io import read_experiment

    experiment = read_experiment(path, format)
    if metric is None and kernels is None and not exclude:
        return experiment
    return experiment.select(kernels=kernels, metric=metric, exclude=exclude)


def fit(
    experiment: Experiment,
    *,
    modeler: str = "pmnf",
    metric: str | Sequence[str] | None = None,
    strict: bool = False,
    progress: bool = False,
    client: Client | DaskChunks | None = None,
    **settings: Any,
) -> ModelSet:
    """Fit a scaling model to every kernel of ``experiment``.

    A kernel whose data admits no model (too few values of a parameter, non-positive parameter
    values, parameters that only vary together) is skipped and listed, with the reason, in the
    result's ``skipped``; the other kernels are modeled as if it were not there.

    Parameters
    ----------
    experiment : Experiment
        From :func:`load` or built with :meth:`Experiment.from_frame`.
    modeler : str
        A registered modeler (see :func:`modelers`): ``pmnf`` (default), ``sparse`` or
        ``hybrid`` (which needs ``report=`` from :func:`analyze_source`).
    metric : str or sequence of str, optional
        The metric(s) to model; every metric of the experiment when None.
    strict : bool
        Refuse to skip: any kernel that cannot be modeled is an error.
    progress : bool
        Show a progress bar of the kernels modeled on standard error, when it is a terminal
        and the fit runs longer than a second.
    client : distributed.Client or DaskChunks, optional
        Model on the workers of this Dask cluster (see :func:`dask_client`), 4,096 kernels of
        a series per task (a :class:`~perfcast.model.distributed.DaskChunks` says how many):
        the same models, bit for bit, as in this process. Modelers that fit a series as a
        whole (hybrid, segmented) model in this process all the same and say so in the notes.
    **settings
        The modeler's settings, e.g. ``alpha=0.01`` or ``location="median"``; each is checked
        against its allowed range.

    Returns
    -------
    ModelSet
        Models by kernel and metric, ranked by cost at the largest measured configuration,
        recording the modeler and its settings and the kernels skipped. Every model carries
        the warnings of the quality gates (:mod:`perfcast.model.gates`) in ``warnings``, and
        its prediction interval widens beyond the measurements by the error of the same
        search backtested on one value fewer of each parameter
        (:mod:`perfcast.model.backtest`) and by the spread of the forms that fit the data as
        well (:mod:`perfcast.model.rivals`).

    Raises
    ------
    ValueError
        For an unknown modeler or a setting outside its allowed range.
    InputError
        When no kernel can be modeled, or with ``strict`` when one cannot (naming the first
        such kernel and why, ``reason`` ``unmodelable-kernel``).
    WorkError
        With ``client``, when the cluster fails (a worker dies, the scheduler goes away).
    """
    from perfcast.model.fitting.assembly import require_models

    models = _fitted(experiment, modeler, metric, strict, progress, client, settings)
    require_models(models.models, models.skipped, experiment.source)
    return models


def _fitted(
    experiment: Experiment,
    modeler: str,
    metric: str | Sequence[str] | None,
    strict: bool,
    progress: bool,
    client: Client | DaskChunks | None,
    settings: Mapping[str, Any],
) -> ModelSet:
    """:func:`fit`, also when no kernel could be modeled (the model set is then empty)."""
    from perfcast.model.backtest import CHUNK_KERNELS as BACKTEST_KERNELS
    from perfcast.model.backtest import backtest
    from perfcast.model.distributed import DaskChunks
    from perfcast.model.gates import gate_models
    from perfcast.model.modelset import ModelSet, measured_ranges
    from perfcast.model.registry import make_modeler
    from perfcast.model.rivals import selection_spread

    estimator = make_modeler(modeler, **settings)
    chunks = client if client is None or isinstance(client, DaskChunks) else DaskChunks(client)
    notes: dict[str, None] = {}
    if chunks is not None and not estimator.chunkable:
        chunks = None
        notes[f"the {modeler} modeler models in this process, not on the Dask cluster"] = None
    if metric is None:
        metrics = experiment.metric_names
    else:
        metrics = [metric] if isinstance(metric, str) else list(metric)
        for name in metrics:  # every name checked before anything is fitted
            experiment.check_metric(name)
    models: list[Model] = []
    skipped: list[Skip] = []
    if progress:
        total = sum(experiment.kernel_count(name) for name in metrics)
        bar = ProgressBar(total, unit="kernels modeled", delay=PROGRESS_DELAY)
        estimator.progress = lambda done: bar.advance(steps=done)
    for name in metrics:
        if chunks is not None:  # the gates and backtests run on the workers too
            estimator.fit_finished(experiment, name, chunks, BACKTEST_KERNELS)
            if strict and estimator.skipped_:
                raise estimator.skipped_[0].error(experiment.source)
            models.extend(estimator.models_)  # with the model-selection spread too
        else:
            estimator.fit(experiment, name)
            if strict and estimator.skipped_:
                raise estimator.skipped_[0].error(experiment.source)
            # The model-selection spread before the backtests, so that only two lists of the
            # models are alive at once (200,000 models take about 180 MiB).
            gated = selection_spread(
                gate_models(estimator.models_, experiment, name), experiment, name
            )

            def refit(training: Experiment, metric: str = name) -> list[Model]:
                return make_modeler(modeler, **settings).fit(training, metric).models_

            models.extend(backtest(gated, experiment, name, refit))
        skipped.extend(estimator.skipped_)
        notes.update(dict.fromkeys(estimator.notes()))
    if progress:
        bar.close()
    return ModelSet(
        models,
        modeler=modeler,
        settings=estimator.get_params(),
        ranges=measured_ranges(experiment),
        source=experiment.source,
        notes=list(notes),
        skipped=skipped,
    )


def predict(
    models: ModelSet,
    at: Mapping[str, float] | str,
    *,
    metric: str | None = None,
    level: float = 0.95,
) -> list[Prediction]:
    """Predict every kernel at a configuration, with prediction intervals, most expensive first.

    Parameters
    ----------
    models : ModelSet
    at : mapping of str to float, or str
        A positive value for every parameter, e.g. ``{"p": 4096, "n": 1e6}`` or
        ``"p=4096,n=1e6"``.
    metric : str, optional
        Default: ``time`` when modeled, else the first metric.
    level : float
        Probability of the prediction intervals.

    Returns
    -------
    list of Prediction
    """
    point = parse_point(at, models.parameters, source="at") if isinstance(at, str) else at
    return models.predict(point, metric=metric, level=level)


def _models_of(
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

    experiment, chosen = _models_of(experiment, models, metric, modeler)
    return run_diagnosis(experiment, chosen, **_diagnosis_options(experiment, options))


def _diagnosis_options(experiment: Experiment, options: Mapping[str, Any]) -> dict[str, Any]:
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
    a, models_a = _models_of(baseline, a_models, chosen, modeler)
    b, models_b = _models_of(candidate, b_models, chosen, modeler)
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

    experiment, chosen = _models_of(experiment, models, metric, modeler)
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
    progress: bool = False,
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
    progress : bool
        Show a progress bar of the kernel plots drawn on standard error, when it is a terminal
        and the work takes more than a second.
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
    from perfcast.display.html import build_report

    experiment, chosen = _models_of(experiment, models, metric, modeler)
    if diagnosis is None:
        diagnosis = run_diagnosis(experiment, chosen, **_diagnosis_options(experiment, options))
    modeler_name = models.modeler if models is not None else modeler
    bar = ProgressBar(len(diagnosis.ranking), unit="kernel plots", delay=PROGRESS_DELAY)
    try:
        html = build_report(
            experiment,
            chosen,
            diagnosis,
            title,
            modeler_name,
            (lambda done: bar.advance(steps=done)) if progress else None,
        )
    finally:
        bar.close()
    if path is not None:
        try:
            Path(path).write_text(html, encoding="utf-8")
        except OSError as error:
            raise InputError(f"cannot write: {error.strerror}", path) from None
    if png_directory is not None:
        from perfcast.display.png import write_pngs

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
    from perfcast.io import write_experiment

    write_experiment(experiment, path, format)


def import_profiles(
    paths: Sequence[str | Path],
    *,
    profile_format: str | None = None,
    pattern: str | None = None,
    params: Mapping[str, str] | Sequence[str] | None = None,
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
    params : mapping of str to str, or sequence of str, optional
        Caliper metadata key to parameter name (``rep`` marks the repetition), as a mapping
        or as ``"KEY=NAME"`` texts (``"KEY"`` alone keeps the key's name).
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
    from perfcast.io.profile_set import parse_param_options

    if params is not None and not isinstance(params, Mapping):
        params = parse_param_options(params) or None
    return read_profiles(
        paths,
        profile_format=profile_format,
        pattern=pattern,
        params=params,
        rank_statistic=rank_statistic,
        location_statistic=location_statistic,
    )


def profile_options() -> dict[str, tuple[str, ...]]:
    """The values :func:`import_profiles` accepts for ``profile_format``, ``rank_statistic``
    and ``location_statistic``."""
    from perfcast.io.caliper import RANK_STATISTICS
    from perfcast.io.cube import LOCATION_STATISTICS
    from perfcast.io.importers import PROFILE_FORMATS

    return {
        "profile_format": tuple(sorted(PROFILE_FORMATS)),
        "rank_statistic": RANK_STATISTICS,
        "location_statistic": LOCATION_STATISTICS,
    }


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


def pending_runs(campaign: Campaign, *, retry_failed: bool = False) -> list[dict[str, Any]]:
    """The runs :func:`run_campaign` would take now, in order (point, repetition, mode and
    command line of each), without taking any."""
    from perfcast.measure.campaign import pending_runs as plan

    return plan(campaign, retry_failed)


def describe_failure(failure: Mapping[str, Any]) -> str:
    """One line about a failed run of :attr:`CampaignResult.failures`: point, repetition,
    mode, reason and the last line of its standard error."""
    from perfcast.measure.campaign import describe_failure as describe

    return describe(dict(failure))


def metric_modes() -> tuple[str, ...]:
    """The metric modes a campaign can measure in (``time``, ``instructions``, ``cache``)."""
    from perfcast.measure.spec import METRIC_MODES

    return METRIC_MODES


def campaign_executors() -> tuple[str, ...]:
    """Where a campaign's runs can execute: ``local`` or ``slurm`` (one batch job per run)."""
    from perfcast.measure.spec import EXECUTORS

    return EXECUTORS


def build_flags(kind: str, *, functions: bool = False) -> list[str]:
    """How to build a program with perfcast's region library.

    Parameters
    ----------
    kind : {"compile", "link", "fortran", "directory"}
        Compiler flags; the library source and libraries to link; the Fortran module's source;
        the directory of the library's sources.
    functions : bool
        With ``compile``: also record every function (``-finstrument-functions``).

    Raises
    ------
    ValueError
        For another ``kind``, or ``functions`` with a kind other than ``compile``.
    """
    from perfcast.measure import instrument

    if functions and kind != "compile":
        raise ValueError(f"functions: only with kind 'compile', not {kind!r}")
    if kind == "compile":
        return instrument.compile_flags(functions=functions)
    if kind == "link":
        return instrument.link_arguments()
    if kind == "fortran":
        return [str(instrument.fortran_module())]
    if kind == "directory":
        return [str(instrument.library_dir())]
    raise ValueError(f"kind: must be 'compile', 'link', 'fortran' or 'directory', not {kind!r}")


def analyze_source(
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str] = (),
    *,
    progress: bool = False,
    values: Mapping[str, float] | None = None,
    functions: Sequence[str] | None = None,
    cache: bool | str | Path = False,
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
    progress : bool
        Show a progress bar of the loops and functions counted on standard error, when it is
        a terminal and the counting takes more than a second.
    values : mapping of str to float, optional
        Parameters fixed at a value: analysed like the others, then their values are put
        into every count (:meth:`StaticReport.with_values`).
    functions : sequence of str, optional
        Analyse only these functions, lazily: the sources are parsed once, only these
        functions and their callers are walked, and the report holds these functions'
        kernels alone (with the counts the full analysis gives them). When None, the
        report holds every function of the sources and every function of an included
        header that they call (directly or through others); the other functions of headers
        (Python.h's inline functions, say) never run in the program and are left out.
    cache : bool, str or Path
        Cache of reports keyed by the content of the sources and every header they include,
        the flags, parameters, functions and the analysis code: True for the default
        directory (``$PERFCAST_CACHE_DIR``, else ``~/.cache/perfcast/static``), a path for
        another one, False (default) for none. A second run on unchanged input reads the
        report instead of analysing again.

    Returns
    -------
    StaticReport
        Pass it to :func:`fit` as ``report=`` with ``modeler="hybrid"``.

    Raises
    ------
    InputError
        When a source cannot be parsed, a parameter name occurs in none of the sources
        (reason ``unknown-parameter``, with the closest names), or a name of ``functions``
        is defined in none of them.
    """
    from perfcast.static import analyze
    from perfcast.static.cache import default_directory

    fixed = dict(values or {})
    names = list(parameters) + [name for name in fixed if name not in parameters]
    directory = None
    if cache is True:
        directory = default_directory()
    elif cache is not False:
        directory = Path(cache)
    report = _analyze_with_progress(
        analyze, sources, names, compile_args, progress, functions, directory
    )
    return report.with_values(fixed) if fixed else report


def _analyze_with_progress(
    analyze: Callable[..., StaticReport],
    sources: Sequence[str | Path],
    parameters: Sequence[str],
    compile_args: Sequence[str],
    progress: bool,
    functions: Sequence[str] | None = None,
    cache: Path | None = None,
) -> StaticReport:
    if not progress:
        return analyze(sources, parameters, compile_args, None, functions, cache)
    bars: list[ProgressBar] = []

    def advance(counted: int, total: int) -> None:
        if not bars:
            bars.append(ProgressBar(total, unit="loops and functions", delay=PROGRESS_DELAY))
        bars[0].advance()

    try:
        return analyze(sources, parameters, compile_args, advance, functions, cache)
    finally:
        if bars:
            bars[0].close()


def render(
    value: ModelSet
    | Sequence[Prediction]
    | Diagnosis
    | Comparison
    | Optimum
    | InstructionMix
    | Advice,
    format: str = "text",  # noqa: A002 - the documented keyword
    *,
    at: Mapping[str, float] | str | None = None,
    width: int | None = None,
    tree: bool = False,
) -> str:
    """A result as text for people or strict JSON (no NaN) for scripts.

    Parameters
    ----------
    value : ModelSet, list of Prediction, Diagnosis, Comparison, Optimum, InstructionMix or
        Advice
    format : str
        ``text`` or ``json``; model sets and predictions also ``markdown`` and ``csv``;
        instruction mixes also ``python`` (an importable module of the models).
    at : mapping of str to float, or str, optional
        Model sets: the point whose costs order the tables (``"p=4096"``; default: the
        largest measured values). The JSON document keeps the fitting order.
    width : int, optional
        Model sets and predictions: the width a ``text`` table fits in, model and kernel
        cells cut with an ellipsis where needed (default: as wide as its cells).
    tree : bool
        Model sets: the call tree of call-path kernels, exclusive and inclusive values apart,
        totals and shares from the exclusive ones.

    Returns
    -------
    str
        Ending in a newline.

    Raises
    ------
    ValueError
        For a format the value has no rendering in.
    InputError
        When ``at`` is malformed or misses a parameter of the models.
    """
    from perfcast.display.tables import FORMATS, format_models, format_predictions, format_tree
    from perfcast.model.modelset import ModelSet

    if isinstance(value, ModelSet | Sequence):
        if format not in FORMATS:
            raise ValueError(f"format: must be one of {', '.join(FORMATS)}, not {format!r}")
        if isinstance(value, ModelSet):
            point = parse_point(at, value.parameters, source="at") if isinstance(at, str) else at
            if tree:
                return format_tree(value, format, point, width)
            return format_models(value, format, point, width)
        return format_predictions(list(value), format, width)
    # Here, not above: the analyses need pandas, which printing models does not.
    from perfcast.analyze.advice import Advice
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.display.text import advice_text, comparison_text, diagnosis_text, optimum_text
    from perfcast.static.instruction_mix import InstructionMix

    if isinstance(value, InstructionMix):
        return _render_mix(value, format)
    if format == "json":
        return dumps(value.to_dict()) + "\n"
    if format != "text":
        raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
    if isinstance(value, Advice):
        return advice_text(value)
    if isinstance(value, Diagnosis):
        return diagnosis_text(value)
    if isinstance(value, Comparison):
        return comparison_text(value)
    return optimum_text(value)


def render_warnings(value: ModelSet | Sequence[Prediction]) -> str:
    """The warnings of a model set's models (quality gates) or of predictions (far
    extrapolation), one line each, ``kernel: message``; empty when there are none.

    The same warnings are in the JSON of :func:`render` as each model's or prediction's
    ``warnings``.
    """
    from perfcast.display.tables import format_warnings
    from perfcast.model.modelset import ModelSet

    return format_warnings(value.models if isinstance(value, ModelSet) else list(value))


def _render_mix(mix: InstructionMix, format: str) -> str:  # noqa: A002 - as render's
    from perfcast.static.mix_output import mix_to_json, mix_to_python, mix_to_text

    if format == "json":
        return dumps(mix_to_json(mix)) + "\n"
    if format == "python":
        return mix_to_python(mix)
    if format != "text":
        raise ValueError(f"format: must be 'text', 'json' or 'python', not {format!r}")
    return mix_to_text(mix)


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


def load_static_report(path: str | Path) -> StaticReport:
    """Read a static report written by ``perfcast static --format json`` (or
    ``StaticReport.to_dict``).

    Raises
    ------
    InputError
        When the file cannot be read or is not such a report.
    """
    from perfcast.static.report import read_static_report

    return read_static_report(Path(path))


def instruction_mix(
    binary: str | Path,
    report: StaticReport,
    parameters: Sequence[str] = (),
    attribution: str = "cfg",
    *,
    profiles: Sequence[tuple[Mapping[str, float], str | Path]] = (),
) -> InstructionMix:
    """Parametric instruction counts per function and category of an x86-64 ELF binary (Mira).

    Parameters
    ----------
    binary : str or Path
        The executable, built with ``-g`` from the sources ``report`` analyzed.
    report : StaticReport
        From :func:`analyze_source` or :func:`load_static_report`.
    parameters : sequence of str
        Parameter names, in the order the models take them.
    attribution : {"cfg", "line"}
        How instructions are mapped to loops: by the control-flow graph or by source line.
    profiles : sequence of (mapping of str to float, path)
        Callgrind outputs (``valgrind --tool=callgrind --dump-instr=yes``) of runs of the
        binary, each with the parameter values of its run. Where a static count stops (a loop
        bounded by data, a function called through a pointer), the measured counts of the
        machine loop's blocks stand in: constants from one run; from several runs, models over
        the parameters fitted with the ``pmnf`` modeler (counts equal in every run stay
        constants). The functions' notes say which counts were measured.

    Returns
    -------
    InstructionMix
        Render it with :func:`render` (``text``, ``json`` or ``python``).
    """
    from perfcast.static.binary import read_binary
    from perfcast.static.instruction_mix import instruction_mix as count_mix

    executable = read_binary(binary)
    measured = _measured_counts(executable, profiles) if profiles else None
    return count_mix(executable, report, parameters, attribution, measured)


def _measured_counts(
    executable: Binary, profiles: Sequence[tuple[Mapping[str, float], str | Path]]
) -> dict[tuple[str, str, int], Any]:
    """Measured block and entry counts of the profiled runs, as sympy constants or models."""
    import sympy

    from perfcast.core.experiment import Experiment
    from perfcast.static.callgrind import measured_loop_counts, read_callgrind

    runs = [
        (dict(point), measured_loop_counts(executable, read_callgrind(path)))
        for point, path in profiles
    ]
    keys = sorted(set().union(*(counts for _, counts in runs)))
    series = {key: [counts.get(key, 0) for _, counts in runs] for key in keys}
    result: dict[tuple[str, str, int], Any] = {
        key: sympy.Integer(values[0]) for key, values in series.items() if len(set(values)) == 1
    }
    varying = [key for key in keys if key not in result]
    names = list(dict.fromkeys(name for point, _ in runs for name in point))
    if not varying:
        return result
    if not names:
        raise InputError(
            "the profiled runs give different counts but no parameter values to model them over",
            reason="bad-point",
        )
    kernel_of = {f"{kind}:{function}:{address:#x}": (kind, function, address)
                 for kind, function, address in varying}  # fmt: skip
    kernels: list[str] = []
    coordinates: dict[str, list[float]] = {name: [] for name in names}
    values: list[float] = []
    for index, (point, _) in enumerate(runs):
        missing = [name for name in names if name not in point]
        if missing:
            raise InputError(
                f"profiled run {index + 1} gives no value for {', '.join(missing)}",
                reason="bad-point",
            )
        for kernel, key in kernel_of.items():
            kernels.append(kernel)
            for name in names:
                coordinates[name].append(point[name])
            values.append(float(series[key][index]))
    experiment = Experiment.from_columns(
        kernels, ["count"] * len(kernels), coordinates, values, source="profiles"
    )
    try:
        models = fit(experiment, modeler="pmnf").models
    except (InputError, WorkError) as error:
        raise InputError(
            f"the {len(runs)} profiled runs admit no model of the measured loop counts over "
            f"{', '.join(names)} ({error}): profile more runs",
            reason="bad-point",
        ) from error
    for model in models:
        result[kernel_of[model.kernel]] = model.to_sympy()
    return result


def inclusive_metric(exclusive: str, metrics: Sequence[str]) -> str | None:
    """The inclusive counterpart of a metric among ``metrics`` (``time`` ->
    ``time_inclusive``), which :func:`render` with ``tree=True`` shows beside the exclusive
    values; None when there is none."""
    from perfcast.display.tables import inclusive_metric as counterpart

    return counterpart(exclusive, metrics)


def advise(
    experiment: Experiment,
    models: ModelSet | None = None,
    *,
    at: Mapping[str, float] | str,
    candidates: Mapping[str, Sequence[float]] | str | None = None,
    budget: str | float | None = None,
    repetitions: int | None = None,
    goal: float | None = None,
    level: float = 0.95,
    metric: str | None = None,
    modeler: str = "pmnf",
) -> Advice:
    """The configurations to measure next so that the prediction at ``at`` narrows most per
    unit of measurement cost (see :mod:`perfcast.analyze.advice`).

    Parameters
    ----------
    experiment : Experiment
    models : ModelSet, optional
        Fitted with ``modeler`` when None.
    at : mapping of str to float, or str
        The target configuration (``"p=4096,n=1e6"``).
    candidates : mapping of str to sequence of float, or str, optional
        Values to combine per parameter (``"p=2..4096*2,n=1e6,2e6"``); a parameter left out
        gets its measured values and doublings up to the target.
    budget : str or float, optional
        Runs (``20``, ``"20runs"``) or core-hours (``"1.5h"``, ``"1.5core-hours"``); default
        five points.
    repetitions : int, optional
        Runs per point; default the most common number measured.
    goal : float, optional
        Stop once the interval at the target is within this relative half-width (0.1: ±10 %).
    level : float
        Probability of the intervals.
    metric : str, optional
        Default: the experiment's only metric, or ``time``.
    modeler : str
        Used when ``models`` is None.

    Returns
    -------
    Advice
        Suggestions in order, each with its cost, the interval width expected after it and
        why; ``warnings`` say what limits the advice.

    Raises
    ------
    InputError
        For a malformed target, candidate list or budget, or a budget in core-hours for models
        that predict no time.
    ValueError
        For ``repetitions`` below 1, a ``goal`` that is not positive or a ``level`` outside
        (0, 1).
    """
    from perfcast.analyze.advice import advise as suggest
    from perfcast.analyze.advice import parse_budget, parse_candidates

    if repetitions is not None and (isinstance(repetitions, bool) or repetitions < 1):
        raise ValueError(f"repetitions: must be a whole number >= 1, not {repetitions!r}")
    if goal is not None and not goal > 0:
        raise ValueError(f"goal: must be a positive relative width, not {goal!r}")
    if not 0 < level < 1:
        raise ValueError(f"level: must lie in (0, 1), not {level!r}")
    experiment, chosen = _models_of(experiment, models, metric, modeler)
    names = experiment.parameter_names
    target = parse_point(at, names, source="at") if isinstance(at, str) else dict(at)
    missing = [n for n in names if n not in target]
    if missing:
        raise InputError(f"the target misses parameter(s) {', '.join(missing)}", source="at")
    values = parse_candidates(candidates, names) if isinstance(candidates, str) else candidates
    amount = None if budget is None else parse_budget(str(budget))
    return suggest(experiment, chosen, target, values, amount, repetitions, level=level, goal=goal)


#: Most measure-model-advise rounds of :func:`run_advised`.
ADVISED_ROUNDS = 50


def run_advised(
    campaign: Campaign,
    *,
    at: Mapping[str, float] | str,
    budget: str | float,
    goal: float | None = None,
    candidates: Mapping[str, Sequence[float]] | str | None = None,
    metric: str | None = None,
    modeler: str = "pmnf",
    rounds: int = ADVISED_ROUNDS,
) -> tuple[CampaignResult, list[AdvisedRound], Advice, str]:
    """Run a campaign, then measure one advised point at a time until the prediction at ``at``
    is as narrow as ``goal`` or ``budget`` is spent.

    Every round fits the models to everything measured so far, asks :func:`advise` with the
    budget left, and runs the campaign's command at the first suggested point (the campaign's
    repetitions; the same results journal, so an interrupted loop resumes with what it
    measured).

    Parameters
    ----------
    campaign : Campaign
        From :func:`load_campaign`; its own points are measured first.
    at : mapping of str to float, or str
        The target configuration.
    budget : str or float
        Runs (``20``) or core-hours (``"1.5h"``) the advised points may take, as :func:`advise`
        reads it; core-hours count as the models predict them.
    goal : float, optional
        Stop once the relative half-width of the interval at the target is at most this.
    candidates, metric, modeler
        As for :func:`advise`.
    rounds : int
        Most rounds.

    Returns
    -------
    result : CampaignResult
        Of the campaign and every advised round together: its experiment holds the
        campaign's points and every advised one (also written to the campaign's output), its
        counts and failures are those of all rounds.
    history : list of AdvisedRound
    advice : Advice
        The last advice, at what was measured in the end.
    stop : str
        A key of :data:`perfcast.analyze.advice.STOP_REASONS`.
    """
    import dataclasses

    from perfcast.analyze.advice import RUNS, AdvisedRound, parse_budget
    from perfcast.core.points import plain_value
    from perfcast.io import write_experiment

    total = parse_budget(str(budget))
    result = run_campaign(campaign)
    measured = result.experiment
    executed, skipped, failures = result.executed, result.skipped, list(result.failures)
    history: list[AdvisedRound] = []
    spent = 0.0
    stop = None
    while stop is None:
        left = total.amount - spent
        advice = advise(
            measured,
            at=at,
            candidates=candidates,
            budget=f"{left!r}{'runs' if total.unit == RUNS else 'h'}" if left > 0 else None,
            repetitions=campaign.repetitions,
            goal=goal,
            metric=metric,
            modeler=modeler,
        )
        taken = {tuple(row) for row in measured.points().tolist()}
        names = measured.parameter_names
        fresh = [s for s in advice.suggestions if tuple(s.point[n] for n in names) not in taken]
        if goal is not None and advice.width_before <= goal:
            stop = "goal"
        elif left <= 0:
            stop = "budget"
        elif len(history) >= rounds:
            stop = "rounds"
        elif not fresh:
            stop = "no-advice"
        else:
            chosen = fresh[0]
            values: dict[str, list[int | float | str]] = {
                name: [plain_value(v)] for name, v in chosen.point.items()
            }
            result = run_campaign(dataclasses.replace(campaign, parameters=values))
            executed, skipped = executed + result.executed, skipped + result.skipped
            failures += result.failures
            measured = _joined(measured, result.experiment)
            spent += chosen.runs if total.unit == RUNS else chosen.core_hours or 0.0
            history.append(
                AdvisedRound(
                    dict(chosen.point), chosen.runs, chosen.core_hours, advice.width_before
                )
            )
    if history:
        write_experiment(measured, campaign.output)
    total_result = dataclasses.replace(
        result, experiment=measured, executed=executed, skipped=skipped, failures=failures
    )
    return total_result, history, advice, stop


def _joined(first: Experiment, second: Experiment) -> Experiment:
    """The measurements of both experiments (``second`` at points ``first`` lacks)."""
    import pandas as pd

    from perfcast.core.experiment import Experiment

    names = list(first.parameter_names)
    taken = set(map(tuple, first.points().tolist()))
    frame = second.frame
    new = [tuple(row) not in taken for row in frame[names].to_numpy().tolist()]
    return Experiment.from_frame(
        pd.concat([first.frame, frame[new]], ignore_index=True),
        parameters=first.parameters,
        metrics=first.metrics,
        metadata=first.metadata,
        source=first.source,
    )


def advice_stop_reasons() -> dict[str, str]:
    """Why :func:`run_advised` stops, by the key it returns, in words."""
    from perfcast.analyze.advice import STOP_REASONS

    return dict(STOP_REASONS)


def modelers(*, standalone: bool = False) -> tuple[str, ...]:
    """Names of the registered modelers (see :mod:`perfcast.model.registry`); ``standalone``
    leaves out those that need a static analysis (``hybrid``)."""
    from perfcast.model.registry import modeler_names

    return modeler_names(standalone=standalone)


def formats() -> dict[str, dict[str, bool]]:
    """Every data format by name, with whether perfcast can read and write it."""
    from perfcast.io import formats as format_modules

    return {
        name: {"read": hasattr(module, "read"), "write": hasattr(module, "write")}
        for name, module in format_modules().items()
    }


def output_format(path: str | Path) -> str:
    """The format :func:`save` writes to ``path`` (from its suffix).

    Raises
    ------
    InputError
        When no writer takes the file name.
    """
    from perfcast.io import output_format_for

    return output_format_for(path)


# ---------------------------------------------------------------------- learned run-time models
# (issue 17: run tables, perfcast learn, perfcast predict --runs)


def load_run_table(path: str | Path) -> RunTable:
    """Read a run table: one row per run, one column per feature or target (CSV or Parquet).

    Raises
    ------
    InputError
        Naming file and line for a missing file, a bad cell, a column mixing numbers and words.
    """
    from perfcast.io.run_table import read_run_table

    return read_run_table(path)


def parse_reductions(text: str, source: str = "reductions") -> dict[str, float]:
    """``time=0.05,importance=0.95`` as ``{"reduce_time": 0.05, "reduce_importance": 0.95}``.

    Raises
    ------
    InputError
        With reason ``"bad-reduction"`` for another key or a value outside (0, 1].
    """
    from perfcast.core.numbers import parse_number

    settings: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        key, _, value = part.partition("=")
        key = key.strip()
        if key not in ("time", "importance") or not value:
            raise InputError(
                f"reduction {part!r}: expected time=SHARE or importance=SHARE",
                source,
                reason="bad-reduction",
                value=part,
            )
        share = parse_number(value, f"reduction {key}", source, None)
        if not 0.0 < share <= 1.0:
            raise InputError(
                f"reduction {key}={value}: a share in (0, 1] expected",
                source,
                reason="bad-reduction",
                value=part,
            )
        settings[f"reduce_{key}"] = share
    return settings


def learn(
    table: RunTable | str | Path,
    target: str = "time",
    *,
    method: str = "extra-trees",
    exclude: Sequence[str] = (),
    features: Sequence[str] | None = None,
    transfer_from: RunTable | LearnedModel | str | Path | None = None,
    **settings: Any,
) -> LearnedModel:
    """Learn a run's ``target`` (time, instructions, ...) from the other columns of a run table.

    Parameters
    ----------
    table : RunTable, str or Path
        The runs (a path is read with :func:`load_run_table`).
    target : str
        The column to predict.
    method : {"extra-trees", "forest", "poly-lasso", "pmnf", "nn-linear"}
        Extremely randomized trees (default), random forest, Lasso over a polynomial of the
        features, or a PMNF hypothesis over the most important numeric features.
    exclude : sequence of str
        Columns that are no features (other targets measured in the same runs).
    features : sequence of str, optional
        Only these columns are features.
    transfer_from : RunTable, LearnedModel, str or Path, optional
        Runs (or a learned model file, which keeps its runs) of the same program on another
        platform; ``table`` holds the few runs of the new platform.
    **settings
        :class:`~perfcast.model.learned.LearnedModel` settings: ``trees``, ``log_target``,
        ``linear_base``, ``reduce_time``, ``reduce_importance`` (see
        :func:`parse_reductions`), ``folds``, ``seed``, ``transfer`` (``"map"`` or
        ``"tradaboost"`` or ``"map+tradaboost"``: how ``transfer_from`` is used).

    Returns
    -------
    LearnedModel
        With its cross-validated error, importances, reductions and warnings.

    Raises
    ------
    InputError
        For a bad table, a missing target or feature, a source of other features.
    ValueError
        For a setting outside its range.
    """
    from perfcast.model.learned import LearnedModel

    runs = table if not isinstance(table, str | Path) else load_run_table(table)
    source: RunTable | LearnedModel | None
    if isinstance(transfer_from, str | Path):
        path = Path(transfer_from)
        source = load_learned(path) if path.suffix == ".json" else load_run_table(path)
    else:
        source = transfer_from
    model = LearnedModel(method, **settings)
    return model.fit(runs, target, exclude=exclude, features=features, source=source)


def save_learned(model: LearnedModel, path: str | Path) -> None:
    """Write a learned model file (JSON, format ``perfcast-learned-model``).

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    try:
        Path(path).write_text(dumps(model.to_json()) + "\n", encoding="utf-8")
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", path) from None


def load_learned(path: str | Path) -> LearnedModel:
    """Read a learned model file written by :func:`save_learned`.

    The estimator inside is a pickle: load only files you trust.

    Raises
    ------
    InputError
        Naming the file when it is missing, not a learned model, damaged, or written by an
        incompatible perfcast or scikit-learn version (reason ``"incompatible-model"``).
    """
    import json

    from perfcast.core.jsonin import parse_json
    from perfcast.model.learned import LearnedModel

    try:
        data = parse_json(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("no such file", path, reason="missing-file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"not a learned model file ({error})", path, reason="bad-model") from None
    return LearnedModel.from_json(data, path)


def predict_runs(
    model: LearnedModel, table: RunTable | str | Path, *, level: float = 0.95
) -> list[RunPrediction]:
    """Predict the target of every run of ``table`` (extra columns are ignored).

    Raises
    ------
    InputError
        When a feature column the model uses is missing (named) or of the wrong kind.
    """
    runs = table if not isinstance(table, str | Path) else load_run_table(table)
    return model.predict(runs, level=level)


def render_learned(
    value: LearnedModel | Sequence[RunPrediction],
    format: str = "text",  # noqa: A002 - as render's
    *,
    model_warnings: Sequence[str] = (),
) -> str:
    """A learned model (``text`` summary or its ``json`` file) or run predictions (``text``,
    ``json``, ``csv``); with predictions, ``model_warnings`` (the model's ``warnings_``, such
    as an untrustworthy cross-validated error) are shown in text and JSON.

    Raises
    ------
    ValueError
        For a format the value has no rendering in.
    """
    from perfcast.display.learned import format_run_predictions, learned_summary
    from perfcast.model.learned import LearnedModel

    if isinstance(value, LearnedModel):
        if format == "json":
            return dumps(value.to_json()) + "\n"
        if format != "text":
            raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
        return learned_summary(value)
    return format_run_predictions(value, format, model_warnings)


def run_prediction_warnings(predictions: Sequence[RunPrediction]) -> str:
    """``row N: warning`` lines of the run predictions that carry warnings (empty if none)."""
    from perfcast.display.learned import format_prediction_warnings

    return format_prediction_warnings(predictions)


def learning_methods() -> tuple[str, ...]:
    """The methods :func:`learn` takes."""
    from perfcast.model.learned import METHODS

    return METHODS


def transfer_methods() -> tuple[str, ...]:
    """The ways :func:`learn` transfers from ``transfer_from`` (its ``transfer`` setting)."""
    from perfcast.model.learned import TRANSFERS

    return TRANSFERS


def instrument_features(
    sources: Sequence[str | Path],
    output: str | Path,
    compile_args: Sequence[str] = (),
    *,
    parameters: Sequence[str] = (),
) -> list[InstrumentedSource]:
    """Rewrite C sources so that each run records its run-time features (libclang).

    Assignments to scalar variables outside loops, branch outcomes, loop trips and MPI calls
    and bytes become features named ``file:line:kind:name``; the copies in ``output`` build
    with the original command (the runtime header is copied beside them) and append one JSON
    line per run to ``$PERFCAST_FEATURES_FILE`` (read it with :func:`load_feature_records`).

    Parameters
    ----------
    sources : sequence of str or Path
    output : str or Path
        Directory for the instrumented copies, ``perfcast_features.h`` and ``features.json``.
    compile_args : sequence of str
        ``-I``/``-D`` flags the sources need to parse.
    parameters : sequence of str
        Variables holding the program's inputs: their first assignment is named by the
        variable alone.

    Returns
    -------
    list of InstrumentedSource
        Per source: its features and the sites left alone (spelled by macros).

    Raises
    ------
    InputError
        When a source is missing or does not parse.
    """
    from perfcast.static.features import instrument_features as instrument

    return instrument(sources, output, compile_args, parameters)


def load_feature_records(path: str | Path, *, phase: str = "exit") -> RunTable:
    """The run table of an instrumented program's feature records: one row per run, its
    ``time`` the run's elapsed seconds; ``phase="features_end"`` takes the features recorded
    when the early phase ended (``#pragma perfcast features_end``).

    Raises
    ------
    InputError
        Naming file and line of a malformed record.
    """
    from perfcast.io.run_table import read_feature_records

    return read_feature_records(path, phase)


def save_run_table(table: RunTable, path: str | Path) -> None:
    """Write a run table as CSV (or Parquet, by the suffix ``.parquet``).

    Raises
    ------
    InputError
        When the file cannot be written.
    """
    from perfcast.io.run_table import write_run_table

    write_run_table(table, path)


# -- Online modeling (issue 15): replay a stream, serve a spool, read a model store ------------


def open_store(url: str | Path, *, create: bool = True) -> ModelStore:
    """Open (creating or migrating as needed) a model store of online modeling.

    Parameters
    ----------
    url : str or Path
        A SQLite file (``runs.db`` or ``sqlite:///runs.db``) or a ``postgresql://`` URL.
    create : bool
        Create a missing SQLite file (else an :class:`InputError`).

    Returns
    -------
    ModelStore
        Close it with ``close()`` or use it in a ``with`` block.
    """
    from perfcast.io.online_store import ModelStore

    return ModelStore(url, create=create)


def online_modeler(
    *,
    modeler: str = "pmnf",
    batch: int = 512,
    store: ModelStore | None = None,
    application: str = "default",
    **settings: Any,
) -> OnlineModeler:
    """An online modeler, resumed from ``store``'s state of ``application`` when given.

    Parameters
    ----------
    modeler : str
        The registered modeler refitted on every batch.
    batch : int
        Measurements per kernel between model updates.
    store : ModelStore, optional
        Where earlier runs left models, statistics and back-off state.
    application : str
        The application's name in the store.
    **settings
        Settings of :class:`perfcast.model.online.OnlineModeler` (``backoff``, ``clusters``,
        ``seed``, ``exception_level``, ...) and of the modeler.
    """
    from perfcast.model.online import OnlineModeler, state_of

    online = OnlineModeler(modeler, batch, **settings)
    if store is not None:
        for item in store.read(application, history=0):
            online.resume(state_of(item, store.url))
    return online


def replay_stream(
    stream: str | Path,
    *,
    modeler: str = "pmnf",
    batch: int = 512,
    store: str | Path | None = None,
    application: str = "default",
    **settings: Any,
) -> list[dict[str, Any]]:
    """Feed a recorded measurement stream through the online modeler.

    The whole stream is read and checked first, so a malformed line changes nothing in the
    store. With a store, the modeler starts from its state and every completed batch is
    written at once (one transaction), so that an interrupted replay loses at most its
    unfinished batches.

    Parameters
    ----------
    stream : str or Path
        JSON Lines in arrival order (:mod:`perfcast.io.online_stream`).
    modeler, batch, application, **settings
        As :func:`online_modeler`.
    store : str or Path, optional
        A model store URL (see :func:`open_store`).

    Returns
    -------
    list of dict
        A summary per kernel of the stream (see :func:`render_online`); exception indices are
        the 0-based line numbers of the stream.

    Raises
    ------
    InputError
        For a malformed line (file and line named) or a bad store.
    """
    from perfcast.io.online_stream import read_stream
    from perfcast.model.online import Measurement

    records = list(read_stream(stream))
    opened = open_store(store) if store is not None else None
    try:
        online = online_modeler(
            modeler=modeler,
            batch=batch,
            store=opened,
            application=application,
            source=str(stream),
            **settings,
        )
        measurements = [
            Measurement(r.kernel, r.metric, r.params, r.value, r.index, r.skipped)
            if r.value is not None
            else r
            for r in records
        ]
        online.check(m for m in measurements if isinstance(m, Measurement))
        for measurement in measurements:
            done = online.batches_done
            if isinstance(measurement, Measurement):
                online.partial_fit([measurement])
            else:
                online.add_skipped(measurement.kernel, measurement.metric, measurement.skipped)
            if opened is not None and online.batches_done != done:
                opened.write(application, online.drain())
        online.finish()
        if opened is not None:
            opened.write(application, online.drain())
    finally:
        if opened is not None:
            opened.close()
    return online.summaries(touched_only=True)


def serve_spool(
    spool: str | Path,
    store: str | Path,
    *,
    application: str = "default",
    modeler: str = "pmnf",
    batch: int = 512,
    once: bool = False,
    poll: float = 0.2,
    should_stop: Callable[[], bool] | None = None,
    on_rejected: Callable[[str], None] | None = None,
    **settings: Any,
) -> int:
    """Collect the batches instrumented programs hand over through a spool directory.

    Each batch file (:mod:`perfcast.measure.online_spool`) is modeled with the program's
    back-off decisions taken as made, written to the store in one transaction and then deleted;
    the kernels' control files then tell the programs how many measurements to skip. A file
    that is not a valid stream is renamed ``*.rejected`` and reported through ``on_rejected``
    (the collector goes on). Partly filled batches are judged and stored when serving ends.

    Parameters
    ----------
    spool : str or Path
        The directory the programs write into (``PERFCAST_ONLINE_SPOOL``).
    store : str or Path
        The model store URL (see :func:`open_store`).
    application, modeler, batch, **settings
        As :func:`online_modeler`; ``batch`` should equal the programs' batch size.
    once : bool
        Process the files present and return, instead of waiting for more.
    poll : float
        Seconds between looks at the spool while waiting.
    should_stop : callable, optional
        Asked between files; serving ends when it returns True.
    on_rejected : callable, optional
        Called with a message for each rejected file.

    Returns
    -------
    int
        The number of batch files modeled.

    Raises
    ------
    InputError
        When ``spool`` exists but is no directory (reason ``bad-spool``), or for a bad store.
    """
    import time

    from perfcast.io.online_stream import read_stream
    from perfcast.measure.online_spool import pending_batches, write_control
    from perfcast.model.online import Measurement

    processed = 0
    if Path(spool).exists() and not Path(spool).is_dir():
        # a missing spool is waited for (the programs create it); a file never becomes one
        raise InputError("the spool is not a directory", spool, reason="bad-spool")
    with open_store(store) as opened:
        online = online_modeler(
            modeler=modeler, batch=batch, store=opened, application=application, **settings
        )
        while not (should_stop is not None and should_stop()):
            files = pending_batches(spool)
            for path in files:
                try:
                    records = list(read_stream(path))
                    measurements = [
                        Measurement(r.kernel, r.metric, r.params, r.value, r.index, r.skipped)
                        for r in records
                        if r.value is not None
                    ]
                    online.check(measurements)
                except InputError as error:
                    path.rename(path.with_suffix(".rejected"))
                    if on_rejected is not None:
                        on_rejected(str(error))
                    continue
                online.partial_fit(measurements, taken=True)
                for record in records:
                    if record.value is None:
                        online.add_skipped(record.kernel, record.metric, record.skipped)
                opened.write(application, online.drain())
                for key in {(m.kernel, m.metric) for m in measurements}:
                    state = online.states_[key]
                    write_control(spool, key[0], key[1], state.batches, state.skip_left)
                path.unlink()
                processed += 1
                if should_stop is not None and should_stop():
                    break
            if once:
                break
            if not files:
                time.sleep(poll)
        online.finish()
        opened.write(application, online.drain())
    return processed


def read_clusters(path: str | Path) -> list[list[str]]:
    """Similarity clusters for online modeling from a file: the JSON of ``perfcast static
    --format json`` (its ``clusters``) or a JSON list of lists of kernel names.

    Raises
    ------
    InputError
        When the file cannot be read, holds neither form, or names a kernel in two clusters
        (reason ``bad-clusters``).
    """
    from perfcast.core.jsonin import parse_json

    try:
        data = parse_json(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as error:
        raise InputError(
            f"cannot read the clusters ({error})", path, reason="bad-clusters"
        ) from None
    clusters = data.get("clusters") if isinstance(data, dict) else data
    valid = isinstance(clusters, list) and all(
        isinstance(c, list) and c and all(isinstance(k, str) for k in c) for c in clusters
    )
    if not valid:
        raise InputError(
            "expected a static report with 'clusters' or a list of lists of kernel names",
            path,
            reason="bad-clusters",
        )
    assert isinstance(clusters, list)  # checked above
    seen: dict[str, int] = {}
    for number, cluster in enumerate(clusters, start=1):
        for kernel in cluster:
            if seen.setdefault(kernel, number) != number:
                raise InputError(
                    f"kernel {kernel!r} is in cluster {seen[kernel]} and cluster {number}: "
                    "a kernel belongs to one cluster",
                    path,
                    reason="bad-clusters",
                    value=kernel,
                )
    return [list(c) for c in clusters]


def stored_models(store: str | Path, *, application: str = "default") -> list[dict[str, Any]]:
    """The kernels of ``application`` in a model store, summarized as :func:`replay_stream`
    does (the latest 10,000 judgements and exceptions of each kernel; an exception's index is
    its line in the stream or spool file it came from).

    Raises
    ------
    InputError
        For a bad store or an application the store does not hold.
    """
    from perfcast.model.online import OnlineModeler, state_of

    with open_store(store, create=False) as opened:
        items = opened.read(application, history=10000)
        if not items:
            known = ", ".join(opened.applications()) or "none"
            raise InputError(
                f"the store holds no application '{application}' (it holds: {known})",
                str(store),
                reason="unknown-application",
                value=application,
            )
        online = OnlineModeler()
        for item in items:
            online.resume(state_of(item, str(store)))
    return online.summaries()


def render_online(summaries: Sequence[Mapping[str, Any]], format: str = "text") -> str:  # noqa: A002
    """Text or JSON (``{"kernels": [...]}``) of :func:`replay_stream`'s or
    :func:`stored_models`' summaries."""
    from perfcast.display.online import render_online as render_summaries

    return render_summaries([dict(s) for s in summaries], format)


# --- Trace extrapolation (PMaC): signatures, extrapolation, machine profiles, convolution ---


def collect_signature(
    command: Sequence[str],
    *,
    ranks: int = 1,
    point: Mapping[str, float] | None = None,
    machine: MachineProfile | None = None,
    cache: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> Experiment:
    """Run a program under valgrind and return its application signature.

    The signature is an ordinary experiment at one point (``p`` = ``ranks`` by default):
    kernels are basic blocks (``bb:f+0x40``), source lines (``line:cg.c:42``) and functions
    (``fn:f``) of the program's own code; metrics are their features (instructions, loads,
    stores, bytes, floating-point operations by kind, branches and their mispredictions,
    simulated L1 and last-level misses and cumulative hit rates;
    see :mod:`perfcast.static.signature`). Under MPI it is the rank with the most instructions,
    with ``instructions.rank_spread`` per element.

    Parameters
    ----------
    command : sequence of str
        An executable built with ``-g`` and its arguments.
    ranks : int
        MPI processes (run under ``mpirun`` when above 1).
    point : mapping of str to float, optional
        The parameter values to record the signature at.
    machine : MachineProfile, optional
        Target machine whose cache geometry (``D1``, ``LL``) the simulation uses.
    cache : mapping, optional
        ``size,associativity,line`` per ``I1``/``D1``/``LL``, over the machine's.
    timeout : float, optional
        Seconds before the run is stopped.

    Raises
    ------
    InputError
        For a missing program or one without line information.
    WorkError
        When the run fails.
    """
    chosen, _every_rank = collect_rank_signatures(
        command, ranks=ranks, point=point, machine=machine, cache=cache, timeout=timeout
    )
    return chosen


def collect_rank_signatures(
    command: Sequence[str],
    *,
    ranks: int = 1,
    point: Mapping[str, float] | None = None,
    machine: MachineProfile | None = None,
    cache: Mapping[str, str] | None = None,
    timeout: float | None = None,
) -> tuple[Experiment, list[Experiment]]:
    """As :func:`collect_signature`, and every rank's own signature beside the chosen one.

    Returns
    -------
    (Experiment, list of Experiment)
        The busiest rank's signature and every rank's, in rank order (metadata
        ``signature.rank``; with another MPI than Open MPI, in process-id order, and
        ``signature.ranks_known`` is false).
    """
    from perfcast.measure.signature import collect_signature as collect

    geometry = {**(machine.cache_geometry() if machine else {}), **(cache or {})}
    chosen, run = collect(command, ranks=ranks, point=point, cache=geometry, timeout=timeout)
    return chosen, run.rank_signatures


def extrapolate_signature(
    signature: Experiment, target: Mapping[str, float] | str, *, forms: str = "pmac"
) -> Extrapolation:
    """Extrapolate signatures at three or more core counts to a larger one, element by element.

    Parameters
    ----------
    signature : Experiment
        Signatures at several values of one parameter (merged into one experiment).
    target : mapping or str
        ``{"p": 8192}`` or ``"p=8192"``.
    forms : {"pmac", "pmnf", "both"}
        Canonical forms (constant, linear, logarithmic, exponential, inverse, power), perfcast's
        PMNF search, or the better of both per element (:mod:`perfcast.analyze.extrapolate`).

    Returns
    -------
    Extrapolation
        ``signature`` (the experiment at the target), ``elements`` (form, formula, fit and
        validation error per element), ``skipped`` and ``warnings``.
    """
    from perfcast.analyze.extrapolate import extrapolate

    if isinstance(target, str):
        target = parse_point(target, signature.parameter_names, source="target")
    return extrapolate(signature, target, forms)


def probe_machine(
    *, quick: bool = False, largest_working_set: int | None = None, name: str | None = None
) -> MachineProfile:
    """Measure this machine with perfcast's C probes (compiled at run time).

    Returns a machine profile: a bandwidth surface over working-set size, access pattern and
    loads/stores; level bandwidths; floating-point rates per kind; the cache geometry.
    ``quick`` takes well under a minute.

    Raises
    ------
    WorkError
        Without a C compiler, or when a probe fails.
    """
    from perfcast.measure.probe import probe_machine as probe

    return probe(quick=quick, largest_working_set=largest_working_set, name=name)


def load_machine(path: str | Path) -> MachineProfile:
    """Read a ``perfcast-machine`` JSON file (:mod:`perfcast.io.machine_profile`).

    Raises
    ------
    InputError
        Naming the file and the missing or malformed field.
    """
    from perfcast.io.machine_profile import read_machine

    return read_machine(path)


def save_machine(profile: MachineProfile, path: str | Path) -> None:
    """Write a machine profile as ``perfcast-machine`` JSON."""
    from perfcast.io.machine_profile import write_machine

    write_machine(profile, path)


def convolve(signature: Experiment, machine: MachineProfile) -> Convolution:
    """Predicted computation time of a signature (one point) on a machine.

    Each block's floating-point time (operations over the machine's rates), memory time (bytes
    at the bandwidth of the cache levels its cumulative hit rates say serve them, streams at
    the stream bandwidths) and instruction time overlap as the machine's ``overlap`` says, and
    its branch mispredictions add their penalty; summed per function and in total
    (:mod:`perfcast.analyze.convolve`).

    Raises
    ------
    InputError
        When the signature has several points or lacks features, or the machine lacks a rate
        the signature needs (naming file and field).
    """
    from perfcast.analyze.convolve import convolve as convolve_blocks

    return convolve_blocks(signature, machine)


def render_pmac(
    value: Convolution | Extrapolation | MachineProfile,
    format: str = "text",  # noqa: A002 - as render's
) -> str:
    """A convolution, extrapolation or machine profile as text or strict JSON."""
    from perfcast.analyze.convolve import Convolution
    from perfcast.display.pmac import convolution_text, extrapolation_text, machine_text
    from perfcast.io.machine_profile import MachineProfile

    if format not in ("text", "json"):
        raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
    if isinstance(value, MachineProfile):
        return value.to_json() if format == "json" else machine_text(value)
    if format == "json":
        return dumps(value.to_dict()) + "\n"
    if isinstance(value, Convolution):
        return convolution_text(value)
    return extrapolation_text(value)


def merge_signatures(signatures: Sequence[Experiment]) -> Experiment:
    """One experiment holding signatures taken at different points (for extrapolation).

    Raises
    ------
    InputError
        When the signatures have different parameters or two hold the same point.
    """
    import pandas as pd

    from perfcast.core.experiment import Experiment

    if not signatures:
        raise InputError("no signature to merge")
    first = signatures[0]
    for other in signatures[1:]:
        if other.parameter_names != first.parameter_names:
            raise InputError(
                f"signatures with different parameters: {first.parameter_names} and "
                f"{other.parameter_names}",
                other.source,
                reason="signature-parameters",
            )
    frame = pd.concat([s.frame for s in signatures], ignore_index=True)
    metrics = {name: m for s in signatures for name, m in s.metrics.items()}
    sources = ", ".join(str(s.source) for s in signatures)
    return Experiment.from_frame(
        frame,
        parameters=first.parameters,
        metrics=metrics,
        metadata=dict(first.metadata),
        source=sources if len(signatures) > 1 else first.source,
    )


def json_text(value: Any) -> str:
    """Strict JSON text of ``value`` (NaN and infinities as null), indented, as every JSON
    output of perfcast is written.

    Parameters
    ----------
    value : Any
        Dictionaries, lists, strings, numbers (numpy ones too), booleans and None.

    Returns
    -------
    str
    """
    return dumps(value)


__all__ = [
    "json_text",
    "LOCATIONS",
    "TABLE_FORMATS",
    "Experiment",
    "InputError",
    "ModelSet",
    "WorkError",
    "advice_stop_reasons",
    "advise",
    "analyze_source",
    "build_flags",
    "collect_rank_signatures",
    "collect_signature",
    "convolve",
    "extrapolate_signature",
    "load_machine",
    "merge_signatures",
    "probe_machine",
    "render_pmac",
    "save_machine",
    "campaign_executors",
    "compare",
    "dask_client",
    "describe_failure",
    "diagnose",
    "fit",
    "formats",
    "import_profiles",
    "inclusive_metric",
    "instruction_mix",
    "load",
    "load_campaign",
    "load_static_report",
    "metric_modes",
    "modelers",
    "optimize",
    "output_format",
    "parse_expectation",
    "parse_point",
    "pending_runs",
    "predict",
    "profile_options",
    "render",
    "render_warnings",
    "report",
    "run_campaign",
    "save",
    # learned run-time models
    "learn",
    "learning_methods",
    "transfer_methods",
    "load_learned",
    "load_run_table",
    "parse_reductions",
    "predict_runs",
    "render_learned",
    "run_prediction_warnings",
    "save_learned",
    "instrument_features",
    "load_feature_records",
    "save_run_table",
    # online modeling
    "online_modeler",
    "open_store",
    "read_clusters",
    "render_online",
    "replay_stream",
    "serve_spool",
    "stored_models",
]


# ---- Code graphs, kernel matching and tuning (Meliora, issue 18) -----------------------------


def code_graphs(
    source: str | Path,
    *,
    function: str | None = None,
    loop: int | None = None,
    flags: Sequence[str] = (),
    scope: str = "all",
    profile: Sequence[str] | None = None,
    counts: bool = False,
) -> list[CodeGraph]:
    """Hybrid control-flow graphs (hCFG) of a C file's functions and outermost loops.

    Parameters
    ----------
    source : str or Path
        The C file, compiled with clang to LLVM IR.
    function : str, optional
        Only this function.
    loop : int, optional
        Only the outermost loop starting at this line.
    flags : sequence of str
        Further clang flags (``-D``, ``-I``, ...).
    scope : {"all", "function", "loop"}
        Function graphs, loop graphs or both.
    profile : sequence of str, optional
        Measure the transition probabilities instead of estimating them: the file (with
        ``main``) is built instrumented and run once with these program arguments.
    counts : bool
        Take loop trip counts from perfcast's symbolic loop counts (``perfcast static``) where
        they are numbers (macros from ``flags``), before constants in the IR and the heuristic.

    Returns
    -------
    list of CodeGraph
        Each with ``to_dict()`` (JSON format ``perfcast-hcfg``) and ``to_dot()``.
    """
    from perfcast.static.hcfg import build_graphs

    if scope not in ("all", "function", "loop"):
        raise ValueError(f"scope: must be 'all', 'function' or 'loop', not {scope!r}")
    return build_graphs(
        source,
        function=function,
        loop=loop,
        flags=flags,
        scope=scope,
        profile=profile,
        counts=counts,
    )


def similar_kernels(
    query: str,
    corpus: Sequence[str | Path],
    *,
    top: int = 5,
    flags: Sequence[str] = (),
) -> Matches:
    """Rank the loops or functions of C files by the similarity of their hCFG to a query's.

    Parameters
    ----------
    query : str
        ``file.c``, ``file.c:function`` or ``file.c:function:line`` (an outermost loop).
    corpus : sequence of str or Path
        C files to search.
    top : int
        How many matches to return.
    flags : sequence of str
        Further clang flags.

    Returns
    -------
    Matches
        ``matches`` ranked by ``similarity`` in [0, 1]; ``to_dict()`` for JSON.
    """
    from perfcast.analyze.matching import similar

    return similar(query, corpus, top=top, flags=flags)


def load_tuning_space(path: str | Path) -> TuningSpace:
    """Read an autotuning search space: a TOML file of flags, macros, defines and measure.

    Parameters
    ----------
    path : str or Path
        The space file.

    Returns
    -------
    TuningSpace

    Raises
    ------
    InputError
        Naming the file, line and key of an unknown key or a bad value.
    """
    from perfcast.analyze.tuning import load_space

    return load_space(path)


def tune_kernel(
    source: str | Path,
    function: str,
    space: TuningSpace | str | Path,
    *,
    budget: int | None = None,
    strategy: str = "random",
    seed: int = 0,
    database: str | Path | None = None,
    warm_start: bool = False,
    neighbours: int = 3,
    flags: Sequence[str] = (),
) -> TuningResult:
    """Autotune a C kernel: compile and measure configurations, store them in a tuning database.

    Parameters
    ----------
    source : str or Path
        C program (with ``main``) containing the kernel.
    function : str
        The kernel function.
    space : TuningSpace or str or Path
        The search space, or its TOML file.
    budget : int, optional
        Evaluations at most (default: all for ``exhaustive``, else 20).
    strategy : {"exhaustive", "random", "model"}
        Search strategy.
    seed : int
        Seed of the random choices.
    database : str or Path, optional
        SQLite tuning database to read and extend.
    warm_start : bool
        First try the best configurations of the most similar kernels in the database, ranked
        by their similarity-weighted measurements (with ``strategy="model"`` the search then
        continues from that ranking corrected by this kernel's own results).
    neighbours : int
        Similar kernels a warm start draws from.
    flags : sequence of str
        clang flags for building the kernel's code graph.

    Returns
    -------
    TuningResult
        Evaluations, best configuration, evaluations needed to get within 5 % of the best.
    """
    from perfcast.analyze.tuning import load_space, tune

    chosen = load_space(space) if isinstance(space, str | Path) else space
    return tune(
        source,
        function,
        chosen,
        budget=budget,
        strategy=strategy,
        seed=seed,
        database=database,
        warm_start=warm_start,
        neighbours=neighbours,
        flags=flags,
    )


# --- Drawn campaigns and their run tables (issue 17, item 2) ---


def campaign_metrics() -> tuple[str, ...]:
    """Every metric a campaign may list: the metric modes and ``features`` (the records of a
    program built from ``perfcast features`` output, collected in the ``time`` runs)."""
    from perfcast.measure.spec import FEATURES_METRIC, METRIC_MODES

    return (*METRIC_MODES, FEATURES_METRIC)


def campaign_run_table(results_path: str | Path, *, phase: str = "exit") -> RunTable:
    """The run table of a campaign collecting ``features``, from its results journal.

    One row per successful ``time`` run: parameters, ``repetition``, features, their
    ``cost:`` columns, ``time`` (wall seconds) and ``cpu``; what :func:`learn` reads.

    Parameters
    ----------
    results_path : str or Path
        The campaign's ``<name>.results.jsonl``.
    phase : str
        ``exit`` or ``features_end`` (the early phase's features).

    Raises
    ------
    InputError
        Naming the journal for a campaign without features, no successful run, or runs of
        different builds.
    """
    from perfcast.io.campaign_runs import campaign_run_table as table_of

    return table_of(results_path, phase)


# ---- Scale-out: distributed modeling and inputs larger than memory (issue 19 B) ---------------

__all__ += ["scheduler_address"]

#: Kernels per block when an input is read in blocks (:func:`fit_stream`): a fit's peak memory
#: grows by about 5 MiB per 1,000 one-parameter kernels, so a block stays near 300 MiB.
STREAM_KERNELS = 50_000


@dataclass(frozen=True)
class StreamedFit:
    """What :func:`fit_stream` wrote.

    Attributes
    ----------
    models : int
        Models written.
    blocks : int
        Blocks of kernels read and modeled.
    warned : int
        Models written with a warning of the quality gates.
    skipped : list of Skip
        Kernels whose data admitted no model.
    notes : list of str
        The fits' notes, each once.
    """

    models: int
    blocks: int
    warned: int
    skipped: list[Skip]
    notes: list[str]


def fit_stream(
    path: str | Path,
    target: str | Path | TextIO,
    *,
    kernels: int = STREAM_KERNELS,
    modeler: str = "pmnf",
    metric: str | Sequence[str] | None = None,
    every_metric: bool = False,
    strict: bool = False,
    client: Client | DaskChunks | None = None,
    format: str | None = None,  # noqa: A002 - as load's
    **settings: Any,
) -> StreamedFit:
    """Model an input larger than memory: read it in blocks of ``kernels`` whole kernels
    (Parquet tables by row groups, Extra-P JSON Lines line by line; each kernel's rows
    together, see :mod:`perfcast.io.kernel_blocks`), fit each block as :func:`fit` does and
    write its models to ``target`` before reading the next, as one model document (the JSON
    of :meth:`ModelSet.to_json`, which :meth:`ModelSet.from_json` reads).

    What a fit pools over the kernels of a series (the noise shape behind the location
    estimator, the noise prior, the series-wide search choices) is pooled over each block, as
    the backtests pool over blocks of 32,768 kernels: the models are those of :func:`fit` on
    each block on its own, and a note in the document says so when there was more than one.

    Parameters
    ----------
    path : str or Path
        A Parquet long table or an Extra-P JSON Lines file.
    target : str, Path or text stream
        A file (written under a temporary name and renamed when complete, so a failure leaves
        no partial document and an existing file as it was) or an open stream.
    kernels : int
        Kernels per block, 1 or more.
    modeler, strict, client, **settings
        As for :func:`fit` (``client``: each block is modeled on the cluster).
    metric : str or sequence of str, optional
        The metric(s) to model; by default each block's default metric (its only one, or
        ``time``).
    every_metric : bool
        Model every metric of each block instead.
    format : str, optional
        The input format (``table`` or ``extrap-jsonlines``); detected when None.

    Returns
    -------
    StreamedFit

    Raises
    ------
    InputError
        For bad input (naming the file and row or line), a format that is not read in blocks,
        a metric no block has, or when no kernel at all can be modeled.
    """
    import os
    import tempfile

    from perfcast.io import detect_format
    from perfcast.io.kernel_blocks import read_blocks
    from perfcast.model.registry import make_modeler

    if not Path(path).exists():
        raise InputError("no such file or directory", path)
    blocks = read_blocks(path, kernels, format or detect_format(path))
    estimator = make_modeler(modeler, **settings)  # settings checked before any output
    if not isinstance(target, str | Path):
        return _stream_blocks(
            blocks, target, estimator.get_params(), modeler, metric, every_metric, strict,
            client, kernels, str(path), settings,
        )  # fmt: skip
    directory = Path(target).resolve().parent
    try:
        handle, temporary = tempfile.mkstemp(prefix=".perfcast-", suffix=".json", dir=directory)
    except OSError as error:
        raise InputError(f"cannot write: {error.strerror}", target) from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            summary = _stream_blocks(
                blocks, stream, estimator.get_params(), modeler, metric, every_metric, strict,
                client, kernels, str(path), settings,
            )  # fmt: skip
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return summary


def _stream_blocks(
    blocks: Iterable[Experiment],
    stream: TextIO,
    params: Mapping[str, Any],
    modeler: str,
    metric: str | Sequence[str] | None,
    every_metric: bool,
    strict: bool,
    client: Client | DaskChunks | None,
    kernels: int,
    source: str,
    settings: Mapping[str, Any],
) -> StreamedFit:
    """Fit every block and write its models (see :func:`fit_stream`)."""
    from perfcast.model.modelstream import ModelStreamWriter

    writer = ModelStreamWriter(stream, modeler, params, source)
    wanted = [metric] if isinstance(metric, str) else None if metric is None else list(metric)
    seen: set[str] = set()
    count = warned = 0
    for count, block in enumerate(blocks, start=1):  # noqa: B007 - the count is used below
        if every_metric:
            names = block.metric_names
        elif wanted is None:
            names = [block.default_metric()]
        else:
            names = [name for name in wanted if name in block.metric_names]
        seen.update(names)
        if not names:
            continue
        models = _fitted(block, modeler, names, strict, False, client, settings)
        writer.add(models)
        warned += sum(1 for m in models.models if m.warnings)
    missing = [name for name in wanted or () if name not in seen]
    if missing:
        raise InputError(f"no metric '{missing[0]}' in any block", source, value=missing[0])
    if count > 1:
        writer.notes.append(
            f"read in {count} blocks of up to {kernels} kernels: the noise statistics and "
            "the series-wide choices of the search were pooled over each block, not the "
            "whole input"
        )
    if not writer.written and writer.skipped:  # as fit: no kernel at all could be modeled
        raise writer.skipped[0].error(source)
    writer.close()
    return StreamedFit(writer.written, count, warned, list(writer.skipped), list(writer.notes))


__all__ += ["STREAM_KERNELS", "StreamedFit", "fit_stream"]
