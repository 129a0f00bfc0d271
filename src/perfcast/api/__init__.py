"""The public Python API of perfcast: load measurements, fit models, predict, diagnose, compare,
optimize and report.

Every command of the ``perfcast`` command line does its work through these functions, and the
names are re-exported from the package, so ``import perfcast`` is all a script needs::

    import perfcast

    experiment = perfcast.load("runs.csv")
    models = perfcast.fit(experiment)            # a ModelSet: kernel -> metric -> Model
    for prediction in models.predict({"p": 4096, "n": 1e6})[:5]:
        print(prediction.kernel, prediction.value, prediction.lower, prediction.upper)

Errors in the input are :class:`~perfcast.core.errors.InputError` (naming the file and line or
record); a setting outside its allowed range is a ``ValueError`` naming the setting.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# The functions load with their module on first use (``perfcast.api.fit`` imports
# ``perfcast.api.modeling`` and with it numpy, pandas and scipy), so that a command imports only
# the modules of what it does: ``perfcast static`` never loads the modeling layers.
if TYPE_CHECKING:
    from perfcast.api.advice import ADVISED_ROUNDS as ADVISED_ROUNDS
    from perfcast.api.advice import advice_stop_reasons as advice_stop_reasons
    from perfcast.api.advice import advise as advise
    from perfcast.api.advice import run_advised as run_advised
    from perfcast.api.analysis import compare as compare
    from perfcast.api.analysis import diagnose as diagnose
    from perfcast.api.analysis import optimize as optimize
    from perfcast.api.analysis import parse_expectation as parse_expectation
    from perfcast.api.campaigns import campaign_executors as campaign_executors
    from perfcast.api.campaigns import campaign_metrics as campaign_metrics
    from perfcast.api.campaigns import campaign_run_table as campaign_run_table
    from perfcast.api.campaigns import describe_failure as describe_failure
    from perfcast.api.campaigns import load_campaign as load_campaign
    from perfcast.api.campaigns import metric_modes as metric_modes
    from perfcast.api.campaigns import pending_runs as pending_runs
    from perfcast.api.campaigns import run_campaign as run_campaign
    from perfcast.api.experiments import formats as formats
    from perfcast.api.experiments import import_profiles as import_profiles
    from perfcast.api.experiments import inclusive_metric as inclusive_metric
    from perfcast.api.experiments import load as load
    from perfcast.api.experiments import output_format as output_format
    from perfcast.api.experiments import profile_options as profile_options
    from perfcast.api.experiments import save as save
    from perfcast.api.learned import instrument_features as instrument_features
    from perfcast.api.learned import learn as learn
    from perfcast.api.learned import learning_methods as learning_methods
    from perfcast.api.learned import load_feature_records as load_feature_records
    from perfcast.api.learned import load_learned as load_learned
    from perfcast.api.learned import load_run_table as load_run_table
    from perfcast.api.learned import parse_reductions as parse_reductions
    from perfcast.api.learned import predict_runs as predict_runs
    from perfcast.api.learned import render_learned as render_learned
    from perfcast.api.learned import run_prediction_warnings as run_prediction_warnings
    from perfcast.api.learned import save_learned as save_learned
    from perfcast.api.learned import save_run_table as save_run_table
    from perfcast.api.learned import transfer_methods as transfer_methods
    from perfcast.api.modeling import fit as fit
    from perfcast.api.modeling import modelers as modelers
    from perfcast.api.modeling import predict as predict
    from perfcast.api.online import online_modeler as online_modeler
    from perfcast.api.online import open_store as open_store
    from perfcast.api.online import read_clusters as read_clusters
    from perfcast.api.online import render_online as render_online
    from perfcast.api.online import replay_stream as replay_stream
    from perfcast.api.online import serve_spool as serve_spool
    from perfcast.api.online import stored_models as stored_models
    from perfcast.api.reporting import json_text as json_text
    from perfcast.api.reporting import render as render
    from perfcast.api.reporting import render_warnings as render_warnings
    from perfcast.api.reporting import report as report
    from perfcast.api.scaleout import STREAM_KERNELS as STREAM_KERNELS
    from perfcast.api.scaleout import StreamedFit as StreamedFit
    from perfcast.api.scaleout import fit_stream as fit_stream
    from perfcast.api.signatures import collect_rank_signatures as collect_rank_signatures
    from perfcast.api.signatures import collect_signature as collect_signature
    from perfcast.api.signatures import convolve as convolve
    from perfcast.api.signatures import extrapolate_signature as extrapolate_signature
    from perfcast.api.signatures import load_machine as load_machine
    from perfcast.api.signatures import merge_signatures as merge_signatures
    from perfcast.api.signatures import probe_machine as probe_machine
    from perfcast.api.signatures import render_pmac as render_pmac
    from perfcast.api.signatures import save_machine as save_machine
    from perfcast.api.source import analyze_source as analyze_source
    from perfcast.api.source import build_flags as build_flags
    from perfcast.api.source import instruction_mix as instruction_mix
    from perfcast.api.source import load_static_report as load_static_report
    from perfcast.api.tuning import code_graphs as code_graphs
    from perfcast.api.tuning import load_tuning_space as load_tuning_space
    from perfcast.api.tuning import similar_kernels as similar_kernels
    from perfcast.api.tuning import tune_kernel as tune_kernel
    from perfcast.core.errors import InputError as InputError
    from perfcast.core.errors import WorkError as WorkError
    from perfcast.core.experiment import Experiment as Experiment
    from perfcast.core.points import parse_point as parse_point
    from perfcast.display.tables import FORMATS as TABLE_FORMATS
    from perfcast.model.distributed import dask_client as dask_client
    from perfcast.model.distributed import scheduler_address as scheduler_address
    from perfcast.model.fitting.location import LOCATIONS as LOCATIONS
    from perfcast.model.modelset import ModelSet as ModelSet

# The result types, named here for annotations too (``perfcast.api.Diagnosis``); importing
# their modules at run time would put the analyses' dependencies into every command's
# start-up.
if TYPE_CHECKING:
    from perfcast.analyze.advice import Advice as Advice
    from perfcast.analyze.advice import AdvisedRound as AdvisedRound
    from perfcast.analyze.bugs import Expectation as Expectation
    from perfcast.analyze.compare import Comparison as Comparison
    from perfcast.analyze.convolve import Convolution as Convolution
    from perfcast.analyze.diagnosis import Diagnosis as Diagnosis
    from perfcast.analyze.extrapolate import Extrapolation as Extrapolation
    from perfcast.analyze.matching import Matches as Matches
    from perfcast.analyze.optimize import Constraint as Constraint
    from perfcast.analyze.optimize import Optimum as Optimum
    from perfcast.analyze.tuning import TuningResult as TuningResult
    from perfcast.analyze.tuning import TuningSpace as TuningSpace
    from perfcast.io.machine_profile import MachineProfile as MachineProfile
    from perfcast.io.online_store import ModelStore as ModelStore
    from perfcast.io.run_table import RunTable as RunTable
    from perfcast.measure.campaign import CampaignResult as CampaignResult
    from perfcast.measure.spec import Campaign as Campaign
    from perfcast.model.learned import LearnedModel as LearnedModel
    from perfcast.model.learned import RunPrediction as RunPrediction
    from perfcast.model.online import OnlineModeler as OnlineModeler
    from perfcast.static.features import InstrumentedSource as InstrumentedSource
    from perfcast.static.hcfg import CodeGraph as CodeGraph
    from perfcast.static.instruction_mix import InstructionMix as InstructionMix
    from perfcast.static.report import StaticReport as StaticReport


#: Public name -> (module, name there), imported on first use.
_ON_FIRST_USE: dict[str, tuple[str, str]] = {
    "ADVISED_ROUNDS": ("perfcast.api.advice", "ADVISED_ROUNDS"),
    "Experiment": ("perfcast.core.experiment", "Experiment"),
    "InputError": ("perfcast.core.errors", "InputError"),
    "LOCATIONS": ("perfcast.model.fitting.location", "LOCATIONS"),
    "ModelSet": ("perfcast.model.modelset", "ModelSet"),
    "STREAM_KERNELS": ("perfcast.api.scaleout", "STREAM_KERNELS"),
    "StreamedFit": ("perfcast.api.scaleout", "StreamedFit"),
    "TABLE_FORMATS": ("perfcast.display.tables", "FORMATS"),
    "WorkError": ("perfcast.core.errors", "WorkError"),
    "advice_stop_reasons": ("perfcast.api.advice", "advice_stop_reasons"),
    "advise": ("perfcast.api.advice", "advise"),
    "analyze_source": ("perfcast.api.source", "analyze_source"),
    "build_flags": ("perfcast.api.source", "build_flags"),
    "campaign_executors": ("perfcast.api.campaigns", "campaign_executors"),
    "campaign_metrics": ("perfcast.api.campaigns", "campaign_metrics"),
    "campaign_run_table": ("perfcast.api.campaigns", "campaign_run_table"),
    "code_graphs": ("perfcast.api.tuning", "code_graphs"),
    "collect_rank_signatures": ("perfcast.api.signatures", "collect_rank_signatures"),
    "collect_signature": ("perfcast.api.signatures", "collect_signature"),
    "compare": ("perfcast.api.analysis", "compare"),
    "convolve": ("perfcast.api.signatures", "convolve"),
    "dask_client": ("perfcast.model.distributed", "dask_client"),
    "describe_failure": ("perfcast.api.campaigns", "describe_failure"),
    "diagnose": ("perfcast.api.analysis", "diagnose"),
    "extrapolate_signature": ("perfcast.api.signatures", "extrapolate_signature"),
    "fit": ("perfcast.api.modeling", "fit"),
    "fit_stream": ("perfcast.api.scaleout", "fit_stream"),
    "formats": ("perfcast.api.experiments", "formats"),
    "import_profiles": ("perfcast.api.experiments", "import_profiles"),
    "inclusive_metric": ("perfcast.api.experiments", "inclusive_metric"),
    "instruction_mix": ("perfcast.api.source", "instruction_mix"),
    "instrument_features": ("perfcast.api.learned", "instrument_features"),
    "json_text": ("perfcast.api.reporting", "json_text"),
    "learn": ("perfcast.api.learned", "learn"),
    "learning_methods": ("perfcast.api.learned", "learning_methods"),
    "load": ("perfcast.api.experiments", "load"),
    "load_campaign": ("perfcast.api.campaigns", "load_campaign"),
    "load_feature_records": ("perfcast.api.learned", "load_feature_records"),
    "load_learned": ("perfcast.api.learned", "load_learned"),
    "load_machine": ("perfcast.api.signatures", "load_machine"),
    "load_run_table": ("perfcast.api.learned", "load_run_table"),
    "load_static_report": ("perfcast.api.source", "load_static_report"),
    "load_tuning_space": ("perfcast.api.tuning", "load_tuning_space"),
    "merge_signatures": ("perfcast.api.signatures", "merge_signatures"),
    "metric_modes": ("perfcast.api.campaigns", "metric_modes"),
    "modelers": ("perfcast.api.modeling", "modelers"),
    "online_modeler": ("perfcast.api.online", "online_modeler"),
    "open_store": ("perfcast.api.online", "open_store"),
    "optimize": ("perfcast.api.analysis", "optimize"),
    "output_format": ("perfcast.api.experiments", "output_format"),
    "parse_expectation": ("perfcast.api.analysis", "parse_expectation"),
    "parse_point": ("perfcast.core.points", "parse_point"),
    "parse_reductions": ("perfcast.api.learned", "parse_reductions"),
    "pending_runs": ("perfcast.api.campaigns", "pending_runs"),
    "predict": ("perfcast.api.modeling", "predict"),
    "predict_runs": ("perfcast.api.learned", "predict_runs"),
    "probe_machine": ("perfcast.api.signatures", "probe_machine"),
    "profile_options": ("perfcast.api.experiments", "profile_options"),
    "read_clusters": ("perfcast.api.online", "read_clusters"),
    "render": ("perfcast.api.reporting", "render"),
    "render_learned": ("perfcast.api.learned", "render_learned"),
    "render_online": ("perfcast.api.online", "render_online"),
    "render_pmac": ("perfcast.api.signatures", "render_pmac"),
    "render_warnings": ("perfcast.api.reporting", "render_warnings"),
    "replay_stream": ("perfcast.api.online", "replay_stream"),
    "report": ("perfcast.api.reporting", "report"),
    "run_advised": ("perfcast.api.advice", "run_advised"),
    "run_campaign": ("perfcast.api.campaigns", "run_campaign"),
    "run_prediction_warnings": ("perfcast.api.learned", "run_prediction_warnings"),
    "save": ("perfcast.api.experiments", "save"),
    "save_learned": ("perfcast.api.learned", "save_learned"),
    "save_machine": ("perfcast.api.signatures", "save_machine"),
    "save_run_table": ("perfcast.api.learned", "save_run_table"),
    "scheduler_address": ("perfcast.model.distributed", "scheduler_address"),
    "serve_spool": ("perfcast.api.online", "serve_spool"),
    "similar_kernels": ("perfcast.api.tuning", "similar_kernels"),
    "stored_models": ("perfcast.api.online", "stored_models"),
    "transfer_methods": ("perfcast.api.learned", "transfer_methods"),
    "tune_kernel": ("perfcast.api.tuning", "tune_kernel"),
}

__all__ = [
    "ADVISED_ROUNDS",
    "Experiment",
    "InputError",
    "LOCATIONS",
    "ModelSet",
    "STREAM_KERNELS",
    "StreamedFit",
    "TABLE_FORMATS",
    "WorkError",
    "advice_stop_reasons",
    "advise",
    "analyze_source",
    "build_flags",
    "campaign_executors",
    "campaign_metrics",
    "campaign_run_table",
    "code_graphs",
    "collect_rank_signatures",
    "collect_signature",
    "compare",
    "convolve",
    "dask_client",
    "describe_failure",
    "diagnose",
    "extrapolate_signature",
    "fit",
    "fit_stream",
    "formats",
    "import_profiles",
    "inclusive_metric",
    "instruction_mix",
    "instrument_features",
    "json_text",
    "learn",
    "learning_methods",
    "load",
    "load_campaign",
    "load_feature_records",
    "load_learned",
    "load_machine",
    "load_run_table",
    "load_static_report",
    "load_tuning_space",
    "merge_signatures",
    "metric_modes",
    "modelers",
    "online_modeler",
    "open_store",
    "optimize",
    "output_format",
    "parse_expectation",
    "parse_point",
    "parse_reductions",
    "pending_runs",
    "predict",
    "predict_runs",
    "probe_machine",
    "profile_options",
    "read_clusters",
    "render",
    "render_learned",
    "render_online",
    "render_pmac",
    "render_warnings",
    "replay_stream",
    "report",
    "run_advised",
    "run_campaign",
    "run_prediction_warnings",
    "save",
    "save_learned",
    "save_machine",
    "save_run_table",
    "scheduler_address",
    "serve_spool",
    "similar_kernels",
    "stored_models",
    "transfer_methods",
    "tune_kernel",
]


def __getattr__(name: str) -> Any:
    """The public names of :data:`_ON_FIRST_USE`, imported with their module when first asked
    for."""
    if name not in _ON_FIRST_USE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, attribute = _ON_FIRST_USE[name]
    value = getattr(importlib.import_module(module), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
