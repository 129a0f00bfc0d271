from fractions import Fraction

import numpy as np
import pytest
import sympy

from perfcast.core.errors import InputError
from perfcast.core.function import Factor, Model, Quality, Term


def example_model() -> Model:
    return Model(
        kernel="main->solve",
        metric="time",
        parameters=("p", "n"),
        constant=0.3,
        terms=(
            Term(2.1e-6, (Factor("n", 2), Factor("p", 0, 1))),
            Term(4.0, (Factor("p", Fraction(-1, 2)),)),
        ),
        quality=Quality(rss=0.01, smape=1.2, adj_r2=0.999, cv_smape=1.9, lof_p=0.41),
    )


def test_evaluate_matches_formula_vectorized():
    model = example_model()
    p = np.array([4.0, 64.0, 4096.0])
    n = np.array([10.0, 1e3, 1e6])
    expected = 0.3 + 2.1e-6 * n**2 * np.log2(p) + 4.0 / np.sqrt(p)
    np.testing.assert_allclose(model.evaluate(np.column_stack([p, n])), expected)
    np.testing.assert_allclose(model.evaluate({"p": p, "n": n}), expected)


def test_expression_and_notations():
    model = example_model()
    assert model.expression() == "0.3 + 2.1e-06*n^2*log2(p) + 4*p^(-1/2)"
    assert model.to_extrap() == "0.3 + 2.1e-06 * n^(2) * log2(p)^(1) + 4.0 * p^(-1/2)"
    assert (
        model.to_latex()
        == "0.3 + 2.1 \\cdot 10^{-6} \\cdot n^{2} \\cdot \\log_2 p + 4 \\cdot p^{-1/2}"
    )


def test_python_source_is_importable_and_exact():
    model = example_model()
    namespace: dict = {}
    exec(model.to_python("cost"), namespace)
    assert namespace["cost"](64.0, 1e3) == pytest.approx(
        model.evaluate({"p": [64.0], "n": [1e3]})[0]
    )


def test_sympy_matches_evaluation():
    model = example_model()
    expr = model.to_sympy()
    p, n = sympy.symbols("p n", positive=True)
    assert float(expr.subs({p: 64, n: 1000})) == pytest.approx(
        model.evaluate({"p": [64], "n": [1e3]})[0]
    )


def test_json_round_trip_has_design_schema():
    model = example_model()
    data = model.to_dict()
    assert set(data) == {
        "kernel",
        "metric",
        "parameters",
        "constant",
        "terms",
        "expression",
        "quality",
        "warnings",
    }
    assert data["warnings"] == []
    assert data["terms"][0]["factors"] == [
        {"parameter": "n", "exponent": 2, "log_exponent": 0},
        {"parameter": "p", "exponent": 0, "log_exponent": 1},
    ]
    assert data["terms"][1]["factors"][0]["exponent"] == -0.5
    again = Model.from_dict(data)
    assert again == model


def test_from_dict_rejects_malformed():
    with pytest.raises(InputError, match="malformed model"):
        Model.from_dict({"kernel": "k", "terms": []}, source="m.json")


@pytest.mark.parametrize(
    ("where", "value"),
    [("constant", "1.5"), ("constant", True), ("coefficient", "2"), ("coefficient", None)],
)
def test_from_dict_takes_only_json_numbers_as_coefficients(where, value):
    data = example_model().to_dict()
    if where == "constant":
        data["constant"] = value
    else:
        data["terms"][0]["coefficient"] = value
    with pytest.raises(InputError, match=f"{where} must be a number"):
        Model.from_dict(data, source="m.json")


def test_lead_order_takes_fastest_growth():
    model = example_model()
    assert model.lead_order("n") == (2, 0)
    assert model.lead_order("p") == (0, 1)  # log2(p) outgrows p^(-1/2)
    assert model.lead_term("n") == "n^2"
    constant = Model("k", "time", ("p",), 1.0)
    assert constant.lead_order("p") == (0, 0)
    assert constant.lead_term("p") == "1"


def test_factor_rejects_negative_log_exponent():
    with pytest.raises(ValueError):
        Factor("p", 1, -1)


def test_term_rejects_two_factors_of_one_parameter():
    with pytest.raises(ValueError):
        Term(1.0, (Factor("p", 1), Factor("p", 2)))


def test_wrong_number_of_columns_is_an_input_error():
    with pytest.raises(InputError, match="2 parameters"):
        example_model().evaluate(np.ones((3, 3)))
