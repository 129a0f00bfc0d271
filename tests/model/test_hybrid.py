"""Hybrid modeling on a real clang analysis of a small C program."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from perfcast.cli import main
from perfcast.io import write_experiment
from perfcast.model import fit
from perfcast.model.hybrid import HybridModeler
from tests.conftest import synthetic_experiment

pytest.importorskip("clang.cindex")

PROGRAM = Path(__file__).parent / "programs" / "hybrid.c"
GRID = {"n": [16, 32, 64, 128, 256], "m": [10, 20, 40, 80, 160]}
TRUTH = {
    "main->stencil": lambda n, m: 2e-6 * n**2 + 3e-5 * n + 0 * m,
    "main->sweep": lambda n, m: 0.01 + 2e-4 * m + 0 * n,
    "main->lookup": lambda n, m: 1e-3 * np.sqrt(n) + 0 * m,
    "MPI_Init": lambda n, m: 0.05 + 1e-4 * np.log2(n) * m,
}


@pytest.fixture(scope="module")
def report():
    from perfcast.static import analyze

    return analyze([PROGRAM], ["n", "m"])


@pytest.fixture
def experiment():
    return synthetic_experiment(TRUTH, GRID, noise=0.03, seed=11)


def test_sources_and_hypothesis_space(report, experiment):
    modeler = HybridModeler(report).fit(experiment)
    assert modeler.provenance_ == {
        "main->stencil": "static count",
        "main->sweep": "static count",
        "main->lookup": "reach: n",
        "MPI_Init": "empirical",
    }
    assert modeler.predictors_["main->stencil"] == (2, 84)  # n and n^2 instead of 2 x 42 blocks
    assert modeler.predictors_["main->sweep"] == (1, 84)
    assert modeler.predictors_["main->lookup"] == (42, 84)
    assert modeler.predictors_["MPI_Init"] == (84, 84)


def test_models_follow_the_static_terms(report, experiment):
    models = {m.kernel: m for m in HybridModeler(report).fit(experiment).models_}
    assert models["main->stencil"].lead_order("n") == (2, 0)
    assert models["main->stencil"].lead_order("m") == (0, 0)
    assert models["main->sweep"].lead_order("m") == (1, 0)
    assert models["main->sweep"].lead_order("n") == (0, 0)
    assert models["main->lookup"].lead_order("m") == (0, 0)
    assert models["main->lookup"].parameters == ("n", "m")
    big = {"n": [2048.0], "m": [1280.0]}
    truth = TRUTH["main->stencil"](2048.0, 1280.0)
    assert models["main->stencil"].evaluate(big)[0] == pytest.approx(truth, rel=0.05)


def test_cross_validated_error_no_worse_than_empirical(report, experiment):
    hybrid = {m.kernel: m for m in HybridModeler(report).fit(experiment).models_}
    empirical = {m.kernel: m for m in fit(experiment)}
    for kernel in ("main->stencil", "main->sweep"):
        assert hybrid[kernel].quality.cv_smape <= empirical[kernel].quality.cv_smape * 1.05


def test_command_line(experiment, tmp_path, capsys):
    path = tmp_path / "exp.csv"
    write_experiment(experiment, path)
    assert main(["model", str(path), "--static", str(PROGRAM), "--param", "n", "--param", "m"]) == 0
    captured = capsys.readouterr()
    assert "main->stencil" in captured.out
    assert "2 static count, 1 reach, 1 empirical" in captured.err


def test_unbalanced_static_flags_are_one_usage_error(experiment, tmp_path, capsys):
    path = tmp_path / "exp.csv"
    write_experiment(experiment, path)
    argv = ["model", str(path), "--static", str(PROGRAM), "--param", "n", "--param", "m"]
    assert main([*argv, "--static-flags", "'-DN=4"]) == 2
    err = capsys.readouterr().err
    assert "--static-flags" in err and "quotation" in err and "Traceback" not in err


def test_count_model_maps_parameters_and_substitutes_fixed_values():
    import sympy

    from perfcast.model.hybrid import count_model
    from perfcast.static.report import StaticKernel

    n, size, iterations = sympy.symbols("n size iterations")
    kernel = StaticKernel(
        name="jacobi_compute:loop@40", kind="loop", file="jacobi.c", line=40, end_line=42,
        depth=2, function="jacobi_compute", parameters=("n", "size", "iterations"),
        count=iterations * n**2 / size, undef_reason=None,
    )  # fmt: skip
    model = count_model(kernel, {"n": "n", "size": "p"}, ("p", "n"), {"iterations": 4})
    (term,) = model.terms
    assert term.coefficient == pytest.approx(4.0)
    assert {f.parameter: f.order for f in term.factors} == {"n": (2, 0), "p": (-1, 0)}
    assert count_model(kernel, {"n": "n", "size": "p"}, ("p", "n")) is None  # iterations unknown


HEAP_PROGRAM = Path(__file__).parent / "programs" / "hybrid_heap.c"
HEAP_TRUTH = {
    "main->relax": lambda n, m: 1e-3 + 1e-6 * n * m,
    "main->halve": lambda n, m: 2e-6 * n + 0 * m,
    "main->scale": lambda n, m: 1e-5 * n + 0 * m,
}


@pytest.fixture(scope="module")
def heap_report():
    from perfcast.static import analyze

    return analyze([HEAP_PROGRAM], ["n"])


def test_unresolved_static_information_falls_back_to_the_empirical_model(heap_report):
    # relax and halve loop to bounds held in heap struct fields: no count, no parameter seen
    # to reach them. Before, they came out as constants with 76 % and 93 % SMAPE.
    experiment = synthetic_experiment(HEAP_TRUTH, GRID, noise=0.03, seed=3)
    modeler = HybridModeler(heap_report).fit(experiment)
    assert modeler.provenance_ == {
        "main->relax": "empirical",
        "main->halve": "empirical",
        "main->scale": "static count",
    }
    hybrid = {m.kernel: m for m in modeler.models_}
    empirical = {m.kernel: m for m in fit(experiment)}
    reason = (
        "its count is undefined (the struct member rows is not a parameter) and no parameter "
        "is seen to reach it"
    )
    for kernel in ("main->relax", "main->halve"):
        assert hybrid[kernel] == empirical[kernel]
        assert f"hybrid: kernel '{kernel}' modeled empirically: {reason}" in modeler.notes()
    assert hybrid["main->relax"].lead_order("m") == (1, 0)


def test_static_terms_that_fit_clearly_worse_give_way_to_the_empirical_model(report):
    # The measured sweep grows with n too, which its static count (m) cannot express.
    truth = {**TRUTH, "main->sweep": lambda n, m: 0.01 + 2e-6 * m * n}
    experiment = synthetic_experiment(truth, GRID, noise=0.03, seed=11)
    modeler = HybridModeler(report).fit(experiment)
    assert modeler.provenance_["main->sweep"] == "empirical"
    assert modeler.provenance_["main->stencil"] == "static count"  # still right: kept
    sweep = next(m for m in modeler.models_ if m.kernel == "main->sweep")
    assert sweep.lead_order("n") == (1, 0) and sweep.lead_order("m") == (1, 0)
    (note,) = [n for n in modeler.notes() if "'main->sweep'" in n]
    assert note.startswith("hybrid: kernel 'main->sweep' modeled empirically: the static terms")


#: Configurations 4x to 16x beyond the measured grid, where a model's form decides its error.
FAR = {
    "n": np.array([1024.0, 4096.0, 4096.0, 2048.0]),
    "m": np.array([640.0, 2560.0, 160.0, 640.0]),
}


@pytest.mark.parametrize("noise", [0.0, 0.03, 0.1, 0.3])
def test_hybrid_predicts_no_worse_than_empirical_on_every_example_kernel(
    report, heap_report, noise
):
    """The error that matters, the prediction's distance from the truth beyond the measured
    range, of the hybrid model against the empirical one, on every kernel of both example
    programs, averaged over 5 seeds per noise level. A kernel that only some parameters reach
    is fitted on data averaged over the others, so where both searches pick the same form
    their coefficients differ by noise: 1 % of the error is allowed for that, no more."""
    for program_report, truth in ((report, TRUTH), (heap_report, HEAP_TRUTH)):
        hybrid_error = dict.fromkeys(truth, 0.0)
        empirical_error = dict.fromkeys(truth, 0.0)
        for seed in range(5):
            experiment = synthetic_experiment(truth, GRID, noise=noise, seed=seed)
            modeler = HybridModeler(program_report).fit(experiment)
            empirical = {m.kernel: m for m in fit(experiment, location=modeler.location_)}
            for model in modeler.models_:
                exact = truth[model.kernel](FAR["n"], FAR["m"])

                def error(m, exact=exact):
                    return float(np.mean(np.abs(m.evaluate(FAR) - exact) / exact))

                hybrid_error[model.kernel] += error(model) / 5
                empirical_error[model.kernel] += error(empirical[model.kernel]) / 5
        for kernel, value in hybrid_error.items():
            assert value <= 1.01 * empirical_error[kernel] + 1e-12, (kernel, noise)


@pytest.mark.parametrize("noise", [0.0, 0.03, 0.1, 0.3])
def test_hybrid_fits_the_measurements_within_the_fallback_margin(report, heap_report, noise):
    """In-sample SMAPE of the hybrid model against the empirical one, 5 seeds per noise level.
    Exact static terms may fit noise slightly worse than the larger empirical search (never by
    more than the fallback's margin, which this asserts); the kernels whose static
    information was unresolved fit exactly as well."""
    from perfcast.model.hybrid import DEGRADED_SMAPE_POINTS, DEGRADED_SMAPE_RATIO

    for program_report, truth in ((report, TRUTH), (heap_report, HEAP_TRUTH)):
        for seed in range(5):
            experiment = synthetic_experiment(truth, GRID, noise=noise, seed=seed)
            modeler = HybridModeler(program_report).fit(experiment)
            empirical = {m.kernel: m.quality.smape for m in fit(experiment)}
            for model in modeler.models_:
                best = empirical[model.kernel]
                bound = DEGRADED_SMAPE_RATIO * best + DEGRADED_SMAPE_POINTS
                assert model.quality.smape <= bound, (model.kernel, seed)
                if modeler.provenance_[model.kernel] == "empirical":
                    assert model.quality.smape == best
