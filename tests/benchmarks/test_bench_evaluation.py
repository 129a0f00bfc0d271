"""Scoring: lead order, term structure, extrapolation error, oracle and Extra-P output."""

import math
from fractions import Fraction as F

import numpy as np
import pytest

from benchmarks import accuracy, synthetic
from benchmarks.evaluation import Fit, percentile, score, term_shapes
from benchmarks.tools import fits_from_extrap, run_oracle
from perfcast.core.function import Factor, Model, Term

POINT_PN = np.array([[256.0, 200.0]])


def model(constant, *terms, parameters=("p", "n"), kernel="k"):
    return Model(kernel, "time", parameters, constant, tuple(Term(c, f) for c, f in terms))


def test_lead_order_is_largest_order_among_terms_containing_the_parameter():
    m = model(
        1.0,
        (2.0, (Factor("p", F(2)), Factor("n", F(0), 1))),
        (3.0, (Factor("p", F(2), 1),)),
        (4.0, (Factor("p", F(1, 2), 2),)),
    )
    fit = Fit.from_model(m, POINT_PN)
    assert fit.lead_order("p") == (F(2), 1)
    assert fit.lead_order("n") == (F(0), 1)
    assert fit.lead_order("q") == (F(0), 0)
    assert Fit.from_model(model(5.0), POINT_PN).lead_order("p") == (0, 0)


def test_prediction_of_fit_is_model_value_at_point():
    m = model(1.0, (2.0, (Factor("p", F(1)),)), (0.5, (Factor("n", F(0), 2),)))
    expected = 1.0 + 2.0 * 256 + 0.5 * math.log2(200) ** 2
    assert Fit.from_model(m, POINT_PN).prediction == pytest.approx(expected)


def test_term_shapes_drop_unit_factors_and_constant_terms():
    shapes = term_shapes([[("p", "1/2", "0"), ("n", 0, 0)], [("n", "0", "0")], [("n", 2, 1)]])
    assert shapes == frozenset({frozenset({("p", F(1, 2), F(0))}), frozenset({("n", F(2), F(1))})})


def test_score_counts_lead_order_structure_and_errors_exactly():
    truth_a = model(10.0, (1.0, (Factor("p", F(1)),)), kernel="a")
    truth_b = model(10.0, (1.0, (Factor("p", F(1)), Factor("n", F(1, 2)))), kernel="b")
    truth_c = model(10.0, (2.0, (Factor("n", F(2)),)), kernel="c")
    truth_d = model(10.0, (1.0, (Factor("p", F(0), 1),)), kernel="d")
    truths = [truth_a, truth_b, truth_c, truth_d]
    # a: exact terms, other constant and coefficient -> lead and structure right
    fit_a = model(0.0, (1.1, (Factor("p", F(1)),)), kernel="a")
    # b: right lead orders but an extra lower-order term -> structure wrong
    fit_b = model(
        10.0,
        (1.0, (Factor("p", F(1)), Factor("n", F(1, 2)))),
        (0.1, (Factor("n", F(1, 4)),)),
        kernel="b",
    )
    # c: wrong exponent -> both wrong
    fit_c = model(10.0, (2.0, (Factor("n", F(7, 3)),)), kernel="c")
    # d: missing entirely
    fits = {m.kernel: Fit.from_model(m, POINT_PN) for m in (fit_a, fit_b, fit_c)}
    result = score(truths, fits, POINT_PN)
    assert result.kernels == 4
    assert result.missing == 1
    assert result.lead_order == 0.5
    assert result.structure == 0.25

    def rel(fit, truth):
        f, t = fit.evaluate(POINT_PN)[0], truth.evaluate(POINT_PN)[0]
        return abs(f - t) / t

    errors = [rel(fit_a, truth_a), rel(fit_b, truth_b), rel(fit_c, truth_c), np.inf]
    assert errors[0] == pytest.approx((1.1 * 256 - 266) / 266)
    assert errors[2] == pytest.approx(2 * (200 ** (7 / 3) - 200**2) / (10 + 2 * 200**2))
    second, third = sorted(errors)[1:3]
    assert result.median_error == pytest.approx((second + third) / 2)
    assert result.p90_error == math.inf


def test_lead_order_must_be_right_for_every_parameter():
    truth = model(1.0, (1.0, (Factor("p", F(1)), Factor("n", F(2)))))
    half_right = model(1.0, (1.0, (Factor("p", F(1)), Factor("n", F(1)))))
    result = score([truth], {"k": Fit.from_model(half_right, POINT_PN)}, POINT_PN)
    assert result.lead_order == 0.0
    assert result.structure == 0.0


