"""Inclusive and exclusive values of call-path kernels, so that totals count nothing twice.

A kernel's value is *inclusive* when it contains the values of the kernels it calls: metrics named
``*inclusive*`` (``time_inclusive`` from CUBE, Caliper and Hatchet, ``instructions.inclusive`` from
callgrind) always are, and so is perfcast's own region ``time`` where regions nest. Summing
inclusive values over a call tree counts every callee once per ancestor; totals and shares must
come from *exclusive* values: a kernel's value minus those of its nearest descendants that are
kernels themselves (:func:`exclusive_values`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfcast.core.experiment import CALL_PATH_SEPARATOR, KERNEL, METRIC, VALUE, Experiment


def nearest_kernel_parents(kernels: Sequence[str]) -> list[int | None]:
    """For each call path, the index of its nearest ancestor among ``kernels`` (None for none)."""
    index = {kernel: i for i, kernel in enumerate(kernels)}
    parents: list[int | None] = []
    for kernel in kernels:
        parts = kernel.split(CALL_PATH_SEPARATOR)
        parent = None
        for cut in range(len(parts) - 1, 0, -1):
            found = index.get(CALL_PATH_SEPARATOR.join(parts[:cut]))
            if found is not None:
                parent = found
                break
        parents.append(parent)
    return parents


def exclusive_values(kernels: Sequence[str], values: np.ndarray) -> np.ndarray:
    """Inclusive ``values`` of ``kernels`` minus those of their nearest kernel descendants."""
    exclusive = np.array(values, dtype=float)
    for child, parent in enumerate(nearest_kernel_parents(kernels)):
        if parent is not None:
            exclusive[parent] -= values[child]
    return exclusive


def is_inclusive_metric(experiment: Experiment, metric: str, tolerance: float = 0.02) -> bool:
    """Whether the values of ``metric`` include those of the kernels each kernel calls.

    True when the name says so (contains ``inclusive``); otherwise when call paths nest and at
    every measured point every kernel with kernel descendants is at least their sum (less
    ``tolerance``), as only inclusive values can be -- exclusive values (CUBE's and Caliper's
    ``time``) of a caller are usually smaller than its callees'. False without nesting.
    """
    if "inclusive" in metric.lower():
        return True
    table = experiment.frame[experiment.frame[METRIC] == metric]
    names = list(experiment.parameter_names)
    means = table.groupby([KERNEL, *names], sort=True)[VALUE].mean().unstack(KERNEL)
    kernels = [str(k) for k in means.columns]
    parents = nearest_kernel_parents(kernels)
    if all(parent is None for parent in parents):
        return False
    values = means.to_numpy(dtype=float)
    children = np.zeros_like(values)
    for child, parent in enumerate(parents):
        if parent is not None:
            children[:, parent] += np.nan_to_num(values[:, child])
    has_children = children > 0
    with np.errstate(invalid="ignore"):
        holds = values >= children * (1 - tolerance)
    return bool(np.all(holds[has_children & np.isfinite(values)]))
