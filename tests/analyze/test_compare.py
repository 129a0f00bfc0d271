import numpy as np
import pytest
from scipy import stats

from perfcast.analyze.compare import (
    compare_experiments,
    fisher,
    holm,
    model_crossings,
    welch_one_sided,
)
from perfcast.core.errors import InputError
from tests.analyze.synthetic import experiment, model

P = [2, 4, 8, 16, 32, 64]
TRUTH = {
    "main->compute": lambda p: 100.0 / p,
    "main->update": lambda p: 40.0 / p + 0.05,
    "main->halo": lambda p: 0.2 + 0.01 * np.sqrt(p),
    "main->MPI_Allreduce": lambda p: 0.02 * np.log2(p),
    "main->io": lambda p: 0.5 + 0 * p,
}


def regressed(factor=1.15, from_p=16, kernel="main->halo"):
    truth = dict(TRUTH)
    base = truth[kernel]
    truth[kernel] = lambda p: base(p) * np.where(p >= from_p, factor, 1.0)
    return truth


def test_welch_matches_scipy():
    rng = np.random.default_rng(0)
    a, b = rng.normal(1.0, 0.1, 5), rng.normal(1.1, 0.2, 7)
    ours = welch_one_sided(
        np.array([a.mean()]),
        np.array([a.var(ddof=1)]),
        np.array([5]),
        np.array([b.mean()]),
        np.array([b.var(ddof=1)]),
        np.array([7]),
    )
    expected = stats.ttest_ind(b, a, equal_var=False, alternative="greater").pvalue
    assert ours[0] == pytest.approx(expected, rel=1e-10)


def test_holm_and_fisher_by_hand():
    assert holm([0.01, 0.04, 0.03, 0.005]).tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert np.isnan(holm([np.nan, 0.01])[0]) and holm([np.nan, 0.01])[1] == pytest.approx(0.01)
    p = [0.2, 0.01, 0.5]
    assert fisher(p) == pytest.approx(stats.combine_pvalues(p, method="fisher").pvalue)


def test_injected_regression_is_found_with_its_onset():
    a = experiment(TRUTH, {"p": P}, repetitions=5, noise=0.04, seed=1)
    b = experiment(regressed(), {"p": P}, repetitions=5, noise=0.04, seed=2)
    result = compare_experiments(a, b)
    assert [k.kernel for k in result.regressions] == ["main->halo"]
    assert result.improvements == []
    halo = result.regressions[0]
    assert halo.p_slower < 0.05
    assert halo.onset == {"p": 16.0}
    assert 1.10 < halo.max_ratio < 1.22
    assert "main->halo got slower" in result.summary()[0]
    assert "from p=16 on" in result.summary()[0]


def test_two_noisy_repeats_show_no_regression():
    a = experiment(TRUTH, {"p": P}, repetitions=5, noise=0.05, seed=10)
    b = experiment(TRUTH, {"p": P}, repetitions=5, noise=0.05, seed=20)
    result = compare_experiments(a, b)
    assert result.regressions == [] and result.improvements == []
    assert result.summary()[0].startswith("no significant change")


@pytest.mark.slow
def test_false_positive_rate_is_controlled_over_many_repeats():
    false = 0
    for seed in range(20):
        a = experiment(TRUTH, {"p": P}, repetitions=4, noise=0.05, seed=100 + seed)
        b = experiment(TRUTH, {"p": P}, repetitions=4, noise=0.05, seed=200 + seed)
        result = compare_experiments(a, b)
        false += bool(result.regressions or result.improvements)
    assert false <= 3  # family-wise alpha 0.05: about 1 in 20 expected, P(> 3) < 2 %


def test_an_improvement_is_reported_as_such():
    a = experiment(TRUTH, {"p": P}, repetitions=5, noise=0.03, seed=1)
    b = experiment(regressed(0.8, 2, "main->compute"), {"p": P}, repetitions=5, noise=0.03, seed=2)
    result = compare_experiments(a, b)
    assert [k.kernel for k in result.improvements] == ["main->compute"]
    assert result.regressions == []


def test_without_repetitions_nothing_is_tested():
    a = experiment(TRUTH, {"p": P}, repetitions=1, noise=0.03, seed=1)
    b = experiment(regressed(), {"p": P}, repetitions=1, noise=0.03, seed=2)
    result = compare_experiments(a, b)
    assert {k.verdict for k in result.kernels} == {"untested"}


def test_kernels_present_in_one_experiment_only_are_listed():
    a = experiment(TRUTH, {"p": P}, repetitions=3, seed=1)
    truth = dict(TRUTH)
    truth["main->new"] = lambda p: 1.0 + 0 * p
    del truth["main->io"]
    result = compare_experiments(a, experiment(truth, {"p": P}, repetitions=3, seed=2))
    assert (result.only_in_a, result.only_in_b) == (["main->io"], ["main->new"])


def test_model_comparison_reports_slopes_and_crossings():
    a = experiment({"k": lambda n: 1.0 + 2.0 * n}, {"n": [1, 2, 4, 8]}, repetitions=3, seed=1)
    b = experiment({"k": lambda n: 5.0 + 1.0 * n}, {"n": [1, 2, 4, 8]}, repetitions=3, seed=2)
    ma = model("k", ["n"], 1.0, (2.0, {"n": (1, 0)}))
    mb = model("k", ["n"], 5.0, (1.0, {"n": (1, 0)}))
    result = compare_experiments(a, b, models_a=[ma], models_b=[mb])
    models = result.kernels[0].models
    assert models["linear"]["n"] == {"intercept": [1.0, 5.0], "slope": [2.0, 1.0]}
    assert models["lead"]["n"] == ["n", "n"]
    (crossing,) = models["crossings"]
    assert crossing["at"]["n"] == pytest.approx(4.0)  # 1 + 2n = 5 + n
    assert crossing["b_slower_after"] is False
    assert model_crossings(ma, ma, {"n": 1.0}, {"n": 8.0}) == []


def test_different_parameters_are_an_input_error():
    a = experiment({"k": lambda p: 1.0 / p}, {"p": P}, 2)
    b = experiment({"k": lambda n: 1.0 / n}, {"n": P}, 2)
    with pytest.raises(InputError, match="different parameters"):
        compare_experiments(a, b)
