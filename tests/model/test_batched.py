import itertools

import numpy as np
import pytest

from perfcast.model.fitting import least_squares as batched
from perfcast.model.fitting.least_squares import PoolMoments, solve_spd


def test_solve_spd_matches_numpy():
    rng = np.random.default_rng(3)
    a = rng.random((200, 4, 4))
    gram = a @ a.transpose(0, 2, 1) + np.eye(4)
    rhs = rng.random((200, 4))
    expected = np.linalg.solve(gram, rhs[..., None])[..., 0]
    np.testing.assert_allclose(solve_spd(gram, rhs), expected, rtol=1e-10)


def test_singular_system_gives_nan():
    gram = np.array([[[1.0, 1.0], [1.0, 1.0]]])
    assert np.isnan(solve_spd(gram, np.array([[1.0, 2.0]]))).all()


def test_subset_fits_match_weighted_lstsq_for_every_size():
    rng = np.random.default_rng(4)
    x = np.array([4.0, 8.0, 16.0, 32.0, 64.0, 128.0])
    pool = np.stack([x, x**2, np.log2(x), np.sqrt(x), x * np.log2(x)])
    values = rng.uniform(1, 100, (3, len(x)))
    weights = rng.uniform(0.5, 2.0, (3, len(x)))
    moments = PoolMoments(pool, values, weights)
    for size in (1, 2, 3):
        subsets = np.array(list(itertools.combinations(range(len(pool)), size)))
        fit = moments.fit(subsets)
        for k in range(3):
            for h, subset in enumerate(subsets):
                design = np.column_stack([np.ones_like(x), pool[subset].T])
                root = np.sqrt(weights[k])
                beta, *_ = np.linalg.lstsq(design * root[:, None], values[k] * root, rcond=None)
                residual = np.sum(weights[k] * (values[k] - design @ beta) ** 2)
                np.testing.assert_allclose(fit.constants[k, h], beta[0], rtol=1e-6, atol=1e-8)
                np.testing.assert_allclose(fit.coefficients[k, h], beta[1:], rtol=1e-6, atol=1e-8)
                np.testing.assert_allclose(fit.wrss[k, h], residual, rtol=1e-6, atol=1e-9)


def test_per_kernel_pool_matches_shared_pool():
    rng = np.random.default_rng(5)
    x = np.array([2.0, 4.0, 8.0, 16.0, 32.0])
    pool = np.stack([x, x**2, np.log2(x)])
    values = rng.uniform(1, 10, (2, len(x)))
    weights = np.ones_like(values)
    subsets = np.array([[0, 1], [1, 2]])
    shared = PoolMoments(pool, values, weights).fit(subsets)
    per_kernel = PoolMoments(np.stack([pool, pool]), values, weights).fit(subsets)
    np.testing.assert_allclose(shared.coefficients, per_kernel.coefficients)
    np.testing.assert_allclose(shared.wrss, per_kernel.wrss)


@pytest.mark.parametrize("per_kernel_pool", [False, True])
def test_best_reduces_fit_block_by_block(monkeypatch, per_kernel_pool):
    rng = np.random.default_rng(6)
    x = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    shared = np.stack([x, x**2, np.log2(x), np.sqrt(x), 1.0 / x])
    n_kernels = 40
    pool = np.stack([shared] * n_kernels) if per_kernel_pool else shared
    trend = rng.uniform(1, 10, (n_kernels, 1)) + rng.uniform(0.1, 2, (n_kernels, 1)) * x
    values = trend * rng.uniform(0.9, 1.1, (n_kernels, len(x)))
    weights = rng.uniform(0.5, 2.0, (n_kernels, len(x)))
    allowed = rng.random((n_kernels, len(shared))) < 0.8
    moments = PoolMoments(pool, values, weights)
    for size in (1, 2, 3):
        subsets = np.array(list(itertools.combinations(range(len(shared)), size)))
        full = moments.fit(subsets)
        valid = np.isfinite(full.wrss) & np.all(full.coefficients > 0, axis=2)
        valid &= np.all(allowed[:, subsets], axis=2)
        candidate = np.where(valid, full.wrss, np.inf)
        expected = np.argmin(candidate, axis=1)
        monkeypatch.setattr(batched, "_BLOCK_ELEMENTS", 7 * len(subsets) * size * size)
        best = moments.best(subsets, allowed, positive=True)
        monkeypatch.undo()
        rows = np.arange(n_kernels)
        found = np.isfinite(candidate[rows, expected])
        assert found.sum() > n_kernels // 2  # the check below is not vacuous
        np.testing.assert_array_equal(best.index[found], expected[found])
        np.testing.assert_allclose(best.wrss, candidate[rows, expected])
        np.testing.assert_allclose(best.constants[found], full.constants[rows, expected][found])
        np.testing.assert_allclose(
            best.coefficients[found], full.coefficients[rows, expected][found]
        )
