"""perfcast: forecast how HPC applications scale.

The public names load on first use, so a program that only wants :func:`region` does not pay
for pandas and numpy at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError, PerfcastError, WorkError
from perfcast.core.version import __version__

if TYPE_CHECKING:
    from perfcast.core.experiment import Experiment, Metric, Parameter, Series
    from perfcast.core.function import Factor, Model, Quality, Term
    from perfcast.measure.regions import region

_LAZY = {
    "Experiment": "perfcast.core.experiment",
    "Metric": "perfcast.core.experiment",
    "Parameter": "perfcast.core.experiment",
    "Series": "perfcast.core.experiment",
    "Factor": "perfcast.core.function",
    "Model": "perfcast.core.function",
    "Quality": "perfcast.core.function",
    "Term": "perfcast.core.function",
    "region": "perfcast.measure.regions",
}

__all__ = [
    "__version__",
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


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'perfcast' has no attribute {name!r}")
