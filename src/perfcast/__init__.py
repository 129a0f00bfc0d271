"""perfcast: forecast how HPC applications scale.

The front door is :mod:`perfcast.api`, re-exported here: :func:`load` measurements,
:func:`fit` models (a :class:`ModelSet`), :func:`predict`, :func:`diagnose`, :func:`compare`,
:func:`optimize` and :func:`report`. Instrumented programs use :func:`region`.

The names load on first use, so a program that only wants :func:`region` does not pay for
pandas and numpy at start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from perfcast.core.errors import InputError, PerfcastError, WorkError
from perfcast.core.version import __version__

if TYPE_CHECKING:
    # Segmented models and measurement-point advice (issue 19).
    from perfcast.api import (
        ModelSet,
        advise,
        analyze_source,
        build_flags,
        compare,
        describe_failure,
        diagnose,
        fit,
        formats,
        import_profiles,
        instruction_mix,
        load,
        load_campaign,
        load_static_report,
        modelers,
        optimize,
        parse_expectation,
        parse_point,
        pending_runs,
        predict,
        render,
        report,
        run_campaign,
        save,
    )
    from perfcast.core.experiment import Experiment, Metric, Parameter, Series
    from perfcast.core.function import Breakpoint, Factor, Model, Quality, Segment, Term
    from perfcast.measure.regions import region

# The user-facing names of perfcast.api (the rest of its names serve the command line).
_API = ("ModelSet", "analyze_source", "build_flags", "compare", "describe_failure", "diagnose",
        "fit", "formats", "import_profiles", "instruction_mix", "load", "load_campaign",
        "load_static_report", "modelers", "optimize", "parse_expectation", "parse_point",
        "pending_runs", "predict", "render", "report", "run_campaign", "save")  # fmt: skip
_LAZY = {
    **{name: "perfcast.api" for name in _API},
    "Experiment": "perfcast.core.experiment",
    "Metric": "perfcast.core.experiment",
    "Parameter": "perfcast.core.experiment",
    "Series": "perfcast.core.experiment",
    "Factor": "perfcast.core.function",
    "Model": "perfcast.core.function",
    "Quality": "perfcast.core.function",
    "Term": "perfcast.core.function",
    "region": "perfcast.measure.regions",
    # Segmented models and measurement-point advice (issue 19).
    "advise": "perfcast.api",
    "Breakpoint": "perfcast.core.function",
    "Segment": "perfcast.core.function",
}

__all__ = [
    "Experiment",
    "Factor",
    "InputError",
    "Metric",
    "Model",
    "ModelSet",
    "Parameter",
    "PerfcastError",
    "Quality",
    "Series",
    "Term",
    "WorkError",
    "__version__",
    "analyze_source",
    "build_flags",
    "compare",
    "describe_failure",
    "diagnose",
    "fit",
    "formats",
    "import_profiles",
    "instruction_mix",
    "load",
    "load_campaign",
    "load_static_report",
    "modelers",
    "optimize",
    "parse_expectation",
    "parse_point",
    "pending_runs",
    "predict",
    "region",
    "render",
    "report",
    "run_campaign",
    "save",
    # Segmented models and measurement-point advice (issue 19).
    "Breakpoint",
    "Segment",
    "advise",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'perfcast' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
