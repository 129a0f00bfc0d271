"""The Bayes-optimal classifier of the one-parameter set: prior, evidence, refusals."""

from fractions import Fraction as F

import numpy as np
import pytest

from benchmarks import bayes_limit, synthetic
from benchmarks.evaluation import score
from perfcast.core.function import Factor, Model, Term

POINTS = np.array(synthetic.PARAMETER_VALUES["p"])


def test_prior_area_is_the_square_when_the_share_condition_never_binds_and_half_on_the_diagonal():
    diagonal = synthetic.MIN_SHARE / (1.0 - synthetic.MIN_SHARE)  # offset 0: c1 >= c0
    areas = bayes_limit.prior_areas(np.array([1e6, diagonal]))
    np.testing.assert_allclose(areas, [16.0, 8.0], rtol=1e-6)


def one_kernel(block, constant, coefficient, noise, seed=0):
    truth = Model("k", "time", ("p",), constant, (Term(coefficient, (Factor("p", *block),)),))
    values = synthetic.measure(np.random.default_rng(seed), [truth], POINTS[:, None], noise)
    return truth, values[0]


def brute_force_log_evidence(values, block_index, noise, grid=1500):
    """The evidence integral on a fine (c0, c1) grid around the feasible region."""
    basis = bayes_limit.block_basis(POINTS)[block_index]
    design = np.column_stack([np.ones_like(POINTS), basis])
    (c0, c1), *_ = np.linalg.lstsq(design, values.mean(axis=1), rcond=None)
    c0s = c0 + np.linspace(-1, 1, grid) * 4 * noise * values.mean()
    c1s = c1 * (1 + np.linspace(-1, 1, grid) * 8 * noise)
    constant, slope = np.meshgrid(c0s, c1s, indexing="ij")
    fitted = constant[..., None] + slope[..., None] * basis
    inside = np.all(np.abs(values[None, None] / fitted[..., None] - 1) <= noise, axis=(2, 3))
    inside &= (constant > 0.01) & (slope > 0.01)
    inside &= slope * basis[-1] * (1 - synthetic.MIN_SHARE) >= synthetic.MIN_SHARE * constant
    assert not inside[[0, -1]].any() and not inside[:, [0, -1]].any(), "grid too small"
    density = np.prod((2 * noise * fitted) ** -values.shape[1], axis=2)
    density /= constant * slope * np.log(10.0) ** 2
    area = bayes_limit.prior_areas(basis[-1:])[0]
    cell = (c0s[1] - c0s[0]) * (c1s[1] - c1s[0])
    return np.log((density * inside).sum() * cell / area)


def test_monte_carlo_evidence_matches_a_brute_force_integral_for_close_competitors():
    noise = 0.05
    truth_block = (F(1, 2), 0)
    _, values = one_kernel(truth_block, 2.0, 3.0, noise, seed=3)
    basis = bayes_limit.block_basis(POINTS)
    areas = bayes_limit.prior_areas(basis[:, -1])
    rng = np.random.default_rng(0)
    evidence = bayes_limit.log_evidence(values, basis, noise, areas, rng, samples=400_000)
    feasible = np.flatnonzero(np.isfinite(evidence))
    assert synthetic.BUILDING_BLOCKS.index(truth_block) in feasible
    assert len(feasible) >= 2  # p^(1/3)*log2(p) competes with the true p^(1/2)
    for index in feasible:
        expected = brute_force_log_evidence(values, index, noise)
        assert evidence[index] == pytest.approx(expected, abs=0.02)


def test_true_block_wins_on_nearly_noise_free_data_and_impossible_data_has_no_evidence():
    basis = bayes_limit.block_basis(POINTS)
    areas = bayes_limit.prior_areas(basis[:, -1])
    rng = np.random.default_rng(0)
    for block in [(F(0), 2), (F(4, 5), 0), (F(5, 2), 1)]:
        _, values = one_kernel(block, 5.0, 0.5, 1e-4)
        evidence = bayes_limit.log_evidence(values, basis, 1e-4, areas, rng)
        assert synthetic.BUILDING_BLOCKS[int(np.argmax(evidence))] == block
    # repetitions 30 % apart cannot come from noise of +-1 %
    _, values = one_kernel((F(1), 0), 5.0, 0.5, 0.15)
    assert np.all(bayes_limit.log_evidence(values, basis, 0.01, areas, rng) == -np.inf)


def test_bayes_fits_score_every_kernel_of_a_low_noise_set():
    functions = synthetic.draw_functions(synthetic.function_rng(7, 1), 1, 42)
    kernel_set = synthetic.kernel_sets(functions, "1 parameter", [0.001], 7, 1)[0]
    fits = bayes_limit.bayes_fits(kernel_set)
    result = score(kernel_set.truths, fits, synthetic.extrapolation_point(("p",)))
    assert result.missing == 0
    assert result.lead_order >= 40 / 42


def test_bayes_fits_refuse_sets_the_posterior_does_not_describe():
    functions = synthetic.draw_functions(synthetic.function_rng(7, 2), 2, 3)
    two_parameters = synthetic.kernel_sets(functions, "2 parameters", [0.01], 7, 2)[0]
    with pytest.raises(ValueError, match="one-parameter"):
        bayes_limit.bayes_fits(two_parameters)
    one = synthetic.draw_functions(synthetic.function_rng(7, 1), 1, 3)
    noise_free = synthetic.kernel_sets(one, "1 parameter", [0.0], 7, 1)[0]
    with pytest.raises(ValueError, match="noise > 0"):
        bayes_limit.bayes_fits(noise_free)


def test_noise_levels_must_be_the_accuracy_benchmarks():
    assert bayes_limit.parse_args(["--noise", "0.05,0.2"]).noise == [0.05, 0.2]
    for bad in ["0", "0.03"]:
        with pytest.raises(SystemExit):
            bayes_limit.parse_args(["--noise", bad])


def test_clipping_the_unit_square_by_a_diagonal_leaves_a_triangle_sampled_uniformly():
    square = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    triangle = bayes_limit.clip(square, np.array([1.0, 1.0]), 1.0)
    assert len(triangle) == 3
    points, area = bayes_limit.sample_polygon(triangle, 100_000, np.random.default_rng(0))
    assert area == pytest.approx(0.5)
    assert np.all(points.sum(axis=1) <= 1.0 + 1e-12) and np.all(points >= 0.0)
    np.testing.assert_allclose(points.mean(axis=0), [1 / 3, 1 / 3], atol=5e-3)
    assert len(bayes_limit.clip(square, np.array([1.0, 1.0]), -1.0)) == 0
