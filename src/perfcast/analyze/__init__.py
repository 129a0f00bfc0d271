"""Diagnoses over an :class:`~perfcast.core.experiment.Experiment` and its models.

Modules: :mod:`~perfcast.analyze.points` (parameter roles, targets, paths),
:mod:`~perfcast.analyze.scaling` (strong/weak scaling error, divergence),
:mod:`~perfcast.analyze.hotspots` (chi-square, Kendall tau, profile shifts),
:mod:`~perfcast.analyze.bugs` (scalability bugs), :mod:`~perfcast.analyze.ranking` (ranking,
crossovers), :mod:`~perfcast.analyze.diagnosis` (all of these at once),
:mod:`~perfcast.analyze.compare` (two experiments) and :mod:`~perfcast.analyze.optimize`
(configuration search).
"""

from perfcast.analyze.compare import compare_experiments
from perfcast.analyze.diagnosis import diagnose
from perfcast.analyze.optimize import optimize_configuration

__all__ = ["compare_experiments", "diagnose", "optimize_configuration"]
