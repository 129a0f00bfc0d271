"""The perfcast runner: the long table it hands to ``fit`` and how it reads the models back."""

import numpy as np
import pytest

import perfcast.model
from benchmarks import synthetic
from benchmarks.evaluation import score
from benchmarks.tools import ToolUnavailable, perfcast_runner


def kernel_set():
    functions = synthetic.draw_functions(synthetic.function_rng(4, 2), 2, 30)
    return synthetic.kernel_sets(functions, "2 parameters", [0.05], 4, 2)[0]


def test_perfcast_runner_passes_every_kernel_and_scores_returned_models(monkeypatch):
    data = kernel_set()
    truths = {m.kernel: m for m in data.truths}
    calls = []

    def oracle_fit(experiment, modeler, **options):
        calls.append((modeler, options))
        (series,) = experiment.series("time")
        np.testing.assert_array_equal(series.values, data.values)
        return [truths[kernel] for kernel in series.kernels]

    monkeypatch.setattr(perfcast.model, "fit", oracle_fit, raising=False)
    run = perfcast_runner("sparse", {"alpha": 0.5})(data)
    assert calls == [("sparse", {"alpha": 0.5})]
    result = score(data.truths, run.fits, synthetic.extrapolation_point(data.parameters))
    assert (result.lead_order, result.structure, result.median_error) == (1.0, 1.0, 0.0)
    assert run.seconds >= 0


def test_perfcast_runner_without_modeler_says_so(monkeypatch):
    monkeypatch.delattr(perfcast.model, "fit", raising=False)
    with pytest.raises(ToolUnavailable, match="perfcast.model.fit is not available"):
        perfcast_runner()(kernel_set())
