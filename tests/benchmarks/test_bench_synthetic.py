"""The synthetic kernels: building blocks, shares, noise, reproducibility."""

from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest

from benchmarks import synthetic
from perfcast.core.experiment import Experiment


def test_building_blocks_are_extrap_42_distinct_growing_blocks():
    blocks = synthetic.BUILDING_BLOCKS
    assert len(blocks) == 42
    assert len(set(blocks)) == 42
    assert blocks[0] == (F(0), 1)
    assert blocks[-1] == (F(3), 1)
    assert (F(4, 5), 0) in blocks and (F(11, 4), 0) in blocks
    assert all(e >= 0 and j in (0, 1, 2) and (e, j) != (0, 0) for e, j in blocks)


@pytest.mark.parametrize("components", [2, 3, 4])
def test_component_shares_are_at_least_five_percent_and_sum_to_one(components):
    rng = np.random.default_rng(0)
    shares = np.array([synthetic.component_shares(rng, components) for _ in range(2000)])
    assert shares.min() >= 0.05
    np.testing.assert_allclose(shares.sum(axis=1), 1.0)
    # the Dirichlet part spreads the shares: some component takes most of the total
    assert shares.max() > 0.8


def _component_values(model, point):
    columns = {name: point[:, i] for i, name in enumerate(model.parameters)}
    terms = [t.coefficient * t.basis(columns)[0] for t in model.terms]
    return np.array([model.constant, *terms])


def _draw(n_parameters, anchor, coefficients):
    if n_parameters in ("strong", "strong2"):
        rng = synthetic.function_rng(3, 4)
        return synthetic.draw_strong_scaling(
            rng, 10, anchor, coefficients, n_parameters == "strong2"
        )
    rng = synthetic.function_rng(3, n_parameters)
    return synthetic.draw_functions(rng, n_parameters, 200, anchor, coefficients)


@pytest.mark.parametrize("anchor", ["largest", "smallest"])
@pytest.mark.parametrize("n_parameters", [1, 2, 3, "strong", "strong2"])
def test_shares_draw_gives_every_component_five_percent_at_anchor(n_parameters, anchor):
    shares_at_other_end = []
    for model in _draw(n_parameters, anchor, "shares"):
        grid = synthetic.grid(model.parameters)
        point, other = (grid[-1:], grid[:1]) if anchor == "largest" else (grid[:1], grid[-1:])
        parts = _component_values(model, point)
        total = model.evaluate(point)[0]
        np.testing.assert_allclose(parts.sum(), total)
        assert (parts / total).min() >= 0.05 - 1e-12
        assert 1e-3 * 0.05 <= total <= 1e3
        shares_at_other_end.append((_component_values(model, other) / model.evaluate(other)).min())
    # the guarantee holds only at the anchor: at the other end some component falls below 5 %
    assert min(shares_at_other_end) < 0.05


@pytest.mark.parametrize("anchor", ["largest", "smallest"])
@pytest.mark.parametrize("n_parameters", [1, 2, 3, "strong", "strong2"])
def test_independent_draw_gives_every_term_five_percent_at_anchor(n_parameters, anchor):
    in_range = 0
    models = _draw(n_parameters, anchor, "independent")
    for model in models:
        grid = synthetic.grid(model.parameters)
        point = grid[-1:] if anchor == "largest" else grid[:1]
        parts = _component_values(model, point)
        assert (parts[1:] / model.evaluate(point)[0]).min() >= 0.05 - 1e-12
        coefficients = np.array([model.constant, *(t.coefficient for t in model.terms)])
        in_range += bool(np.all((coefficients >= 1e-2) & (coefficients <= 1e2)))
    # all but the rare infeasible combinations (which fall back to the shares draw)
    assert in_range >= 0.8 * len(models)


def test_one_parameter_functions_cycle_through_every_block():
    rng = synthetic.function_rng(1, 1)
    models = synthetic.draw_functions(rng, 1, 84)
    shapes = Counter(
        (m.terms[0].factors[0].exponent, m.terms[0].factors[0].log_exponent) for m in models
    )
    assert shapes == Counter({block: 2 for block in synthetic.BUILDING_BLOCKS})
    assert all(len(m.terms) == 1 and m.parameters == ("p",) for m in models)
    assert len({m.kernel for m in models}) == 84


def test_multi_parameter_functions_use_every_combination():
    rng = synthetic.function_rng(1, 3)
    models = synthetic.draw_functions(rng, 3, 300)
    layouts = Counter(tuple(sorted(t.parameters for t in m.terms)) for m in models)
    assert set(layouts) == {
        (("n", "p", "q"),),
        (("n",), ("p",), ("q",)),
        (("n", "p"), ("q",)),
    }
    assert min(layouts.values()) > 60
    two = synthetic.draw_functions(synthetic.function_rng(1, 2), 2, 200)
    assert {len(m.terms) for m in two} == {1, 2}


