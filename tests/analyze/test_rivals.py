"""Rival model forms: plausible neighbours of a fitted model, and advice that tells them apart."""

from __future__ import annotations

import numpy as np
import pandas as pd

from perfcast.analyze.rivals import rival_models
from perfcast.api import Experiment, advise, fit


def test_neighbours_of_a_one_parameter_model_are_refitted_and_rated():
    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    values = 2 + 0.5 * p
    (model,) = fit(
        Experiment.from_frame(
            pd.DataFrame({"kernel": "k", "metric": "time", "p": p, "value": values})
        )
    ).models
    rivals = rival_models(model, p[:, None], values, noise_variance=1e-2)
    assert rivals  # under 10 % noise p^(4/5) or p^(5/4) would do as well
    assert all(0 < r.plausibility <= 1 for r in rivals)
    assert all(r.model.lead_order("p") != model.lead_order("p") for r in rivals)
    # Under very quiet measurements every worse neighbour is implausible.
    assert rival_models(model, p[:, None], values, 1e-10) == []


def test_rivals_need_positive_values_and_noise():
    p = np.array([4.0, 8.0, 16.0, 32.0, 64.0])
    (model,) = fit(
        Experiment.from_frame(
            pd.DataFrame({"kernel": "k", "metric": "time", "p": p, "value": 1 + p})
        )
    ).models
    assert rival_models(model, p[:, None], -(1 + p), 1e-4) == []
    assert rival_models(model, p[:, None], 1 + p, 0.0) == []


def test_advice_measures_off_the_lines_where_sum_and_product_forms_disagree():
    rng = np.random.default_rng(2)
    lines = [(p, 10.0) for p in (4.0, 8.0, 16.0, 32.0, 64.0)] + [
        (4.0, n) for n in (20.0, 30.0, 40.0, 50.0)
    ]
    rows = [
        {"kernel": "k", "metric": "time", "p": p, "n": n, "value": (1 + 0.05 * p * n) * noise}
        for p, n in lines
        for noise in 1 + rng.uniform(-0.02, 0.02, 5)
    ]
    experiment = Experiment.from_frame(pd.DataFrame(rows))
    advice = advise(
        experiment, at={"p": 256.0, "n": 100.0}, candidates="p=4..64*2,n=10..50+10", budget=25
    )
    off_lines = [s for s in advice.suggestions if s.point["p"] > 4 and s.point["n"] > 10]
    assert off_lines
    assert any("tells apart model forms" in r for s in off_lines for r in s.reasons)
