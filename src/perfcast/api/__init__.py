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

from typing import TYPE_CHECKING

from perfcast.api.advice import (
    ADVISED_ROUNDS,
    advice_stop_reasons,
    advise,
    run_advised,
)
from perfcast.api.analysis import (
    compare,
    diagnose,
    optimize,
    parse_expectation,
)
from perfcast.api.campaigns import (
    campaign_executors,
    campaign_metrics,
    campaign_run_table,
    describe_failure,
    load_campaign,
    metric_modes,
    pending_runs,
    run_campaign,
)
from perfcast.api.experiments import (
    formats,
    import_profiles,
    inclusive_metric,
    load,
    output_format,
    profile_options,
    save,
)
from perfcast.api.learned import (
    instrument_features,
    learn,
    learning_methods,
    load_feature_records,
    load_learned,
    load_run_table,
    parse_reductions,
    predict_runs,
    render_learned,
    run_prediction_warnings,
    save_learned,
    save_run_table,
    transfer_methods,
)
from perfcast.api.modeling import (
    fit,
    modelers,
    predict,
)
from perfcast.api.online import (
    online_modeler,
    open_store,
    read_clusters,
    render_online,
    replay_stream,
    serve_spool,
    stored_models,
)
from perfcast.api.reporting import (
    json_text,
    render,
    render_warnings,
    report,
)
from perfcast.api.scaleout import (
    STREAM_KERNELS,
    StreamedFit,
    fit_stream,
)
from perfcast.api.signatures import (
    collect_rank_signatures,
    collect_signature,
    convolve,
    extrapolate_signature,
    load_machine,
    merge_signatures,
    probe_machine,
    render_pmac,
    save_machine,
)
from perfcast.api.source import (
    analyze_source,
    build_flags,
    instruction_mix,
    load_static_report,
)
from perfcast.api.tuning import (
    code_graphs,
    load_tuning_space,
    similar_kernels,
    tune_kernel,
)
from perfcast.core.errors import InputError, WorkError
from perfcast.core.experiment import Experiment
from perfcast.core.points import parse_point
from perfcast.display.tables import FORMATS as TABLE_FORMATS
from perfcast.model.distributed import dask_client, scheduler_address
from perfcast.model.fitting.location import LOCATIONS
from perfcast.model.modelset import ModelSet

# The result types, named here for annotations (``perfcast.api.Diagnosis``); importing
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
    from perfcast.analyze.optimize import Constraint as Constraint
    from perfcast.analyze.optimize import Optimum as Optimum
    from perfcast.io.machine_profile import MachineProfile as MachineProfile
    from perfcast.io.online_store import ModelStore as ModelStore
    from perfcast.io.run_table import RunTable as RunTable
    from perfcast.measure.campaign import CampaignResult as CampaignResult
    from perfcast.measure.spec import Campaign as Campaign
    from perfcast.model.learned import LearnedModel as LearnedModel
    from perfcast.model.learned import RunPrediction as RunPrediction
    from perfcast.model.online import OnlineModeler as OnlineModeler
    from perfcast.static.features import InstrumentedSource as InstrumentedSource
    from perfcast.static.instruction_mix import InstructionMix as InstructionMix
    from perfcast.static.report import StaticReport as StaticReport

if TYPE_CHECKING:  # Meliora (issue 18)
    from perfcast.analyze.matching import Matches as Matches
    from perfcast.analyze.tuning import TuningResult as TuningResult
    from perfcast.analyze.tuning import TuningSpace as TuningSpace
    from perfcast.static.hcfg import CodeGraph as CodeGraph


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
