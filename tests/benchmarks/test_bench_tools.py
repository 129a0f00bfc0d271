"""The perfcast runner: the long table it hands to ``fit`` and how it reads the models back."""

import numpy as np
import pytest

import perfcast.model
from benchmarks import accuracy, synthetic
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
        (series,) = experiment.series("time")
        calls.append((modeler, options, series.kernels))
        count = len(series.kernels)
        np.testing.assert_array_equal(series.values, data.values[:count])
        return [truths[kernel] for kernel in series.kernels]

    monkeypatch.setattr(perfcast.model, "fit", oracle_fit, raising=False)
    run = perfcast_runner("sparse", {"alpha": 0.5})(data)
    # an untimed warm-up on the first two kernels, then all of them
    assert calls == [
        ("sparse", {"alpha": 0.5}, data.kernels[:2]),
        ("sparse", {"alpha": 0.5}, data.kernels),
    ]
    result = score(data.truths, run.fits, synthetic.extrapolation_point(data.parameters))
    assert (result.lead_order, result.structure, result.median_error) == (1.0, 1.0, 0.0)
    assert run.seconds >= 0


def test_perfcast_runner_without_modeler_says_so(monkeypatch):
    monkeypatch.delattr(perfcast.model, "fit", raising=False)
    with pytest.raises(ToolUnavailable, match="perfcast.model.fit is not available"):
        perfcast_runner()(kernel_set())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--parameters", "4"], "--parameters takes 1, 2, 3, strong and strong2"),
        (["--noise", "0.05,x"], "--noise takes comma-separated numbers"),
        (["--noise", "1.5"], "--noise levels must lie in"),
        (["--tools", "perfcast,gprof"], "unknown tool(s): gprof"),
    ],
)
def test_accuracy_rejects_bad_arguments(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_info:
        accuracy.parse_args(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_accuracy_without_perfcast_modeler_exits_2(monkeypatch, capsys):
    monkeypatch.delattr(perfcast.model, "fit", raising=False)
    status = accuracy.main(["--quick", "--tools", "perfcast", "--parameters", "1", "--noise", "0"])
    assert status == 2
    assert "perfcast.model.fit is not available" in capsys.readouterr().err


def test_accuracy_prints_table_and_reproducing_command(capsys):
    argv = ["--quick", "--tools", "oracle", "--parameters", "2,strong", "--noise", "0.05"]
    assert accuracy.main(argv) == 0
    out = capsys.readouterr().out
    assert "Command: `python -m benchmarks.accuracy --quick --tools oracle" in out
    assert "| 2 parameters | ±5 % | 40 | 100.0 % | 100.0 % | 0 % | 0 % |" in out
    assert "| strong scaling | ±5 % | 20 | 100.0 % | 100.0 % | 0 % | 0 % |" in out
