"""The online modeler: batch PARS and lack of fit by hand, the back-off schedule, exceptions on a
planted shift, skipping of stable kernels, clusters and bounded state."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from perfcast.core.errors import InputError
from perfcast.core.function import Factor, Model, Term
from perfcast.model.online import (
    ConfigTable,
    Measurement,
    OnlineModeler,
    batch_table,
    lack_of_fit,
    pars,
    screen,
)

CONFIGS = [(n, p) for n in (64, 128, 256, 512, 1024, 2048) for p in (1, 2, 4, 8, 16)]


def truth(n: float, p: float) -> float:
    return 1e-5 + 1e-6 * n * math.log2(n) / p


def stream(count: int, seed: int, *, kernel: str = "k", shift_at: int | None = None):
    """Measurements of ``truth`` with 3 % noise at random configurations; from ``shift_at`` on
    the kernel runs 40 % slower."""
    rng = np.random.default_rng(seed)
    for i in range(count):
        n, p = CONFIGS[rng.integers(len(CONFIGS))]
        value = truth(n, p) * (1 + 0.03 * rng.standard_normal())
        if shift_at is not None and i >= shift_at:
            value *= 1.4
        yield Measurement(kernel, "time", {"n": float(n), "p": float(p)}, value, i)


def linear_model() -> Model:
    term = Term(2.0, (Factor("n", 1),))
    return Model("k", "time", ("n",), 1.0, (term,))


def test_pars_matches_equations_11_and_12() -> None:
    measured = np.array([3.1, 5.2, 6.8, 9.1, 10.9, 13.2])
    predicted = np.array([3.0, 5.0, 7.0, 9.0, 11.0, 13.0])
    ss_res = sum((t - q) ** 2 for t, q in zip(measured, predicted, strict=True))
    mean = sum(measured) / 6
    ss_tot = sum((t - mean) ** 2 for t in measured)
    r2 = 1 - ss_res / ss_tot
    expected = r2 - (1 - r2) * 1 / (6 - 1 - 1)
    assert pars(measured, predicted, 1) == pytest.approx(expected, rel=1e-12)
    assert pars(measured[:2], predicted[:2], 1) is None  # b - m - 1 = 0
    assert pars(np.ones(5), np.ones(5), 1) is None  # nothing to explain


def test_lack_of_fit_matches_equations_13_and_14_with_seen_configurations() -> None:
    model = linear_model()  # 1 + 2 n
    seen = ConfigTable()
    seen.add_values((1.0,), [3.2, 2.9, 3.1])
    seen.add_values((2.0,), [5.3, 4.8])
    batch = batch_table([(2.0,), (3.0,), (3.0,), (4.0,), (4.0,)], [5.1, 7.4, 7.0, 8.7, 9.2])
    # By hand: every value with its configuration.
    data = {1.0: [3.2, 2.9, 3.1], 2.0: [5.3, 4.8, 5.1], 3.0: [7.4, 7.0], 4.0: [8.7, 9.2]}
    h = sum(len(v) for v in data.values())
    c = len(data)
    lof = sum(len(v) * (np.mean(v) - (1 + 2 * x)) ** 2 for x, v in data.items())
    pure = sum(sum((t - np.mean(v)) ** 2 for t in v) for v in data.values())
    f = (lof / (c - 2)) / (pure / (h - c))
    # eq. 14 with the regularized incomplete beta function
    x = (c - 2) * f / ((c - 2) * f + (h - c))
    expected = 1 - special.betainc((c - 2) / 2, (h - c) / 2, x)
    p_value, misfit = lack_of_fit(seen.merged(batch), model)
    assert p_value == pytest.approx(expected, rel=1e-9)
    assert misfit > 0
    assert lack_of_fit(batch_table([(1.0,), (2.0,)], [3.0, 5.0]), model)[0] is None


def test_config_table_merges_exactly() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(10, 2, 101)
    table = ConfigTable()
    for chunk in np.array_split(values, 7):
        table.merged(ConfigTable())  # merging nothing changes nothing
        table.add_values((1.0,), chunk.tolist())
    count, mean, m2 = table.rows[(1.0,)]
    assert count == 101
    assert mean == pytest.approx(values.mean(), rel=1e-12)
    assert m2 == pytest.approx(((values - values.mean()) ** 2).sum(), rel=1e-10)


def test_backoff_delays_are_uniform_on_batch_times_two_to_the_hit_count() -> None:
    modeler = OnlineModeler(batch=64, seed=11)
    state = modeler._state_for(Measurement("k", "time", {"n": 1.0}, 1.0))
    for hits in (0, 3):
        state.hit_count = hits
        draws = np.array([modeler._delay(state) for _ in range(4000)])
        high = 64 * 2**hits
        assert draws.min() >= 0 and draws.max() < high
        assert stats.kstest(draws / high, "uniform").pvalue > 0.001
    function = OnlineModeler(batch=64, seed=1, functions={"f"})
    state = function._state_for(Measurement("f", "time", {"n": 1.0}, 1.0))
    state.hit_count = 4
    assert max(function._delay(state) for _ in range(500)) < 16  # U(0, 2**hc) calls


def test_stable_kernel_is_modeled_and_mostly_skipped_without_exceptions() -> None:
    modeler = OnlineModeler(batch=128, seed=2).partial_fit(stream(20000, seed=5)).finish()
    state = modeler.states_[("k", "time")]
    assert state.measured + state.skipped == 20000
    assert state.skipped / 20000 >= 0.8
    assert not state.exceptions
    assert state.model is not None
    assert state.model.lead_order("n") == (1, 1)
    assert state.model.lead_order("p") == (-1, 0)
    judged = [j for j in state.judgements if j.hit is not None]
    assert judged and all(j.hit for j in judged)
    assert all(j.pars is not None and j.pars > 0.99 for j in judged)
    # bounded state: one row per configuration, however many measurements
    assert len(state.table) <= len(CONFIGS)


def test_planted_shift_raises_exceptions_within_two_batches() -> None:
    modeler = OnlineModeler(batch=128, seed=4, backoff=False)
    modeler.partial_fit(stream(4000, seed=6, shift_at=2000)).finish()
    state = modeler.states_[("k", "time")]
    assert state.exceptions
    first = min(e.index for e in state.exceptions)
    assert 2000 <= first < 2000 + 2 * 128
    assert all(e.index >= 2000 for e in state.exceptions)
    shifted = next(j for j in state.judgements if j.hit is False)
    assert shifted.reason


def test_cluster_member_borrows_the_base_model_until_it_misses() -> None:
    def both(count: int, change: int):
        for m in stream(count, seed=8):
            yield m
            slower = 3.0 if m.index >= change else 1.0
            yield Measurement("twin", "time", m.params, m.value * slower, m.index)

    modeler = OnlineModeler(batch=128, seed=3, clusters=[["k", "twin"]], backoff=False)
    measurements = both(6000, change=3000)
    modeler.partial_fit(itertools.islice(measurements, 5000))  # 2500 of each kernel
    twin = modeler.states_[("twin", "time")]
    assert twin.borrowed_from == "k" and twin.model is None
    assert twin.skipped > 0  # not measured before the base had a model
    assert all(j.hit for j in twin.judgements)
    modeler.partial_fit(measurements)
    twin = modeler.states_[("twin", "time")]
    assert twin.borrowed_from is None and twin.model is not None
    assert twin.exceptions and min(e.index for e in twin.exceptions) >= 3000


def test_changed_parameters_name_the_record() -> None:
    modeler = OnlineModeler(batch=4, source="s.jsonl")
    modeler.partial_fit([Measurement("k", "time", {"n": 1.0}, 1.0, 0)])
    with pytest.raises(InputError) as caught:
        modeler.partial_fit([Measurement("k", "time", {"m": 1.0}, 1.0, 5)])
    assert caught.value.line == 6 and caught.value.source == "s.jsonl"


@pytest.mark.parametrize(
    # a negative seed used to reach numpy's default_rng: a traceback from `online replay --seed -5`
    "setting",
    [{"batch": 0}, {"miss_alpha": 1.5}, {"max_hits": -1}, {"seed": -5}],
)
def test_bad_settings_are_refused(setting: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        OnlineModeler(**setting)  # type: ignore[arg-type]


def test_histories_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from perfcast.model import online

    def run() -> online.KernelState:
        modeler = OnlineModeler(batch=16, seed=1, backoff=False)
        return modeler.partial_fit(stream(640, seed=2, shift_at=200)).states_[("k", "time")]

    everything = run()
    assert len(everything.exceptions) > 5
    monkeypatch.setattr(online, "HISTORY", 5)
    state = run()
    assert state.batches == 40
    assert [j.number for j in state.judgements] == [36, 37, 38, 39, 40]
    assert len(state.unsaved_judgements) == 5
    assert state.exceptions == everything.exceptions[-5:]  # the latest are kept


def test_screen_drops_a_cold_first_count_among_identical_ones() -> None:
    # instruction counts: seven identical, the run's first execution 99 more (MAD = 0)
    point = (32.0,)
    assert screen([point] * 8, [441.0] + [342.0] * 7) == [False] + [True] * 7
    # a count taking two values in comparable shares keeps both
    assert all(screen([point] * 10, [1000.0] * 6 + [2000.0] * 4))
    # continuous values: only what lies beyond six scaled MADs goes
    rng = np.random.default_rng(3)
    values = list(1.0 + 0.01 * rng.standard_normal(50)) + [5.0]
    kept = screen([point] * 51, values)
    assert all(kept[:50]) and not kept[50]


def _known_kernel(batch: int, **settings: float) -> OnlineModeler:
    """A modeler whose kernel ``k`` has the model 1.0 and, at n = 1, 1,000 seen values of mean
    1 and standard deviation 0.01 (so the interval there is the configuration's own)."""
    modeler = OnlineModeler(batch=batch, backoff=False, **settings)
    state = modeler._state_for(Measurement("k", "time", {"n": 1.0}, 1.0))
    state.table.add((1.0,), 1000.0, 1.0, 0.01**2 * 999)
    state.model = Model("k", "time", ("n",), 1.0)
    return modeler


def test_exception_level_is_corrected_for_the_checks_of_a_batch() -> None:
    scale = 0.01 * math.sqrt(1 + 1 / 1000)
    per_value = stats.t.ppf(0.5 + 0.9999 / 2, 999)  # the uncorrected 99.99 % bound: 3.9 sd
    corrected = stats.t.ppf(0.5 + 0.9999 ** (1 / 100) / 2, 999)  # Sidak for 100 checks: 5.0 sd
    assert per_value < 4.4 < corrected < 5.5
    for deviation, expected in ((4.4, 0), (5.5, 1)):
        modeler = _known_kernel(100, min_deviation=0.0)
        values = [1.0] * 99 + [1.0 + deviation * scale]
        modeler.partial_fit(
            Measurement("k", "time", {"n": 1.0}, value, i) for i, value in enumerate(values)
        )
        exceptions = modeler.states_[("k", "time")].exceptions
        assert len(exceptions) == expected, deviation
        if expected:
            low, high = exceptions[0].interval
            assert high - 1.0 == pytest.approx(corrected * scale, rel=1e-9)


def _measurements(points: list[tuple[float, float]], start: int, seed: int) -> list[Measurement]:
    """``(n, mean)`` pairs measured with 1 % noise, indices from ``start``."""
    rng = np.random.default_rng(seed)
    return [
        Measurement("k", "time", {"n": n}, mean * (1 + 0.01 * rng.standard_normal()), start + i)
        for i, (n, mean) in enumerate(points)
    ]


def _well_modeled(backoff: bool) -> OnlineModeler:
    """Ten batches of 64 of ``n / 64`` at n = 64, 128, 256: every judged batch hits."""
    modeler = OnlineModeler(batch=64, seed=1, backoff=backoff)
    rng = np.random.default_rng(7)
    points = [(n, n / 64) for n in rng.choice([64.0, 128.0, 256.0], 640)]
    modeler.partial_fit(_measurements(points, 0, seed=1), taken=True)
    state = modeler.states_[("k", "time")]
    assert state.hit_count == 6 and all(j.hit for j in state.judgements[1:])
    return modeler


@pytest.mark.parametrize("backoff", [False, True])
def test_a_miss_at_new_configurations_keeps_the_hit_counter(backoff: bool) -> None:
    # a new input far slower than the model extrapolates: a miss, but nothing changed
    modeler = _well_modeled(backoff)
    modeler.partial_fit(_measurements([(1024.0, 50.0)] * 64, 640, seed=2), taken=True)
    new = modeler.states_[("k", "time")].judgements[-1]
    assert new.hit is False and new.unseen == 64 and new.hit_count == 6
    assert new.reason.startswith("at configurations the model was not fitted on")
    assert (new.skip > 0) == backoff  # the kept counter's delay is drawn
    # half new and off, half at fitted configurations and as before: kept too
    modeler = _well_modeled(backoff)
    mixed = [(2048.0, 100.0)] * 32 + [(64.0, 1.0), (128.0, 2.0)] * 16
    modeler.partial_fit(_measurements(mixed, 640, seed=3), taken=True)
    judged = modeler.states_[("k", "time")].judgements[-1]
    assert judged.hit is False and judged.unseen == 32 and judged.hit_count == 6


@pytest.mark.parametrize("new_too", [False, True])
def test_a_miss_at_fitted_configurations_resets_the_hit_counter(new_too: bool) -> None:
    # the kernel slows down where the model has data (with or without new inputs beside)
    modeler = _well_modeled(True)
    slower = [(128.0, 3.0)] * 64 if not new_too else [(128.0, 3.0), (1024.0, 16.0)] * 32
    modeler.partial_fit(_measurements(slower, 640, seed=4), taken=True)
    judged = modeler.states_[("k", "time")].judgements[-1]
    assert judged.hit is False and judged.hit_count == 0 and judged.skip == 0
    assert judged.unseen == (32 if new_too else 0)
    assert not judged.reason.startswith("at configurations")


def _tailed(n: float, mean: float, count: int, start: int, seed: int) -> list[Measurement]:
    """Wall-time-like values: 1 % Gaussian noise, and one in six values 20 % slower (a
    preempted execution), far more than a Gaussian 95 % interval leaves outside."""
    rng = np.random.default_rng(seed)
    values = mean * (1 + 0.01 * rng.standard_normal(count))
    values[rng.random(count) < 1 / 6] *= 1.2
    return [Measurement("k", "time", {"n": n}, float(v), start + i) for i, v in enumerate(values)]


def test_the_outside_count_is_judged_against_the_kernels_usual_share() -> None:
    modeler = OnlineModeler(batch=128, seed=2, backoff=False)
    index = 0
    for _ in range(8):  # production runs of 768 executions, one input each
        for n in (64.0, 128.0, 256.0):
            modeler.partial_fit(_tailed(n, n / 64, 768, index, seed=index), taken=True)
            index += 768
    state = modeler.states_[("k", "time")]
    assert 0.1 < state.usual_outside < 0.25  # the tail leaves the interval, batch after batch
    judged = [j for j in state.judgements if j.hit is not None]
    assert all(j.hit for j in judged[-30:]), [j.reason for j in judged if not j.hit]
    assert state.hit_count == 6
    # the same kernel 50 % slower at a fitted configuration: far beyond its usual share
    modeler.partial_fit(_tailed(128.0, 3.0, 128, index, seed=99), taken=True)
    slower = state.judgements[-1]
    assert slower.hit is False and slower.hit_count == 0
    assert "usual share" in slower.reason


def test_cold_backoff_delays_batches_no_model_can_judge_yet() -> None:
    def one_size(n: float, count: int, start: int):  # one configuration: pmnf has no model
        return (Measurement("k", "time", {"n": n}, 1e-3 * n, start + i) for i in range(count))

    plain = OnlineModeler(batch=32, seed=4).partial_fit(one_size(64.0, 3200, 0))
    state = plain.states_[("k", "time")]
    assert state.model is None and state.skipped == 0  # without it, the cold start measures all
    cold = OnlineModeler(batch=32, seed=4, cold_backoff=True).partial_fit(one_size(64.0, 3200, 0))
    state = cold.states_[("k", "time")]
    assert state.model is None and state.measured + state.skipped == 3200
    judgements = list(state.judgements)
    assert all(j.hit is None and j.hit_count == 0 for j in judgements)
    delays = np.array([j.skip for j in judgements])
    assert delays.min() >= 0 and delays.max() < 32  # eq. 8 with hc = 0: U(0, b)
    assert stats.kstest(delays / 32, "uniform").pvalue > 0.001
    # b measured, then about b / 2 skipped: about a third of the executions
    assert 0.25 < state.skipped / 3200 < 0.42
    off = OnlineModeler(batch=32, backoff=False, cold_backoff=True)
    assert off.partial_fit(one_size(64.0, 640, 0)).states_[("k", "time")].skipped == 0
    with pytest.raises(ValueError):
        OnlineModeler(cold_backoff=1)  # type: ignore[arg-type]
