"""Warm starts from similar tuned kernels: the transfer prior and its model-based continuation."""

from __future__ import annotations

import math
import shutil

import pytest

from benchmarks.kernel_corpus import kernel, write_program
from perfcast.analyze.transfer import TransferPrior, transfer_pick
from perfcast.analyze.tuning import TuningSpace, search, tune
from perfcast.measure.kernel_runs import KernelRun

SPACE = TuningSpace(
    flags={"opt": ("-O1", "-O2", "-O3")}, macros={"U": ("1", "2", "4", "8"), "T": ("0", "16")}
)


def landscape(best: dict[str, str], scale: float = 1000.0):
    """An objective whose value grows with every parameter that differs from ``best``."""
    penalties = {"opt": 0.5, "U": 0.3, "T": 0.2}

    def value(config: dict[str, str]) -> float:
        return scale * math.prod(
            1 + penalties[name] for name, choice in config.items() if choice != best[name]
        )

    return value


def measured(value, space=SPACE):
    return [(config, value(config)) for config in space.all_configurations()]


def test_one_exhaustive_neighbour_ranks_its_own_best_first_and_keeps_its_order():
    value = landscape({"opt": "-O3", "U": "4", "T": "16"})
    prior = TransferPrior.from_neighbours([(0.9, measured(value))], SPACE.adapt)
    ranked = prior.ranked(SPACE.all_configurations())
    assert ranked[0] == {"opt": "-O3", "U": "4", "T": "16"}
    assert prior.predict(ranked[0]) == 0.0
    predictions = [prior.predict(c) for c in ranked]
    assert predictions == sorted(predictions)
    worst = {"opt": "-O1", "U": "1", "T": "0"}
    assert prior.predict(worst) == pytest.approx(math.log(1.5 * 1.3 * 1.2))


def test_the_more_similar_neighbour_decides_where_neighbours_disagree():
    fast_o2 = landscape({"opt": "-O2", "U": "1", "T": "0"}, scale=10.0)
    fast_o3 = landscape({"opt": "-O3", "U": "8", "T": "16"}, scale=1e6)  # other run time
    close_first = TransferPrior.from_neighbours(
        [(0.95, measured(fast_o2)), (0.4, measured(fast_o3))], SPACE.adapt
    )
    close_second = TransferPrior.from_neighbours(
        [(0.4, measured(fast_o2)), (0.95, measured(fast_o3))], SPACE.adapt
    )
    configurations = SPACE.all_configurations()
    assert close_first.ranked(configurations)[0] == {"opt": "-O2", "U": "1", "T": "0"}
    assert close_second.ranked(configurations)[0] == {"opt": "-O3", "U": "8", "T": "16"}


def test_partial_measurements_and_other_spaces_are_estimated_per_parameter_value():
    other = TuningSpace(flags={"opt": ("-O1", "-O3")}, macros={"U": ("1", "4"), "V": ("a", "b")})
    value = landscape({"opt": "-O3", "U": "4", "T": "0"})
    # The neighbour's space lacks T (adapted to T=0) and -O2, U=2, U=8; V is unknown here.
    partial = [
        (c, value({"opt": c["opt"], "U": c["U"], "T": "0"})) for c in other.all_configurations()
    ]
    prior = TransferPrior.from_neighbours([(0.8, partial)], SPACE.adapt)
    assert prior.ranked(SPACE.all_configurations())[0] == {"opt": "-O3", "U": "4", "T": "0"}
    unseen = {"opt": "-O2", "U": "2", "T": "16"}
    # Values the neighbour never measured carry no effect: its mean ratio is predicted.
    assert prior.predict(unseen) == pytest.approx(
        sum(math.log(v / value({"opt": "-O3", "U": "4", "T": "0"})) for _, v in partial)
        / len(partial)
    )


def test_nothing_to_learn_from_gives_no_prior():
    assert TransferPrior.from_neighbours([], SPACE.adapt) is None
    assert TransferPrior.from_neighbours([(0.0, [({"opt": "-O1"}, 5.0)])], SPACE.adapt) is None
    assert TransferPrior.from_neighbours([(0.7, [({"opt": "-O1"}, 0.0)])], SPACE.adapt) is None


