"""perfcast: forecast how HPC applications scale."""

from perfcast.errors import InputError, PerfcastError, WorkError
from perfcast.experiment import Experiment, Metric, Parameter, Series
from perfcast.measure.regions import region
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
    "region",
]
__version__ = "0.1.0"
