"""perfcast: forecast how HPC applications scale."""

from perfcast.errors import InputError, PerfcastError, WorkError
from perfcast.experiment import Experiment, Metric, Parameter, Series
from perfcast.model.function import Factor, Model, Quality, Term

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
]
__version__ = "0.1.0"
