"""Scaling models and the modelers that fit them.

The modelers (:mod:`~perfcast.model.pmnf`, :mod:`~perfcast.model.sparse`,
:mod:`~perfcast.model.hybrid`) are estimators listed in :mod:`~perfcast.model.registry`; they
share the fitting machinery of :mod:`perfcast.model.fitting`.
:class:`~perfcast.model.modelset.ModelSet` holds what a fit produced. The public entry point
is :func:`perfcast.fit`.
"""

from __future__ import annotations

from typing import Any

from perfcast.core.experiment import Experiment
from perfcast.core.function import Model
from perfcast.model.fitting.assembly import require_models
from perfcast.model.registry import make_modeler


def fit(
    experiment: Experiment, modeler: str = "pmnf", metric: str | None = None, **settings: Any
) -> list[Model]:
    """Fit a model to every kernel of ``experiment`` for one metric.

    Parameters
    ----------
    experiment : Experiment
    modeler : str
        A name from :mod:`perfcast.model.registry` (default ``pmnf``).
    metric : str, optional
        Which metric to model; by default the only one, or ``time``.
    **settings
        Settings of the modeler.

    Returns
    -------
    list of Model
        One per kernel whose data admits a model, in the experiment's kernel order.

    Raises
    ------
    InputError
        When no kernel's data admits a model (the first kernel's reason).
    """
    fitted = make_modeler(modeler, **settings).fit(experiment, metric)
    require_models(fitted.models_, fitted.skipped_, experiment.source)
    return fitted.models_
