"""Names and units for Caliper metric attributes.

Caliper names an aggregated metric by the operations applied to a measured attribute, outermost
first: ``avg#inclusive#sum#time.duration`` is the average over MPI ranks of each rank's inclusive
sum of ``time.duration``. perfcast reads such a name from the inside out:

=====================================  ===========================  =====
Caliper attribute                      perfcast metric              unit
=====================================  ===========================  =====
``sum#time.duration``                  ``time`` (exclusive)         s
``inclusive#sum#time.duration``        ``time_inclusive``           s
``avg#inclusive#sum#time.duration``    ``time_inclusive_rank_avg``  s
``min#inclusive#sum#time.duration``    ``time_inclusive_rank_min``  s
``max#inclusive#sum#time.duration``    ``time_inclusive_rank_max``  s
``sum#inclusive#sum#time.duration``    ``time_inclusive_rank_sum``  s
``sum#time.duration.ns``               ``time``                     ns
``count``, ``sum#rc.count``            ``visits``                   count
``avg#sum#time.duration``              ``time_rank_avg``            s
``avg#time.duration``                  ``time_avg`` (per visit)     s
``sum#papi.PAPI_TOT_CYC``              ``papi.PAPI_TOT_CYC``        (as given)
=====================================  ===========================  =====

The first operation on a measured attribute is the per-process aggregation (``sum`` adds
nothing to the name, ``min``/``max``/``avg`` over visits add ``_min``/``_max``/``_avg``);
``inclusive`` adds ``_inclusive``; every operation applied on top of an aggregated value is a
statistic across MPI ranks and adds ``_rank_<op>``. ``count`` is already an aggregate, so every
operation on it is across ranks. Units come from the attribute's ``attribute.unit`` metadata
(``sec`` becomes ``s``), else from the measured attribute.
"""

from __future__ import annotations

from dataclasses import dataclass

from perfcast.core.experiment import Metric

# Measured attribute -> (metric name, unit, already an aggregate of the profile).
_BASES: dict[str, tuple[str, str, bool]] = {
    "time.duration": ("time", "s", False),
    "time.duration.ns": ("time", "ns", False),
    "time.inclusive.duration": ("time_inclusive", "s", False),
    "time.inclusive.duration.ns": ("time_inclusive", "ns", False),
    "time": ("time", "s", True),
    "count": ("visits", "count", True),
    "rc.count": ("visits", "count", False),
    "region.count": ("visits", "count", False),
}
_UNITS = {"sec": "s", "msec": "ms", "usec": "us", "nsec": "ns", "occ": "count"}
_STATISTICS = ("min", "max", "avg", "sum")
# Value attributes that are not measurements.
_NOT_METRICS = {"mpi.rank", "aggregate.slot", "Node order", "cali.attribute.prop"}


@dataclass(frozen=True)
class CaliperMetric:
    """How one Caliper value attribute maps to a perfcast metric.

    Attributes
    ----------
    attribute : str
        The Caliper attribute name, e.g. ``avg#inclusive#sum#time.duration``.
    metric : Metric
        The perfcast metric (name and unit).
    combine : str
        How to merge two records of the same region: ``sum``, ``min``, ``max`` or ``mean``.
    """

    attribute: str
    metric: Metric
    combine: str


def caliper_metric(attribute: str, unit: str | None = None) -> CaliperMetric | None:
    """The perfcast metric for a Caliper value attribute, or None when it is not a measurement.

    Parameters
    ----------
    attribute : str
        Caliper attribute name.
    unit : str, optional
        The attribute's ``attribute.unit`` metadata.
    """
    tokens = attribute.split("#")
    base, operations = tokens[-1], tokens[:-1]
    if base in _NOT_METRICS or attribute in _NOT_METRICS:
        return None
    name, base_unit, aggregated = _BASES.get(base, (base, "", False))
    suffixes: list[str] = []
    inclusive = False
    across_ranks: list[str] = []
    for operation in reversed(operations):
        if operation == "inclusive":
            inclusive = True
        elif not aggregated:
            if operation != "sum":
                suffixes.append(operation)
            aggregated = True
        else:
            across_ranks.append(operation)
    parts = [name, *suffixes]
    if inclusive:
        parts.append("inclusive")
    parts.extend(f"rank_{op}" for op in reversed(across_ranks))
    outermost = operations[0] if operations and operations[0] in _STATISTICS else "sum"
    combine = "mean" if outermost == "avg" else outermost
    resolved = _UNITS.get(unit or "", unit) or base_unit
    return CaliperMetric(attribute, Metric("_".join(parts), resolved), combine)


def rank_metric(metric: CaliperMetric, statistic: str) -> CaliperMetric:
    """The metric for ``statistic`` (min, max, avg, sum) of ``metric`` across MPI ranks."""
    name = f"{metric.metric.name}_rank_{statistic}"
    combine = "mean" if statistic == "avg" else statistic
    return CaliperMetric(metric.attribute, Metric(name, metric.metric.unit), combine)
