"""Edge cases of Experiment.from_frame and Experiment.series."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from perfcast.core.errors import InputError
from perfcast.core.experiment import Experiment, Metric, Parameter


def _frame(**columns) -> pd.DataFrame:
    base = {"kernel": ["a", "a"], "metric": ["time", "time"], "p": [1, 2], "value": [1.0, 2.0]}
    base.update(columns)
    return pd.DataFrame(base)


def test_empty_table_is_rejected():
    with pytest.raises(InputError, match="the table holds no measurements"):
        Experiment.from_frame(_frame().iloc[:0], source="t.csv")


@pytest.mark.parametrize("column", ["kernel", "metric"])
def test_missing_kernel_or_metric_name_is_rejected(column):
    with pytest.raises(InputError) as caught:
        Experiment.from_frame(_frame(**{column: ["x", None]}), source="t.csv")
    assert str(caught.value) == f"t.csv: record 2: {column} name is missing"


def test_fractional_repetition_is_rejected():
    with pytest.raises(InputError, match="record 1: repetition is not an integer"):
        Experiment.from_frame(_frame(repetition=[0.5, 1]))


def test_non_finite_parameter_names_the_record():
    with pytest.raises(InputError) as caught:
        Experiment.from_frame(_frame(p=[1, np.inf]), source="t.csv")
    assert str(caught.value) == "t.csv: record 2: p is inf, not a finite number"


def test_string_numbers_are_parsed():
    experiment = Experiment.from_frame(_frame(p=["1e3", "2"]))
    assert experiment.frame["p"].tolist() == [1000.0, 2.0]


def test_duplicate_index_from_concat():
    first = _frame()
    frame = pd.concat([first, first.assign(kernel="b", value=[3.0, 4.0])])
    experiment = Experiment.from_frame(frame)
    assert experiment.frame["value"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert experiment.kernels == ["a", "b"]


def test_duplicated_repetition_is_rejected():
    frame = _frame(p=[1, 1], repetition=[0, 0])
    with pytest.raises(InputError, match="record 2: repetition 0 of kernel 'a'"):
        Experiment.from_frame(frame)


def test_metrics_keep_units_and_fill_missing_ones():
    frame = _frame(metric=["time", "visits"])
    experiment = Experiment.from_frame(frame, metrics=[Metric("time", "s")])
    assert experiment.metrics == {"time": Metric("time", "s"), "visits": Metric("visits", "")}


def test_parameters_with_roles_select_columns():
    frame = _frame(n=[10, 20], unit=["s", "s"])
    experiment = Experiment.from_frame(frame, parameters=[Parameter("n", "problem_size")])
    assert list(experiment.frame.columns) == ["kernel", "metric", "n", "repetition", "value"]
    assert experiment.parameters == (Parameter("n", "problem_size"),)


def test_series_splits_kernels_by_point_sets():
    frame = pd.DataFrame(
        {
            "kernel": ["a", "a", "a", "b", "b", "c", "c", "c"],
            "metric": ["time"] * 8,
            "p": [1, 2, 3, 1, 2, 1, 2, 3],
            "value": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0],
        }
    )
    series = Experiment.from_frame(frame).series()
    assert [s.kernels for s in series] == [["a", "c"], ["b"]]
    assert series[0].points.ravel().tolist() == [1.0, 2.0, 3.0]
    assert series[0].values[:, :, 0].tolist() == [[1.0, 2.0, 3.0], [6.0, 7.0, 8.0]]
    assert series[1].points.ravel().tolist() == [1.0, 2.0]


def test_series_pads_uneven_repetitions_with_nan():
    frame = pd.DataFrame(
        {"kernel": ["a"] * 3, "metric": ["time"] * 3, "p": [1, 1, 2], "value": [1.0, 3.0, 5.0]}
    )
    (series,) = Experiment.from_frame(frame).series()
    assert series.repetitions.tolist() == [[2, 1]]
    assert series.means.tolist() == [[2.0, 5.0]]
    assert np.isnan(series.values[0, 1, 1])


def test_series_orders_repetitions_by_number_not_by_row():
    frame = pd.DataFrame(
        {
            "kernel": ["a"] * 4,
            "metric": ["time"] * 4,
            "p": [1, 2, 1, 2],
            "repetition": [1, 1, 0, 0],
            "value": [10.0, 20.0, 11.0, 21.0],
        }
    )
    (series,) = Experiment.from_frame(frame).series()
    assert series.values.tolist() == [[[11.0, 10.0], [21.0, 20.0]]]


def test_series_keeps_kernel_order_of_first_appearance():
    frame = pd.DataFrame(
        {"kernel": ["b", "a", "b", "a"], "metric": ["t"] * 4, "p": [1, 1, 2, 2], "value": [1.0] * 4}
    )
    (series,) = Experiment.from_frame(frame).series()
    assert series.kernels == ["b", "a"]


def test_default_metric_needs_a_choice_among_several():
    experiment = Experiment.from_frame(_frame(metric=["flops", "visits"]), source="t.csv")
    with pytest.raises(InputError, match="several metrics"):
        experiment.series()


def test_a_name_with_a_lone_surrogate_is_refused_naming_its_record():
    columns = {"coordinates": {"p": [1, 2, 3]}, "values": [1.0, 2.0, 3.0], "source": "x.jsonl"}
    kernels = ["a", "b\ud800", "b\ud800"]
    with pytest.raises(InputError, match=r"x.jsonl: record 2: kernel name .* lone surrogate"):
        Experiment.from_columns(kernels, ["time"] * 3, **columns)
    with pytest.raises(InputError, match=r"x.jsonl: parameter name .* lone surrogate"):
        Experiment.from_columns(
            ["a"] * 3, ["time"] * 3, {"p\udc80": [1, 2, 3]}, [1.0, 2.0, 3.0], source="x.jsonl"
        )


def test_kernel_count_per_metric_matches_a_selection():
    frame = pd.DataFrame(
        {
            "kernel": ["a", "a", "b", "b", "c"],
            "metric": ["time", "visits", "time", "time", "visits"],
            "p": [1, 1, 1, 2, 1],
            "value": 1.0,
        }
    )
    experiment = Experiment.from_frame(frame)
    assert [experiment.kernel_count(m) for m in ("time", "visits")] == [2, 2]
    with pytest.raises(InputError, match="no metric 'flops'"):
        experiment.kernel_count("flops")