def test_own_measurements_that_contradict_the_neighbour_reorder_the_rest():
    # The neighbour finds tiling essential (T=0 2.5 times slower); this kernel is the opposite.
    neighbour = landscape({"opt": "-O3", "U": "8", "T": "16"})

    def neighbour_tiling(config: dict[str, str]) -> float:
        return neighbour(config) * (2.5 if config["T"] == "0" else 1.0)

    truth = landscape({"opt": "-O3", "U": "8", "T": "0"})
    prior = TransferPrior.from_neighbours([(0.9, measured(neighbour_tiling))], SPACE.adapt)
    tried = [{"opt": "-O3", "U": "8", "T": "16"}, {"opt": "-O3", "U": "8", "T": "0"}]
    untried = [c for c in SPACE.all_configurations() if c not in tried]
    by_prior = transfer_pick(prior, [(tried[0], truth(tried[0]))], untried)
    assert by_prior == prior.ranked(untried)[0] and by_prior["T"] == "16"
    corrected = transfer_pick(prior, [(c, truth(c)) for c in tried], untried)
    assert corrected["T"] == "0" and corrected["opt"] == "-O3"


def run_of(value):
    def measure(config: dict[str, str]) -> KernelRun:
        return KernelRun(instructions=int(value(config)), seconds=None)

    return measure


def steps_to_best(done, value) -> int:
    best = min(value(c) for c in SPACE.all_configurations())
    return next(i for i, (c, _, _) in enumerate(done, start=1) if value(c) <= best)


def test_model_search_with_a_prior_reaches_the_best_sooner_than_without():
    neighbour = landscape({"opt": "-O3", "U": "8", "T": "16"})
    truth = landscape({"opt": "-O3", "U": "4", "T": "0"})
    prior = TransferPrior.from_neighbours([(0.9, measured(neighbour))], SPACE.adapt)
    first = [dict(c) for c in prior.ranked(SPACE.all_configurations())[:1]]
    warm = search(SPACE, run_of(truth), budget=24, strategy="model", first=first, prior=prior)
    assert warm[0][2] == "warm" and all(origin == "model" for _, _, origin in warm[1:])
    assert len({str(c) for c, _, _ in warm}) == 24  # still every configuration once
    cold = [
        steps_to_best(search(SPACE, run_of(truth), budget=24, strategy="random", seed=s), truth)
        for s in range(20)
    ]
    assert steps_to_best(warm, truth) < sum(cold) / len(cold)


@pytest.mark.skipif(shutil.which("clang-16") is None, reason="needs clang-16")
def test_tune_warm_starts_from_the_ranked_consensus_of_the_database(tmp_path):
    space = TuningSpace(flags={"opt": ("-O1", "-O2")}, macros={"UNROLL": ("1", "2", "4")})
    database = tmp_path / "tuning.sqlite"
    best_of = {"gemv": {"opt": "-O2", "UNROLL": "4"}, "mvt": {"opt": "-O2", "UNROLL": "2"}}
    penalties = {"opt": 1.0, "UNROLL": 0.25}

    def landscape_of(best):
        def measure(config: dict[str, str]) -> KernelRun:
            cost = 1000.0 * math.prod(1 + penalties[k] for k, v in config.items() if v != best[k])
            return KernelRun(instructions=int(cost), seconds=None)

        return measure

    for name, best in best_of.items():
        program = write_program(kernel(name), tmp_path)
        tune(program, name, space, strategy="exhaustive", database=database,
             measure=landscape_of(best))  # fmt: skip
    bicg = write_program(kernel("bicg"), tmp_path)
    result = tune(bicg, "bicg", space, budget=4, strategy="model", database=database,
                  warm_start=True, measure=landscape_of({"opt": "-O2", "UNROLL": "2"}))  # fmt: skip
    sources = [function for _, function, _ in result.warm_sources]
    assert sorted(sources) == ["gemv", "mvt"]
    warm = [e for e in result.evaluations if e.origin == "warm"]
    assert len(warm) == 2 and {e.config["opt"] for e in warm} == {"-O2"}
    assert {e.config["UNROLL"] for e in warm} == {"2", "4"}
    assert all(e.origin == "model" for e in result.evaluations[2:])
    assert result.steps_to_within is not None and result.steps_to_within <= 2


def test_a_misleading_prior_does_not_keep_the_search_from_the_best():
    # The neighbour ranks this kernel's best configuration last of all 24.
    truth = landscape({"opt": "-O1", "U": "1", "T": "0"})
    opposite = landscape({"opt": "-O3", "U": "8", "T": "16"}, scale=5.0)

    def neighbour(config: dict[str, str]) -> float:
        return opposite(config) * (3.0 if config == {"opt": "-O1", "U": "1", "T": "0"} else 1.0)

    prior = TransferPrior.from_neighbours([(0.9, measured(neighbour))], SPACE.adapt)
    assert prior.ranked(SPACE.all_configurations())[-1] == {"opt": "-O1", "U": "1", "T": "0"}
    done = search(SPACE, run_of(truth), budget=24, strategy="model", prior=prior)
    assert steps_to_best(done, truth) <= 12  # the own-model turns explore
