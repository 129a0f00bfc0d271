"""What every modeler shares: the scikit-learn style ``fit``/``predict`` over an experiment."""

from __future__ import annotations

import numpy as np

from perfcast.core.experiment import Experiment, Series
from perfcast.core.function import Model
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.location import Location


class SeriesModeler:
    """Base of modelers that fit each :class:`~perfcast.core.experiment.Series` on its own.

    Subclasses implement ``_fit_series(series, source) -> list[Model]`` and take their data
    from :meth:`_fit_data`; they have a ``location`` hyper-parameter.

    Attributes
    ----------
    models_ : list of Model
        One model per kernel, after :meth:`fit`.
    locations_ : list of Location
        How the points' values were estimated, one per series fitted.
    """

    location: str = "adaptive"

    def fit(self, experiment: Experiment, metric: str | None = None) -> SeriesModeler:
        """Model every kernel of ``experiment`` for ``metric``; returns self."""
        self.models_: list[Model] = []
        self.locations_: list[Location] = []
        for series in experiment.series(metric):
            self.models_.extend(self._fit_series(series, experiment.source))
        return self

    def _fit_data(self, series: Series, source: str | None) -> FitData:
        """The statistics of ``series`` with this modeler's location estimator, recorded."""
        data = FitData.from_series(series, source, self.location)
        self.locations_.append(data.location)
        return data

    def predict(self, points: np.ndarray) -> np.ndarray:
        """Predictions of every model at ``points``, shape (n_models, n_points)."""
        return np.stack([m.evaluate(points) for m in self.models_])

    def _fit_series(self, series: Series, source: str | None) -> list[Model]:
        raise NotImplementedError