def test_strong_scaling_functions_decay_then_grow():
    models = synthetic.draw_strong_scaling(synthetic.function_rng(1, 4), 2)
    assert len(models) == 2 * 4 * 5
    decays = {-m.terms[0].factors[0].exponent for m in models}
    assert decays == set(synthetic.STRONG_SCALING_DECAYS)
    for model in models:
        assert model.terms[0].factors[0].exponent < 0
        growth = model.terms[1].factors[0]
        assert (growth.exponent, growth.log_exponent) in synthetic.STRONG_SCALING_GROWTHS
        assert model.lead_order("p") == (growth.exponent, growth.log_exponent)


def test_strong_scaling_with_work_divides_a_block_of_n_over_p():
    models = synthetic.draw_strong_scaling(synthetic.function_rng(1, 5), 3, work=True)
    assert len(models) == 3 * 4 * 5
    assert all(m.parameters == ("p", "n") for m in models)
    works = set()
    for model in models:
        decaying, growing = model.terms
        factors = {f.parameter: f for f in decaying.factors}
        assert factors["p"].exponent < 0 and factors["p"].log_exponent == 0
        works.add((factors["n"].exponent, factors["n"].log_exponent))
        assert {f.parameter for f in growing.factors} == {"p"}
        assert model.lead_order("n") == (factors["n"].exponent, factors["n"].log_exponent)
    assert works <= set(synthetic.BUILDING_BLOCKS) and len(works) > 20


@pytest.mark.parametrize("noise", [0.0, 0.05, 0.2])
def test_noise_is_uniform_multiplicative_within_bounds(noise):
    models = synthetic.draw_functions(synthetic.function_rng(2, 2), 2, 50)
    (kernel_set,) = synthetic.kernel_sets(models, "2 parameters", [noise], seed=2, stream=2)
    exact = np.stack([m.evaluate(kernel_set.points) for m in models])
    ratio = kernel_set.values / exact[:, :, None]
    assert kernel_set.values.shape == (50, 25, 5)
    assert np.all(np.abs(ratio - 1) <= noise + 1e-12)
    if noise:
        assert np.abs(ratio - 1).max() > 0.9 * noise
        assert abs(np.mean(ratio - 1)) < 0.05 * noise + 1e-3
    else:
        np.testing.assert_array_equal(ratio, 1.0)


def test_gaussian_and_spiky_noise_shapes():
    rng = np.random.default_rng(4)
    gaussian = synthetic.relative_noise(rng, 0.06, (200_000,), "gaussian")
    assert gaussian.std() == pytest.approx(0.06 / np.sqrt(3), rel=0.01)
    assert abs(np.mean(gaussian)) < 1e-3
    spikes = synthetic.relative_noise(rng, 0.06, (200_000,), "spikes")
    # Jitter of sd 0.02 plus, one time in ten, an exponential delay of mean 0.12.
    assert np.mean(spikes) == pytest.approx(0.1 * 0.12, rel=0.05)
    assert np.median(spikes) < 0.005
    assert np.mean(spikes > 0.1) == pytest.approx(0.1 * np.exp(-0.1 / 0.12), rel=0.1)
    with pytest.raises(ValueError, match="unknown noise shape"):
        synthetic.relative_noise(rng, 0.06, (3,), "pareto")


def test_grid_and_extrapolation_point():
    points = synthetic.grid(("p", "n", "q"))
    assert points.shape == (125, 3)
    assert sorted(set(points[:, 0])) == [4, 8, 16, 32, 64]
    np.testing.assert_array_equal(synthetic.extrapolation_point(("p", "n", "q")), [[256, 200, 40]])


def test_same_seed_same_data_other_seed_other_data():
    def draw(seed):
        models = synthetic.draw_functions(synthetic.function_rng(seed, 2), 2, 10)
        return synthetic.kernel_sets(models, "x", [0.05], seed, 2)[0]

    a, b, c = draw(7), draw(7), draw(8)
    np.testing.assert_array_equal(a.values, b.values)
    assert [m.expression() for m in a.truths] == [m.expression() for m in b.truths]
    assert not np.allclose(a.values, c.values)


def test_long_table_round_trips_through_experiment():
    models = synthetic.draw_functions(synthetic.function_rng(5, 2), 2, 4)
    (kernel_set,) = synthetic.kernel_sets(models, "x", [0.1], 5, 2)
    frame = kernel_set.to_frame()
    assert len(frame) == 4 * 25 * 5
    (series,) = Experiment.from_frame(frame).series("time")
    assert series.parameters == ("p", "n")
    assert series.kernels == kernel_set.kernels
    # both grids are sorted lexicographically (p, then n)
    np.testing.assert_array_equal(series.points, kernel_set.points)
    np.testing.assert_array_equal(series.values, kernel_set.values)
