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
        collect_rank_signatures,
        collect_signature,
        compare,
        convolve,
        dask_client,
        describe_failure,
        diagnose,
        extrapolate_signature,
        fit,
        fit_stream,
        formats,
        import_profiles,
        instruction_mix,
        learn,
        load,
        load_campaign,
        load_learned,
        load_machine,
        load_run_table,
        load_static_report,
        merge_signatures,
        modelers,
        online_modeler,
        open_store,
        optimize,
        parse_expectation,
        parse_point,
        pending_runs,
        predict,
        predict_runs,
        probe_machine,
        render,
        render_online,
        render_pmac,
        replay_stream,
        report,
        run_advised,
        run_campaign,
        save,
        save_learned,
        save_machine,
        serve_spool,
        stored_models,
    )
    from perfcast.core.experiment import Experiment, Metric, Parameter, Series
    from perfcast.core.function import Breakpoint, Factor, Model, Quality, Segment, Term
    from perfcast.measure.online_regions import online_region
    from perfcast.measure.regions import region

# The user-facing names of perfcast.api (the rest of its names serve the command line).
_API: tuple[str, ...]  # extended below by the trace-extrapolation names
_API = ("ModelSet", "analyze_source", "build_flags", "compare", "describe_failure", "diagnose",
        "fit", "formats", "import_profiles", "instruction_mix", "load", "load_campaign",
        "load_static_report", "modelers", "optimize", "parse_expectation", "parse_point",
        "pending_runs", "predict", "render", "report", "run_campaign", "save",
        "dask_client")  # fmt: skip
# Learned run-time models (issue 17).
_LEARNED_API = ("learn", "load_learned", "load_run_table", "predict_runs", "save_learned")
# Online modeling (life-long models, a model store, a collector for instrumented runs).
_ONLINE_API = ("online_modeler", "open_store", "read_clusters", "render_online", "replay_stream",
               "serve_spool", "stored_models")  # fmt: skip
# Trace extrapolation (PMaC): signatures, extrapolation, machine profiles, convolution.
_PMAC_API = ("collect_rank_signatures", "collect_signature", "convolve", "extrapolate_signature",
             "load_machine", "merge_signatures", "probe_machine", "render_pmac",
             "save_machine")  # fmt: skip
_API += _PMAC_API
_LAZY = {
    **{name: "perfcast.api" for name in _API},
    **{name: "perfcast.api" for name in _LEARNED_API},
    **{name: "perfcast.api" for name in _ONLINE_API},
    "Experiment": "perfcast.core.experiment",
    "Metric": "perfcast.core.experiment",
    "Parameter": "perfcast.core.experiment",
    "Series": "perfcast.core.experiment",
    "Factor": "perfcast.core.function",
    "Model": "perfcast.core.function",
    "Quality": "perfcast.core.function",
    "Term": "perfcast.core.function",
    "region": "perfcast.measure.regions",
    "online_region": "perfcast.measure.online_regions",
    # Segmented models and measurement-point advice (issue 19).
    "advise": "perfcast.api",
    "Breakpoint": "perfcast.core.function",
    "Segment": "perfcast.core.function",
    "run_advised": "perfcast.api",
    # Inputs larger than memory, modeled block by block (issue 19, scale-out).
    "fit_stream": "perfcast.api",
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
    "dask_client",
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
    # online modeling
    "online_modeler",
    "online_region",
    "open_store",
    "read_clusters",
    "render_online",
    "replay_stream",
    "serve_spool",
    "stored_models",
    "report",
    "run_campaign",
    "save",
    "learn",
    "load_learned",
    "load_run_table",
    "predict_runs",
    "save_learned",
    # trace extrapolation (PMaC)
    "collect_rank_signatures",
    "collect_signature",
    "convolve",
    "extrapolate_signature",
    "load_machine",
    "merge_signatures",
    "probe_machine",
    "render_pmac",
    "save_machine",
    # Segmented models and measurement-point advice (issue 19).
    "Breakpoint",
    "Segment",
    "advise",
    "run_advised",
    # Inputs larger than memory, modeled block by block (issue 19, scale-out).
    "fit_stream",
]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'perfcast' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
