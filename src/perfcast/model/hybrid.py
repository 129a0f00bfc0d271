"""Hybrid modeling: static execution counts narrow the empirical search.

Seed paper ``hybrid-static-dynamic-modeling.md``, section III. Each measured kernel is matched to
a kernel of the static report (by the last element of its call path: a function or loop name, or
``file:line``). Then, per kernel:

- the counts of the kernel and of every loop nested in it are sums of power/log terms in the
  experiment's parameters (exact, or once ``floor``/``ceiling`` are dropped): those terms are the
  only candidates, and only their coefficients are fitted (every subset of them is tried, with
  the same forward F-tests as the PMNF search);
- one of those counts is undefined: the PMNF search runs over the parameters that reach the
  kernel or a loop in it, the others' variation counting as repetitions;
- no static kernel matches: the plain PMNF search over all parameters.

Hybrid modeling never does worse than the empirical search it narrows. Where the static
information cannot be resolved (a count is undefined and no parameter is seen to reach the
kernel, e.g. loop bounds held in heap struct fields), the kernel is modeled by the plain PMNF
search; and every kernel modeled from static terms is fitted empirically too, the empirical
model kept where the static one fits clearly worse (SMAPE above :data:`DEGRADED_SMAPE_RATIO`
times the empirical one's plus :data:`DEGRADED_SMAPE_POINTS`). Each such kernel gets a note.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Mapping, Sequence

import numpy as np
import sympy

from perfcast.core.experiment import KERNEL, METRIC, REPETITION, Experiment, call_path
from perfcast.core.function import Factor, Model
from perfcast.model.base import ChunkMap, SeriesModeler
from perfcast.model.fitting.assembly import Skip, build_models
from perfcast.model.fitting.blocks import EXTRAP_BUILDING_BLOCKS
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.location import locate
from perfcast.model.fitting.selection import SearchSettings, search
from perfcast.model.pmnf import PMNFModeler
from perfcast.static.report import StaticKernel, StaticReport

MAX_STATIC_TERMS = 8
#: A static model whose SMAPE exceeds this multiple of the empirical model's (plus
#: :data:`DEGRADED_SMAPE_POINTS`) is replaced by the empirical one. Exact static terms fit
#: noisy data a little worse than the larger empirical search (by up to a quarter of its SMAPE
#: on the hybrid benchmark's data at 30 % noise); a model that misses a parameter fits it
#: several times worse.
DEGRADED_SMAPE_RATIO = 1.5
#: Percentage points of SMAPE a static model may exceed the empirical one by in any case.
DEGRADED_SMAPE_POINTS = 1.0
_LOCATION = re.compile(r"^(?P<file>.+):(?P<line>\d+)$")


class HybridModeler(SeriesModeler):
    """Fit models whose hypothesis space comes from a static analysis of the source (registered
    as ``hybrid``).

    Parameters
    ----------
    report : StaticReport
        From :func:`perfcast.static.analyze` over the program's sources.
    parameter_map : mapping of str to str, optional
        Experiment parameter name to the source name it stands for (``{"p": "size"}``); names
        not given are the same in both.
    constants : mapping of str to float, optional
        Source names with the value they had in every run (``{"iterations": 100}``), put into
        the counts before they are matched to the experiment's parameters.
    alpha, positive_terms, negative_exponents, location
        As in :class:`~perfcast.model.pmnf.PMNFModeler`; an adaptive location estimator is
        chosen once from the whole experiment, then used for every group of kernels.

    Attributes
    ----------
    models_ : list of Model
        One per kernel, in the experiment's kernel order, but for those skipped.
    skipped_ : list of Skip
        Kernels searched empirically whose measured points admit no model, and why.
    provenance_ : dict of str to str
        Per kernel: ``"static count"``, ``"reach: p, n"`` or ``"empirical"``.
    fallbacks_ : dict of str to str
        Kernels matched in the static report but modeled empirically, and why (each is
        ``"empirical"`` in :attr:`provenance_` and has a note).
    predictors_ : dict of str to tuple of int
        Per kernel: candidate terms of the hybrid search and of the purely empirical one
        (EPMNF: 42 building blocks per parameter).
    locations_ : list of Location
        The location estimate of the largest series, whose estimator all kernels use.
    location_ : str
        That estimator.
    """

    name = "hybrid"

    def __init__(
        self,
        report: StaticReport,
        parameter_map: Mapping[str, str] | None = None,
        constants: Mapping[str, float] | None = None,
        alpha: float = 0.05,
        positive_terms: bool = True,
        negative_exponents: bool | None = None,
        location: str = "adaptive",
    ):
        self.report = report
        self.parameter_map = parameter_map
        self.constants = constants
        self.alpha = alpha
        self.positive_terms = positive_terms
        self.negative_exponents = negative_exponents
        self.location = location
        self._check_common()
        if not isinstance(report, StaticReport):
            raise ValueError(
                f"report: must be a StaticReport (from perfcast.static.analyze), not {report!r}"
            )
        for setting, mapping in (("parameter_map", parameter_map), ("constants", constants)):
            if mapping is not None and not isinstance(mapping, Mapping):
                raise ValueError(f"{setting}: must be a mapping or None, not {mapping!r}")

    def fit(
        self, experiment: Experiment, metric: str | None = None, chunks: ChunkMap | None = None
    ) -> HybridModeler:
        """Model every kernel of ``experiment``; returns self.

        Raises
        ------
        ValueError
            With ``chunks``: the hybrid modeler models in this process only.
        """
        if chunks is not None:
            raise ValueError("modeler: hybrid cannot model a series in chunks")
        metric = metric or experiment.default_metric()
        experiment = experiment.select(metric=metric)
        largest = max(experiment.series(metric), key=lambda s: len(s.kernels))
        self.locations_ = [locate(largest.values, self.location)]
        self.location_ = self.locations_[0].estimator
        names = experiment.parameter_names
        to_source = {p: (self.parameter_map or {}).get(p, p) for p in names}
        to_experiment = {source: p for p, source in to_source.items()}
        empirical = len(EXTRAP_BUILDING_BLOCKS) * len(names)
        exact: dict[tuple, list[str]] = {}
        reach: dict[tuple[str, ...], list[str]] = {}
        self.provenance_: dict[str, str] = {}
        self.predictors_: dict[str, tuple[int, int]] = {}
        self.fallbacks_: dict[str, str] = {}
        self.skipped_: list[Skip] = []
        for kernel in experiment.kernels:
            static = match_kernel(kernel, self.report)
            shapes = None if static is None else self._terms(static, to_experiment, names)
            if shapes is not None and len(shapes) <= MAX_STATIC_TERMS:
                exact.setdefault(shapes, []).append(kernel)
                self.provenance_[kernel] = "static count"
                self.predictors_[kernel] = (len(shapes), empirical)
                continue
            reached = names if static is None else self._reach(static, to_experiment, names)
            if static is not None and shapes is None and not reached:
                reached = names
                self.fallbacks_[kernel] = (
                    f"its count is undefined ({self._undefined_reason(static)}) and no parameter "
                    "is seen to reach it"
                )
            reach.setdefault(reached, []).append(kernel)
            self.provenance_[kernel] = (
                "empirical"
                if static is None or kernel in self.fallbacks_
                else f"reach: {', '.join(reached) or 'none'}"
            )
            self.predictors_[kernel] = (len(EXTRAP_BUILDING_BLOCKS) * len(reached), empirical)

        fitted: dict[str, Model] = {}
        for shapes, kernels in exact.items():
            for model in self._fit_static(subset(experiment, kernels), shapes):
                fitted[model.kernel] = model
        for reached, kernels in reach.items():
            for model in self._fit_reach(subset(experiment, kernels), reached):
                fitted[model.kernel] = model
        self._keep_better_empirical(experiment, fitted, empirical)
        self.models_ = [fitted[k] for k in experiment.kernels if k in fitted]
        if self.progress is not None:
            self.progress(len(experiment.kernels))
        return self

    def _keep_better_empirical(
        self, experiment: Experiment, fitted: dict[str, Model], empirical: int
    ) -> None:
        """Fit every kernel modeled from static information empirically too; where the static
        model fits clearly worse (see :data:`DEGRADED_SMAPE_RATIO`), keep the empirical one and
        record why in :attr:`fallbacks_`."""
        narrowed = [k for k in experiment.kernels if k in fitted and self._narrowed(k)]
        if not narrowed:
            return
        search = self._empirical_modeler().fit(subset(experiment, narrowed))
        for model in search.models_:
            static = fitted[model.kernel]
            if static.quality is None or model.quality is None:
                continue
            worse, best = static.quality.smape, model.quality.smape
            if worse > DEGRADED_SMAPE_RATIO * best + DEGRADED_SMAPE_POINTS:
                fitted[model.kernel] = model
                self.fallbacks_[model.kernel] = (
                    f"the static terms ({self.provenance_[model.kernel]}) fit with "
                    f"{worse:.3g} % SMAPE, the empirical search with {best:.3g} %"
                )
                self.provenance_[model.kernel] = "empirical"
                self.predictors_[model.kernel] = (empirical, empirical)

    def _narrowed(self, kernel: str) -> bool:
        """True when the kernel's search was narrowed by static information."""
        return self.provenance_[kernel] != "empirical"

    def _empirical_modeler(self) -> PMNFModeler:
        """The plain PMNF search with this modeler's settings and location estimator."""
        return PMNFModeler(
            negative_exponents=self.negative_exponents,
            alpha=self.alpha,
            positive_terms=self.positive_terms,
            location=self.location_,
        )

    def _undefined_reason(self, static: StaticKernel) -> str:
        """Why the first undefined count of the kernel's nest is undefined."""
        return next(
            (k.undef_reason for k in self._nest(static) if k.count is None and k.undef_reason),
            "no reason given",
        )

    def notes(self) -> list[str]:
        """Where the models came from and how much smaller the search was, then the notes of
        every modeler (see :meth:`SeriesModeler.notes`)."""
        kinds = [p.split(":")[0] for p in self.provenance_.values()]
        hybrid = sum(h for h, _ in self.predictors_.values())
        empirical = sum(e for _, e in self.predictors_.values())
        counts = ", ".join(f"{kinds.count(k)} {k}" for k in ("static count", "reach", "empirical"))
        saved = 100.0 * (1 - hybrid / empirical) if empirical else 0.0
        summary = (
            f"hybrid: {counts}; {hybrid} candidate terms instead of {empirical} "
            f"({saved:.0f} % fewer)"
        )
        fallbacks = [
            f"hybrid: kernel '{kernel}' modeled empirically: {reason}"
            for kernel, reason in self.fallbacks_.items()
        ]
        return [summary, *fallbacks, *super().notes()]

    def _nest(self, static: StaticKernel) -> list[StaticKernel]:
        """The kernel and every loop nested in it."""
        inside = [
            k
            for k in self.report.kernels
            if k is not static
            and k.function == static.function
            and k.line >= static.line
            and k.end_line <= static.end_line
        ]
        return [static, *inside]

    def _terms(
        self, static: StaticKernel, to_experiment: Mapping[str, str], names: Sequence[str]
    ) -> tuple[tuple[Factor, ...], ...] | None:
        """Distinct term shapes of the counts of the nest, or None if one is undefined."""
        shapes: dict[tuple[Factor, ...], None] = {}
        for kernel in self._nest(static):
            model = count_model(kernel, to_experiment, names, self.constants)
            if model is None:
                return None
            shapes.update(dict.fromkeys(t.factors for t in model.terms))
        return tuple(shapes)

    def _reach(
        self, static: StaticKernel, to_experiment: Mapping[str, str], names: Sequence[str]
    ) -> tuple[str, ...]:
        """Parameters reaching the kernel or any loop inside it, in experiment order."""
        source = {p for k in self._nest(static) for p in k.parameters}
        return tuple(p for p in names if any(to_experiment.get(s) == p for s in source))

    def _settings(self) -> SearchSettings:
        return SearchSettings(alpha=self.alpha, positive_terms=self.positive_terms)

    def _fit_static(self, experiment: Experiment, shapes: tuple) -> list[Model]:
        models = []
        for series in experiment.series():
            data = FitData.from_series(series, experiment.source, self.location_)
            columns = {p: series.points[:, j] for j, p in enumerate(series.parameters)}
            pool = np.array([_basis(factors, columns) for factors in shapes]).reshape(
                len(shapes), len(series.points)
            )
            subsets = [
                np.array(list(itertools.combinations(range(len(shapes)), size)), dtype=np.intp)
                for size in range(1, len(shapes) + 1)
            ]
            choice = search(data, pool, subsets, None, self._settings())
            kernel_pool = np.broadcast_to(pool, (len(series.kernels), *pool.shape))
            models += build_models(data, choice, kernel_pool, [list(shapes)] * len(series.kernels))
        return models

    def _fit_reach(self, experiment: Experiment, reached: tuple[str, ...]) -> list[Model]:
        if not reached:
            return self._fit_static(experiment, ())
        reduced = drop_parameters(experiment, reached)
        modeler = self._empirical_modeler()
        full = experiment.parameter_names
        modeler.fit(reduced)
        self.skipped_.extend(modeler.skipped_)
        return [dataclasses.replace(m, parameters=full) for m in modeler.models_]


