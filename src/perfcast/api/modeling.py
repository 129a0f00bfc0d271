"""Fit scaling models (in one process or on a Dask cluster) and predict with them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from perfcast.core import progress as progress_bars
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.core.points import parse_point
from perfcast.core.progress import ProgressBar
from perfcast.model.backtest import CHUNK_KERNELS as BACKTEST_KERNELS
from perfcast.model.backtest import backtest
from perfcast.model.distributed import DaskChunks
from perfcast.model.fitting.assembly import Skip, require_models
from perfcast.model.gates import gate_models
from perfcast.model.modelset import ModelSet, measured_ranges
from perfcast.model.predict import Prediction
from perfcast.model.registry import make_modeler, modeler_names
from perfcast.model.rivals import selection_spread

if TYPE_CHECKING:
    from distributed import Client


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
    models = fit_with_settings(experiment, modeler, metric, strict, progress, client, settings)
    require_models(models.models, models.skipped, experiment.source)
    return models


def fit_with_settings(
    experiment: Experiment,
    modeler: str,
    metric: str | Sequence[str] | None,
    strict: bool,
    progress: bool,
    client: Client | DaskChunks | None,
    settings: Mapping[str, Any],
) -> ModelSet:
    """:func:`fit`, also when no kernel could be modeled (the model set is then empty)."""
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
        bar = ProgressBar(total, unit="kernels modeled", delay=progress_bars.API_DELAY)
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


def modelers(*, standalone: bool = False) -> tuple[str, ...]:
    """Names of the registered modelers (see :mod:`perfcast.model.registry`); ``standalone``
    leaves out those that need a static analysis (``hybrid``)."""
    return modeler_names(standalone=standalone)