def test_falling_lead_term_does_not_count_as_the_growing_one():
    point = np.array([[256.0]])
    truth = model(
        1.0, (2.0, (Factor("p", F(-1, 2)),)), (0.7, (Factor("p", F(0), 1),)), parameters=("p",)
    )
    falling = model(38.0, (-2.2, (Factor("p", F(0), 1),)), parameters=("p",))
    growing = model(20.0, (0.5, (Factor("p", F(0), 1),)), parameters=("p",))
    fits = {"k": Fit.from_model(falling, point)}
    assert fits["k"].lead_order("p") == (F(0), F(1))
    assert not fits["k"].lead_adds_cost("p")
    assert score([truth], fits, point).lead_order == 0.0
    assert score([truth], {"k": Fit.from_model(growing, point)}, point).lead_order == 1.0
    # Same shapes as the truth but a falling term: not the true structure.
    flipped = model(
        1.0, (2.0, (Factor("p", F(-1, 2)),)), (-0.7, (Factor("p", F(0), 1),)), parameters=("p",)
    )
    result = score([truth], {"k": Fit.from_model(flipped, point)}, point)
    assert (result.lead_order, result.structure) == (0.0, 0.0)


def test_falling_term_beside_a_growing_one_of_the_same_order_keeps_the_lead():
    truth = model(1.0, (1.0, (Factor("p", F(1)), Factor("n", F(1)))))
    with_falling = model(
        1.0, (1.0, (Factor("p", F(1)), Factor("n", F(1)))), (-0.1, (Factor("n", F(1)),))
    )
    fit = Fit.from_model(with_falling, POINT_PN)
    assert fit.lead_adds_cost("n") and fit.lead_adds_cost("p")
    result = score([truth], {"k": fit}, POINT_PN)
    assert (result.lead_order, result.structure) == (1.0, 0.0)


def test_sum_and_product_with_same_factors_differ_in_structure_only():
    product = model(1.0, (1.0, (Factor("p", F(1)), Factor("n", F(2)))))
    total = model(1.0, (1.0, (Factor("p", F(1)),)), (1.0, (Factor("n", F(2)),)))
    result = score([product], {"k": Fit.from_model(total, POINT_PN)}, POINT_PN)
    assert result.lead_order == 1.0
    assert result.structure == 0.0


@pytest.mark.parametrize("group", [1, 2, 3, "strong", "strong2"])
def test_oracle_scores_perfectly(group):
    rng = synthetic.function_rng(11, accuracy.STREAMS[group])
    if group in accuracy.STRONG_GROUPS:
        functions = synthetic.draw_strong_scaling(rng, 2, work=group == "strong2")
    else:
        functions = synthetic.draw_functions(rng, group, 84 if group == 1 else 60)
    for kernel_set in synthetic.kernel_sets(functions, "g", [0.0, 0.2], 11, 1):
        run = run_oracle(kernel_set)
        point = synthetic.extrapolation_point(kernel_set.parameters)
        result = score(kernel_set.truths, run.fits, point)
        assert (result.lead_order, result.structure) == (1.0, 1.0)
        assert (result.missing, result.median_error, result.p90_error) == (0, 0.0, 0.0)


def test_percentile_ranks_infinite_errors_last():
    assert percentile([0.1, 0.2, np.inf], 50) == pytest.approx(0.2)
    assert percentile([0.1, np.inf, np.inf], 90) == math.inf
    assert percentile([0.0, 1.0], 90) == pytest.approx(0.9)


def test_fits_from_extrap_driver_output():
    # The shape extrap_driver.py writes (exponents as fraction strings, parameters by index).
    document = {
        "seconds": 0.5,
        "models": {
            "k1": {
                "constant": 3.0,
                "terms": [
                    {
                        "coefficient": 2.0,
                        "factors": [
                            {"parameter": 0, "exponent": "1/3", "log_exponent": "1"},
                            {"parameter": 1, "exponent": "2", "log_exponent": "0"},
                        ],
                    },
                    {
                        "coefficient": 0.5,
                        "factors": [{"parameter": 1, "exponent": "0", "log_exponent": "-1"}],
                    },
                ],
                "model": "3.0 + 2.0 * p^(1/3) * log2(p)^(1) * n^(2) + 0.5 * log2(n)^(-1)",
                "predictions": [123.5],
            },
            "k2": {"constant": 7.0, "terms": [], "model": "7.0", "predictions": [7.0]},
            "k3": {
                "constant": 38.0,
                "terms": [
                    {
                        "coefficient": -2.2,
                        "factors": [{"parameter": 0, "exponent": "0", "log_exponent": "1"}],
                    }
                ],
                "model": "38.0 + -2.2 * log2(p)^(1)",
                "predictions": [20.4],
            },
        },
    }
    fits = fits_from_extrap(document, ("p", "n"))
    assert fits["k1"].prediction == 123.5
    assert fits["k1"].lead_order("p") == (F(1, 3), F(1))
    # 1/log2(n) grows slower than n^2: the lead order of n is n^2
    assert fits["k1"].lead_order("n") == (F(2), F(0))
    assert frozenset({("n", F(0), F(-1))}) in fits["k1"].terms
    assert fits["k2"].terms == frozenset()
    assert fits["k2"].lead_order("p") == (0, 0)
    assert fits["k1"].falling == frozenset() and fits["k1"].lead_adds_cost("p")
    assert fits["k3"].falling == frozenset({frozenset({("p", F(0), F(1))})})
    assert not fits["k3"].lead_adds_cost("p")