def match_kernel(kernel: str, report: StaticReport) -> StaticKernel | None:
    """The static kernel a measured kernel stands for, by name or ``file:line``; None if none."""
    leaf = call_path(kernel)[-1]
    location = _LOCATION.match(leaf)
    if location:
        return report.kernel_at(location["file"], int(location["line"]))
    try:
        return report.kernel(leaf)
    except KeyError:
        return None


def count_model(
    static: StaticKernel,
    to_experiment: Mapping[str, str],
    names: Sequence[str],
    constants: Mapping[str, float] | None = None,
) -> Model | None:
    """The static count as a model over the experiment's parameters, or None when undefined.

    ``constants`` (source name to value) are substituted first. ``floor`` and ``ceiling`` are
    dropped (their arguments kept), which leaves the candidate terms of integer division
    unchanged.
    """
    if static.count is None:
        return None
    fixed = {sympy.Symbol(name): value for name, value in (constants or {}).items()}
    renamed = static.count.subs(fixed).subs(
        {sympy.Symbol(s): sympy.Symbol(p) for s, p in to_experiment.items() if s != p}
    )
    symbols = {str(s) for s in renamed.free_symbols}
    if not symbols <= set(names):
        return None
    kernel = dataclasses.replace(static, count=renamed, all_parameters=tuple(names))
    return kernel.to_model() or kernel.approximate_model()


