"""The modeling tools the benchmarks compare, behind one interface.

Each runner takes a :class:`~benchmarks.synthetic.KernelSet` and returns a :class:`Run`: one
:class:`~benchmarks.evaluation.Fit` per kernel and the wall time of the modeling alone.

- ``perfcast``: :func:`perfcast.model.fit` in this process (imported lazily, so the harness works
  before the modelers exist);
- ``extrap``: Extra-P's default modeler in its own virtual environment, through
  ``extrap_driver.py`` (optionally with negative exponents or on the medians);
- ``oracle``: the true functions, to check the harness itself (scores 100 % with zero error).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.evaluation import Fit, term_shapes
from benchmarks.extrap_env import DEFAULT_VENV, run_driver
from benchmarks.synthetic import KernelSet, extrapolation_point

DRIVER = Path(__file__).resolve().parent / "extrap_driver.py"
#: Kernels each tool models once, untimed, before the timed fit (lazy imports, caches).
WARM_UP_KERNELS = 2


class ToolUnavailable(RuntimeError):
    """A tool cannot run here (not installed, not written yet)."""


@dataclass(frozen=True)
class Run:
    """One tool's result on one kernel set.

    Attributes
    ----------
    fits : dict of str to Fit
        The fitted models by kernel name.
    seconds : float
        Wall time of the modeling alone (no data loading, no start-up).
    cpu_seconds : float
        CPU time of the modeling process over the same span (all its threads); on a shared
        machine less disturbed by other load than the wall time.
    """

    fits: dict[str, Fit]
    seconds: float
    cpu_seconds: float


Runner = Callable[[KernelSet], Run]


def run_oracle(kernel_set: KernelSet) -> Run:
    """The true functions as fits (a perfect tool)."""
    point = extrapolation_point(kernel_set.parameters)
    return Run({t.kernel: Fit.from_model(t, point) for t in kernel_set.truths}, 0.0, 0.0)


def perfcast_runner(modeler: str = "pmnf", options: Mapping[str, Any] | None = None) -> Runner:
    """A runner fitting with ``perfcast.model.fit(experiment, modeler=modeler, **options)``.

    The first :data:`WARM_UP_KERNELS` kernels are fitted once before the timed fit of all of them.
    """

    def run(kernel_set: KernelSet) -> Run:
        try:
            from perfcast.core.experiment import Experiment
            from perfcast.model import fit
        except ImportError as error:
            raise ToolUnavailable(
                "perfcast.model.fit is not available yet (the modelers land with issue 2); "
                f"run with --tools extrap ({error})"
            ) from error
        frame = kernel_set.to_frame()
        first = frame[frame["kernel"].isin(kernel_set.kernels[:WARM_UP_KERNELS])]
        fit(Experiment.from_frame(first), modeler=modeler, **dict(options or {}))
        experiment = Experiment.from_frame(frame)
        start, start_cpu = time.perf_counter(), time.process_time()
        models = fit(experiment, modeler=modeler, **dict(options or {}))
        seconds = time.perf_counter() - start
        cpu_seconds = time.process_time() - start_cpu
        point = extrapolation_point(kernel_set.parameters)
        return Run({m.kernel: Fit.from_model(m, point) for m in models}, seconds, cpu_seconds)

    return run


def extrap_runner(
    venv: Path = DEFAULT_VENV, negative_exponents: bool = False, median: bool = False
) -> Runner:
    """A runner fitting with Extra-P's default modeler in the environment ``venv``.

    ``median`` makes Extra-P model the medians of the repetitions (its ``use_median``).
    """

    def run(kernel_set: KernelSet) -> Run:
        arrays = {
            "parameters": np.array(kernel_set.parameters),
            "kernels": np.array(kernel_set.kernels),
            "points": kernel_set.points,
            "values": kernel_set.values,
            "eval_points": extrapolation_point(kernel_set.parameters),
        }
        flags = {"--negative-exponents": negative_exponents, "--median": median}
        options = [flag for flag, wanted in flags.items() if wanted]
        document = run_driver(venv, DRIVER, arrays, *options, prefix="perfcast-bench-")
        fits = fits_from_extrap(document, kernel_set.parameters)
        return Run(fits, float(document["seconds"]), float(document["cpu_seconds"]))

    return run


def fits_from_extrap(document: Mapping[str, Any], parameters: tuple[str, ...]) -> dict[str, Fit]:
    """Turn the driver's JSON (factors name parameters by index) into fits."""
    fits = {}
    for kernel, model in document["models"].items():
        shapes = [
            [
                (parameters[f["parameter"]], f["exponent"], f["log_exponent"])
                for f in term["factors"]
            ]
            for term in model["terms"]
        ]
        falling = term_shapes(
            shape
            for shape, term in zip(shapes, model["terms"], strict=True)
            if term["coefficient"] <= 0
        )
        fits[kernel] = Fit(
            kernel,
            term_shapes(shapes),
            float(model["predictions"][0]),
            model["model"],
            falling,
        )
    return fits
