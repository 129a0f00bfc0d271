"""What every modeler shares: scikit-learn style estimators with ``fit``, ``predict`` and
``get_params`` over an experiment."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Model
from perfcast.model.fitting.assembly import Skip, skips_of
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.location import LOCATIONS, Location
from perfcast.model.settings import check_bool, check_choice, check_open_interval


class SeriesModeler:
    """Base of modelers that fit each :class:`~perfcast.core.experiment.Series` on its own.

    Subclasses set :attr:`name` (their name in :mod:`perfcast.model.registry`), take their
    settings as constructor keywords stored under the same names (so :meth:`get_params` can
    report them), validate them with :meth:`_check_common` and their own checks, implement
    ``_fit_series(series, source) -> list[Model]`` and take their data from :meth:`_fit_data`.
    :meth:`fit` hands them only series whose points admit a model; the kernels of the others
    are skipped (:attr:`skipped_`).

    Attributes
    ----------
    models_ : list of Model
        One model per kernel that could be modeled, after :meth:`fit`.
    skipped_ : list of Skip
        The kernels left out, and why (too few values of a parameter, ...).
    locations_ : list of Location
        How the points' values were estimated, one per series fitted.
    progress : callable or None
        Not a setting: called during :meth:`fit` with a number of kernels done (searched,
        modeled or skipped), every kernel counted once; None (the default) reports nothing.
    """

    name: ClassVar[str] = ""
    #: True for modelers whose ``_fit_series`` reports its kernels to :attr:`progress` itself.
    reports_progress: ClassVar[bool] = False
    progress: Callable[[int], None] | None = None
    location: str = "adaptive"
    alpha: float = 0.05
    positive_terms: bool = True
    negative_exponents: bool | None = None

    def get_params(self) -> dict[str, Any]:
        """The settings this modeler was constructed with, by name.

        Returns
        -------
        dict
            Every constructor keyword and its value.
        """
        names = [
            p.name
            for p in inspect.signature(type(self).__init__).parameters.values()
            if p.name != "self" and p.kind is p.POSITIONAL_OR_KEYWORD
        ]
        return {n: getattr(self, n) for n in names}

    def _check_common(self) -> None:
        """Validate the settings every modeler shares."""
        check_open_interval("alpha", self.alpha, 0.0, 1.0)
        check_bool("positive_terms", self.positive_terms)
        check_bool("negative_exponents", self.negative_exponents, optional=True)
        check_choice("location", self.location, LOCATIONS)

    def __repr__(self) -> str:
        settings = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({settings})"

    def fit(self, experiment: Experiment, metric: str | None = None) -> SeriesModeler:
        """Model every kernel of ``experiment`` for ``metric`` whose data admits a model, skip
        the others (see :attr:`skipped_`); returns self."""
        self.models_: list[Model] = []
        self.locations_: list[Location] = []
        self.skipped_: list[Skip] = []
        for series in experiment.series(metric):
            skips = skips_of(series)
            if skips:
                self.skipped_.extend(skips)
            else:
                self.models_.extend(self._fit_series(series, experiment.source))
            if self.progress is not None and (skips or not self.reports_progress):
                self.progress(len(series.kernels))
        return self

    def _fit_data(self, series: Series, source: str | None) -> FitData:
        """The statistics of ``series`` with this modeler's location estimator, recorded."""
        data = FitData.from_series(series, source, self.location)
        assert data.location is not None, "from_series records its location estimate"
        self.locations_.append(data.location)
        return data

    def notes(self) -> list[str]:
        """What a user should know about the last :meth:`fit`: how point values were taken when
        not as means (the first series that did so), and models with a figure beyond a double's
        range (JSON writes it as null)."""
        notes = next(([loc.note] for loc in self.locations_ if loc.note is not None), [])
        beyond = [m.kernel for m in self.models_ if not _representable(m)]
        if beyond:
            notes.append(
                f"{len(beyond)} model(s) (the first of kernel '{beyond[0]}') have a figure beyond "
                "the range of a double-precision number, such as the residual sum of squares of "
                "values above 1e154; JSON output writes it as null"
            )
        return notes

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Predictions of every model at ``points``, shape (n_models, n_points)."""
        return np.stack([m.evaluate(points) for m in self.models_])

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        raise NotImplementedError


def _representable(model: Model) -> bool:
    """True when every number of ``model`` (coefficients, quality figures) is finite or absent."""
    quality = model.quality.to_dict().values() if model.quality is not None else ()
    numbers = [model.constant, *(t.coefficient for t in model.terms), *quality]
    return all(n is None or np.isfinite(n) for n in numbers)
