"""Scaling models and the modelers that fit them."""

from __future__ import annotations

from typing import Any

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment
from perfcast.core.function import Model

MODELERS = ("pmnf", "sparse")


def make_modeler(name: str = "pmnf", **options: Any):
    """A modeler by name (``pmnf`` or ``sparse``) with its hyper-parameters."""
    if name == "pmnf":
        from perfcast.model.pmnf import PMNFModeler

        return PMNFModeler(**options)
    if name == "sparse":
        from perfcast.model.sparse import SparseModeler

        return SparseModeler(**options)
    raise InputError(f"unknown modeler '{name}'; choose one of {', '.join(MODELERS)}")


def fit(
    experiment: Experiment, modeler: str = "pmnf", metric: str | None = None, **options: Any
) -> list[Model]:
    """Fit a model to every kernel of ``experiment``.

    Parameters
    ----------
    experiment : Experiment
    modeler : str
        ``pmnf`` (default) or ``sparse``.
    metric : str, optional
        Which metric to model; by default the only one, or ``time``.
    **options
        Hyper-parameters of the modeler.

    Returns
    -------
    list of Model
    """
    return make_modeler(modeler, **options).fit(experiment, metric).models_
