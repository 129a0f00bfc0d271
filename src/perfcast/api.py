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

from perfcast.core.errors import InputError, WorkError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.core.jsonout import dumps
from perfcast.core.points import parse_point
from perfcast.core.progress import ProgressBar
from perfcast.display.tables import FORMATS as TABLE_FORMATS
from perfcast.io import read_experiment, write_experiment
from perfcast.model.backtest import backtest
from perfcast.model.distributed import DaskChunks, dask_client
from perfcast.model.fitting.assembly import Skip, require_models
from perfcast.model.fitting.location import LOCATIONS
from perfcast.model.gates import gate_models
from perfcast.model.modelset import ModelSet, measured_ranges
from perfcast.model.predict import Prediction
from perfcast.model.registry import make_modeler, modeler_names

#: Seconds of work before a progress bar shows.
PROGRESS_DELAY = 1.0

# The result types, named here for annotations (``perfcast.api.Diagnosis``); importing their
# modules at run time would put the analyses' dependencies into every command's start-up.
if TYPE_CHECKING:
    from distributed import Client

    from perfcast.analyze.bugs import Expectation as Expectation
    from perfcast.analyze.compare import Comparison as Comparison
    from perfcast.analyze.diagnosis import Diagnosis as Diagnosis
    from perfcast.analyze.optimize import Constraint as Constraint
    from perfcast.analyze.optimize import Optimum as Optimum
    from perfcast.measure.campaign import CampaignResult as CampaignResult
    from perfcast.measure.spec import Campaign as Campaign
    from perfcast.static.instruction_mix import InstructionMix as InstructionMix
    from perfcast.static.report import StaticReport as StaticReport


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
        (:mod:`perfcast.model.backtest`).

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
        estimator.fit(experiment, name, chunks)
        if strict and estimator.skipped_:
            raise estimator.skipped_[0].error(experiment.source)
        gated = gate_models(estimator.models_, experiment, name)

        def refit(training: Experiment, metric: str = name) -> list[Model]:
            return make_modeler(modeler, **settings).fit(training, metric, chunks).models_

        models.extend(backtest(gated, experiment, name, refit))
        skipped.extend(estimator.skipped_)
        notes.update(dict.fromkeys(estimator.notes()))
    if progress:
        bar.close()
    require_models(models, skipped, experiment.source)
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

    Returns
    -------
    StaticReport
        Pass it to :func:`fit` as ``report=`` with ``modeler="hybrid"``.
    """
    from perfcast.static import analyze

    if not progress:
        return analyze(sources, parameters, compile_args)
    bars: list[ProgressBar] = []

    def advance(counted: int, total: int) -> None:
        if not bars:
            bars.append(ProgressBar(total, unit="loops and functions", delay=PROGRESS_DELAY))
        bars[0].advance()

    try:
        return analyze(sources, parameters, compile_args, advance)
    finally:
        if bars:
            bars[0].close()


def render(
    value: ModelSet | Sequence[Prediction] | Diagnosis | Comparison | Optimum | InstructionMix,
    format: str = "text",  # noqa: A002 - the documented keyword
    *,
    at: Mapping[str, float] | str | None = None,
    width: int | None = None,
    tree: bool = False,
) -> str:
    """A result as text for people or strict JSON (no NaN) for scripts.

    Parameters
    ----------
    value : ModelSet, list of Prediction, Diagnosis, Comparison, Optimum or InstructionMix
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
    from perfcast.analyze.compare import Comparison
    from perfcast.analyze.diagnosis import Diagnosis
    from perfcast.display.text import comparison_text, diagnosis_text, optimum_text
    from perfcast.static.instruction_mix import InstructionMix

    if isinstance(value, InstructionMix):
        return _render_mix(value, format)
    if format == "json":
        return dumps(value.to_dict()) + "\n"
    if format != "text":
        raise ValueError(f"format: must be 'text' or 'json', not {format!r}")
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

    Returns
    -------
    InstructionMix
        Render it with :func:`render` (``text``, ``json`` or ``python``).
    """
    from perfcast.static.binary import read_binary
    from perfcast.static.instruction_mix import instruction_mix as count_mix

    return count_mix(read_binary(binary), report, parameters, attribution)


def inclusive_metric(exclusive: str, metrics: Sequence[str]) -> str | None:
    """The inclusive counterpart of a metric among ``metrics`` (``time`` ->
    ``time_inclusive``), which :func:`render` with ``tree=True`` shows beside the exclusive
    values; None when there is none."""
    from perfcast.display.tables import inclusive_metric as counterpart

    return counterpart(exclusive, metrics)


def modelers(*, standalone: bool = False) -> tuple[str, ...]:
    """Names of the registered modelers (see :mod:`perfcast.model.registry`); ``standalone``
    leaves out those that need a static analysis (``hybrid``)."""
    return modeler_names(standalone=standalone)


def formats() -> dict[str, dict[str, bool]]:
    """Every data format by name, with whether perfcast can read and write it."""
    from perfcast.io import formats as format_modules

    return {
        name: {"read": hasattr(module, "read"), "write": hasattr(module, "write")}
        for name, module in format_modules().items()
    }


__all__ = [
    "LOCATIONS",
    "TABLE_FORMATS",
    "Experiment",
    "InputError",
    "ModelSet",
    "WorkError",
    "analyze_source",
    "build_flags",
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
]
