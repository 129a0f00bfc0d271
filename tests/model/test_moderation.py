"""Noise variances moderated towards the series' common level (empirical Bayes)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import special

from perfcast.core.experiment import Experiment
from perfcast.model import fit
from perfcast.model.fitting import data as data_module
from perfcast.model.fitting.data import FitData
from perfcast.model.fitting.moderation import NO_PRIOR, NoisePrior, estimate_prior, trigamma_inverse

POINTS, REPETITIONS = 5, 5
DOF = POINTS * (REPETITIONS - 1)


def pure_error(levels: np.ndarray, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Pure-error sums of squares of Gaussian kernels with relative noise ``levels``."""
    rng = np.random.default_rng(seed)
    noise = rng.normal(0.0, 1.0, (len(levels), POINTS, REPETITIONS)) * levels[:, None, None]
    values = 1.0 + noise
    means = values.mean(axis=2, keepdims=True)
    ss = (((values - means) / means) ** 2).sum(axis=(1, 2))
    return ss, np.full(len(levels), DOF)


@pytest.mark.parametrize("y", [0.05, 0.7, 3.0, 40.0, 2000.0])
def test_trigamma_inverse(y):
    assert trigamma_inverse(float(special.polygamma(1, y))) == pytest.approx(y, rel=1e-6)


def test_equal_levels_pool_completely():
    ss, dof = pure_error(np.full(300, 0.02))
    prior = estimate_prior(ss, dof, 2.0, POINTS, REPETITIONS)
    # Only sampling scatter: the common level outweighs a kernel's own estimate many times.
    assert prior.dof > 5 * DOF
    assert np.sqrt(prior.variance) == pytest.approx(0.02, rel=0.03)


def test_scattered_levels_keep_their_own_estimates():
    levels = 10.0 ** np.random.default_rng(1).uniform(-3, -1, 300)
    ss, dof = pure_error(levels)
    prior = estimate_prior(ss, dof, 2.0, POINTS, REPETITIONS)
    assert 0 < prior.dof < 2
    moderated_ss, moderated_dof = prior.moderate(ss, dof)
    change = (moderated_ss / moderated_dof) / (ss / dof) - 1.0
    assert np.median(np.abs(change)) < 0.05


def test_few_kernels_or_repetitions_give_no_prior():
    ss, dof = pure_error(np.full(9, 0.02))
    assert estimate_prior(ss, dof, 2.0, POINTS, REPETITIONS) == NO_PRIOR
    ss, dof = pure_error(np.full(50, 0.02))
    assert estimate_prior(ss, dof, 2.0, POINTS, 2) == NO_PRIOR
    assert NO_PRIOR.moderate(ss, dof)[0] == pytest.approx(ss)


def test_moderate_shrinks_noisy_kernels_only():
    prior = NoisePrior(variance=4e-4, dof=20.0)
    ss, dof = prior.moderate(np.array([1e-3, 0.0, 0.0]), np.array([20, 0, 20]))
    assert ss == pytest.approx([1e-3 + 20 * 4e-4, 0.0, 0.0])
    assert dof == pytest.approx([40.0, 0.0, 20.0])


@pytest.mark.parametrize("quadratic", [1e-4, 1e-6])
def test_deterministic_kernels_keep_exact_models_beside_noisy_ones(quadratic):
    # Twenty kernels of noisy times and one of exactly repeated counts 100 + 3*p + c*p^2 (with
    # c = 1e-4 their point means differ from the repetitions by rounding): the noisy kernels'
    # level must neither hide the small quadratic term nor be dragged down by the exact kernel.
    noisy = spiky_experiment(kernels=20)
    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    exact = pd.DataFrame(
        {
            "kernel": "counts",
            "metric": "time",
            "p": np.repeat(p, REPETITIONS),
            "repetition": np.tile(np.arange(REPETITIONS), len(p)),
            "value": np.repeat(100 + 3 * p + quadratic * p**2, REPETITIONS),
        }
    )
    experiment = Experiment.from_frame(pd.concat([noisy.to_frame(), exact], ignore_index=True))
    prior = FitData.from_series(experiment.series()[0]).prior
    assert prior == FitData.from_series(noisy.series()[0]).prior
    assert prior.dof > 0
    model = next(m for m in fit(experiment) if m.kernel == "counts")
    shapes = sorted((f.exponent, f.log_exponent) for t in model.terms for f in t.factors)
    assert shapes == [(1, 0), (2, 0)]


def spiky_experiment(kernels: int = 200, seed: int = 0) -> Experiment:
    """``kernels`` kernels ``2 + 0.5*p`` at p = 4..64, five repetitions, 0.3 % jitter and, for
    one repetition in ten, a delay of 2 % on average."""
    rng = np.random.default_rng(seed)
    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    size = (kernels, len(p), REPETITIONS)
    noise = rng.normal(0.0, 0.01 / 3, size) + (rng.random(size) < 0.1) * rng.exponential(0.02, size)
    values = (2.0 + 0.5 * p)[None, :, None] * (1.0 + noise)
    index = np.indices(size).reshape(3, -1)
    frame = pd.DataFrame(
        {
            "kernel": [f"k{k:02d}" for k in index[0]],
            "metric": "time",
            "p": p[index[1]],
            "repetition": index[2],
            "value": values.reshape(-1),
        }
    )
    return Experiment.from_frame(frame)


def wrong_models(experiment: Experiment) -> int:
    """Models other than ``c0 + c1*p``."""
    return sum(
        [(f.exponent, f.log_exponent) for t in model.terms for f in t.factors] != [(1, 0)]
        for model in fit(experiment)
    )


def test_moderation_cuts_wrong_models_under_spiky_noise(monkeypatch):
    # A kernel whose repetitions caught no delay looks far quieter than it is; on its own
    # estimate, the F-tests accept terms that only fit a delayed point.
    experiment = spiky_experiment()
    with_moderation = wrong_models(experiment)
    monkeypatch.setattr(data_module, "estimate_prior", lambda *args: NO_PRIOR)
    without = wrong_models(experiment)
    assert with_moderation <= 5
    assert without >= with_moderation + 4


def test_fit_data_moderates_towards_the_series_level():
    data = FitData.from_series(spiky_experiment().series()[0])
    own = data.pure_ss / data.pure_dof
    moderated = data.noise_variance
    assert data.prior.dof > 0
    low, high = np.minimum(own, data.prior.variance), np.maximum(own, data.prior.variance)
    assert np.all((moderated >= low * (1 - 1e-12)) & (moderated <= high * (1 + 1e-12)))
    assert np.all(data.noise_dof == data.pure_dof + data.prior.dof)
