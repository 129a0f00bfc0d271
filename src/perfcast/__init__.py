"""perfcast: forecast how HPC applications scale.

The public names load on first use, so a program that only wants :func:`region` does not pay
for pandas and numpy at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from perfcast.errors import InputError, PerfcastError, WorkError

if TYPE_CHECKING:
    from perfcast.experiment import Experiment, Metric, Parameter, Series
    from perfcast.measure.regions import region
    from perfcast.model.function import Factor, Model, Quality, Term

_LAZY = {
    "Experiment": "perfcast.experiment",
    "Metric": "perfcast.experiment",
    "Parameter": "perfcast.experiment",
    "Series": "perfcast.experiment",
    "Factor": "perfcast.model.function",
    "Model": "perfcast.model.function",
    "Quality": "perfcast.model.function",
    "Term": "perfcast.model.function",
    "region": "perfcast.measure.regions",
}

__all__ = [
    "Experiment",
    "Factor",
    "InputError",
    "Metric",
    "Model",
    "Parameter",
    "PerfcastError",
    "Quality",
    "Series",
    "Term",
    "WorkError",
    "region",
]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'perfcast' has no attribute {name!r}")
