import itertools

import numpy as np
import pytest
from scipy import stats

from perfcast.analyze.hotspots import (
    chi_square_difference,
    kendall_distance,
    kendall_tau,
    profile_shift,
    total_variation,
)
from perfcast.core.errors import InputError
from tests.analyze.synthetic import experiment, model


def test_chi_square_reproduces_the_papers_table_1():
    result = chi_square_difference([174, 10, 8, 8], [328, 32, 20, 20])
    assert result.statistic == pytest.approx(2.684, abs=5e-4)
    assert result.p_value == pytest.approx(0.443, abs=5e-4)
    assert result.dof == 3
    assert result.difference == pytest.approx(1 - result.p_value)


@pytest.mark.parametrize("seed", range(5))
def test_chi_square_agrees_with_scipy(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.uniform(1, 100, 12), rng.uniform(1, 100, 12)
    statistic, p, dof, _ = stats.chi2_contingency(np.array([a, b]), correction=False)
    ours = chi_square_difference(a, b)
    assert ours.statistic == pytest.approx(statistic, rel=1e-10)
    assert ours.p_value == pytest.approx(p, rel=1e-8)
    assert ours.dof == dof


def test_chi_square_skips_kernels_absent_from_both_profiles():
    with_zero = chi_square_difference([5, 0, 3], [4, 0, 6])
    without = chi_square_difference([5, 3], [4, 6])
    assert with_zero == without


@pytest.mark.parametrize("seed", range(5))
def test_kendall_tau_agrees_with_scipy_without_ties(seed):
    rng = np.random.default_rng(seed)
    a, b = rng.exponential(size=40), rng.exponential(size=40)
    assert kendall_tau(a, b) == pytest.approx(stats.kendalltau(a, b).statistic, rel=1e-12)


def test_kendall_tau_b_agrees_with_scipy_with_ties():
    rng = np.random.default_rng(7)
    a, b = rng.integers(0, 5, 50).astype(float), rng.integers(0, 5, 50).astype(float)
    scipy_tau = stats.kendalltau(a, b, variant="b").statistic
    assert kendall_tau(a, b, variant="b") == pytest.approx(scipy_tau, rel=1e-12)


def test_kendall_tau_a_counts_pairs_as_the_paper_defines():
    a = [5.0, 3.0, 3.0, 1.0, 0.5]
    b = [4.0, 4.0, 2.0, 3.0, 0.1]
    concordant = discordant = 0
    for i, j in itertools.combinations(range(5), 2):
        product = (a[i] - a[j]) * (b[i] - b[j])
        concordant += product > 0
        discordant += product < 0
    assert kendall_tau(a, b) == pytest.approx((concordant - discordant) / 10)
    assert kendall_distance(a, b) == pytest.approx((1 - (concordant - discordant) / 10) / 2)
    # reversed: the pair tied in a and the pair tied in the reversal count as neither -> 8 of 10
    assert kendall_tau(a, a[::-1]) == pytest.approx(-8 / 10)


def test_kendall_extremes_and_total_variation():
    a = [4.0, 3.0, 2.0, 1.0]
    assert kendall_distance(a, a) == 0.0
    tied = [2.0, 2.0, 1.0, 1.0]
    assert kendall_tau(tied, tied) == 1.0  # ties kept in both profiles are unchanged orderings
    # 3 concordant pairs; the 3 pairs tied in just one profile count as neither
    assert kendall_tau(tied, [2.0, 1.0, 1.0, 0.5]) == pytest.approx(3 / 6)
    assert kendall_distance(a, a[::-1]) == 1.0
    assert total_variation(a, [8.0, 6.0, 4.0, 2.0]) == 0.0
    assert total_variation([1.0, 0.0], [0.0, 1.0]) == 1.0
    with pytest.raises(InputError, match="same kernels"):
        kendall_tau([1.0, 2.0], [1.0])


def test_profile_shift_finds_where_the_order_flips():
    kernels = {"A": lambda p: 12.0 / p, "B": lambda p: 1.0 + 0 * p, "C": lambda p: 0.5 + 0 * p}
    exp = experiment(kernels, {"p": [1, 2, 4, 8, 16, 32]}, repetitions=2)
    shift = profile_shift(exp, "p", "time")
    most = shift.most_changed()
    assert (most["kendall"].start, most["kendall"].end) == (8, 16)
    assert most["kendall"].kendall_tau == pytest.approx(1 / 3)
    assert [s.origin for s in shift.steps] == ["measurements"] * 5


def test_profile_shift_extends_with_models_to_the_target():
    kernels = {"A": lambda p: 12.0 / p, "B": lambda p: 1.0 + 0 * p}
    exp = experiment(kernels, {"p": [1, 2, 4]}, repetitions=1)
    models = [model("A", ["p"], 0.0, (12.0, {"p": (-1, 0)})), model("B", ["p"], 1.0)]
    shift = profile_shift(exp, "p", "time", models, target=32)
    assert shift.at.tolist() == [1, 2, 4, 8, 16, 32]
    assert shift.origins[3:] == ["models"] * 3
    assert shift.values[-1].tolist() == pytest.approx([12 / 32, 1.0])
    assert shift.to_dict()["most_changed"]["kendall"] == {"start": 8.0, "end": 16.0}