def _basis(factors: Sequence[Factor], columns: Mapping[str, np.ndarray]) -> np.ndarray:
    result = np.ones_like(next(iter(columns.values())))
    for factor in factors:
        result = result * factor.evaluate(columns[factor.parameter])
    return result


def subset(experiment: Experiment, kernels: Sequence[str]) -> Experiment:
    """The experiment restricted to some kernels."""
    frame = experiment.frame[experiment.frame[KERNEL].isin(list(kernels))].reset_index(drop=True)
    return Experiment.from_frame(
        frame, experiment.parameters, experiment.metrics, experiment.metadata, experiment.source
    )


def drop_parameters(experiment: Experiment, keep: Sequence[str]) -> Experiment:
    """The experiment over fewer parameters: the dropped ones' variation becomes repetitions."""
    frame = experiment.frame.drop(columns=[p for p in experiment.parameter_names if p not in keep])
    frame = frame.sort_values([KERNEL, METRIC, *keep, REPETITION], kind="stable")
    frame[REPETITION] = frame.groupby([KERNEL, METRIC, *keep], sort=False).cumcount()
    parameters = [p for p in experiment.parameters if p.name in keep]
    return Experiment.from_frame(
        frame, parameters, experiment.metrics, experiment.metadata, experiment.source
    )
