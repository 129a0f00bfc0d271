"""Every shared Extra-P input loads with what Extra-P 4.2.5's own readers make of it.

EXPECTED was taken from Extra-P's readers (``benchmarks/extrap_parity.py`` compares the two in
full, value by value): parameters, number of kernels, metrics, number of points, number of values
and the sum of all values. Extra-P's metric ``""`` appears as ``<default>`` (documented in
perfcast.io.extrap_text).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.io import detect_format, read_experiment
from tests.io.conftest import EXTRAP_DATA

# path: (parameters, kernels, metrics, points, values, sum of values)
EXPECTED = {
    "text/mpa/1_param_add.txt": (("p",), 1, ("time",), 5, 10, 6181.276),
    "text/mpa/1_param_base.txt": (("p",), 1, ("time",), 3, 6, 3064.929),
    "text/mpa/1_param_base2.txt": (("p",), 1, ("time",), 4, 8, 4664.929),
    "text/mpa/1_param_base3.txt": (("p",), 1, ("time",), 4, 8, 4664.929),
    "text/mpa/1_param_base4.txt": (("p",), 1, ("time",), 3, 6, 3064.929),
    "text/mpa/1_param_base5.txt": (("p",), 1, ("time",), 3, 6, 3064.929),
    "text/mpa/1_param_base6.txt": (("p",), 1, ("time",), 3, 6, 3064.929),
    "text/mpa/1_param_base7.txt": (("p",), 1, ("time",), 4, 8, 4298.107),
    "text/mpa/1_param_base8.txt": (("p",), 1, ("time",), 4, 8, 4298.107),
    "text/mpa/1_param_gpr.txt": (("p",), 1, ("time",), 6, 12, 7330.365),
    "text/mpa/2_param_add.txt": (("p", "n"), 1, ("time",), 9, 18, 12557.017000000002),
    "text/mpa/2_param_add2.txt": (("p", "n"), 3, ("time",), 9, 54, 13647.017000000002),
    "text/mpa/2_param_base.txt": (("p", "n"), 1, ("time",), 7, 14, 8764.734),
    "text/mpa/2_param_base2.txt": (("p", "n"), 1, ("time",), 7, 14, 8764.734),
    "text/mpa/2_param_base3.txt": (("p", "n"), 1, ("time",), 7, 14, 8764.734),
    "text/mpa/2_param_gpr.txt": (("p", "n"), 1, ("time",), 10, 20, 14921.657000000003),
    "text/mpa/2_param_gpr2.txt": (("p", "n"), 3, ("time",), 10, 60, 18221.657000000003),
    "text/mpa/3_param_add.txt": (("p", "n", "s"), 1, ("time",), 13, 26, 20758.777),
    "text/mpa/3_param_base.txt": (("p", "n", "s"), 1, ("time",), 10, 20, 11200.967999999999),
    "text/mpa/3_param_gpr.txt": (("p", "n", "s"), 1, ("time",), 14, 28, 24380.217),
    "text/mpa/4_param_add.txt": (("p", "n", "s", "o"), 1, ("time",), 17, 34, 28960.536999999993),
    "text/mpa/4_param_base.txt": (("p", "n", "s", "o"), 1, ("time",), 13, 26, 13637.201999999997),
    "text/mpa/4_param_gpr.txt": (("p", "n", "s", "o"), 1, ("time",), 18, 36, 33838.777),
    "text/mpa/gpr_test_data_1.txt": (("x",), 2, ("time", "maxtime"), 4, 64, 9776.202942943703),
    "text/mpa/gpr_test_data_2.txt": (("x",), 2, ("time", "maxtime"), 5, 80, 16562.157864015368),
    "text/mpa/relearn_data.txt": (("p", "n"), 14, ("time",), 25, 700, 313934.8906346079),
    "text/one_parameter_1.txt": (("x",), 1, ("time",), 5, 30, 10864.157864015368),
    "text/one_parameter_2.txt": (("x",), 15, ("time",), 5, 375, 135745.2103190917),
    "text/one_parameter_3.txt": (("x",), 1, ("time", "flops"), 5, 50, 18099.361375878896),
    "text/one_parameter_4.txt": (("x",), 1, ("time", "flops"), 5, 50, 18099.361375878896),
    "text/one_parameter_5.txt": (("x",), 2, ("time", "flops"), 5, 100, 36198.72275175779),
    "text/one_parameter_6.txt": (("p",), 4, ("<default>",), 5, 89, 1023003358.01),
    "text/one_parameter_7.txt": (("p",), 1, ("<default>",), 5, 25, 101.7),
    "text/one_parameter_segmented_1.txt": (("p",), 1, ("runtime",), 10, 50, 1225.0),
    "text/one_parameter_segmented_2.txt": (("p",), 1, ("runtime",), 10, 50, 26484.53445297804),
    "text/one_parameter_segmented_3.txt": (("p",), 1, ("runtime",), 10, 50, 1199415.4786113282),
    "text/one_parameter_segmented_4.txt": (("p",), 2, ("runtime",), 10, 100, 2450.0),
    "text/one_parameter_segmented_5.txt": (("p",), 3, ("<default>",), 9, 79, 338.70000000000005),
    "text/one_parameter_segmented_6.txt": (("p",), 2, ("<default>",), 10, 52, 278.79999999999995),
    "text/strong_scaling/one_parameter_1.txt": (("x",), 1, ("time",), 5, 30, 10864.157864015368),
    "text/strong_scaling/one_parameter_2.txt": (("x",), 15, ("time",), 5, 375, 135745.2103190917),
    "text/strong_scaling/one_parameter_6.txt": (("p",), 4, ("<default>",), 5, 89, 1023003358.01),
    "text/strong_scaling/two_parameter_1.txt": (
        ("x", "y"),
        1,
        ("metr",),
        25,
        125,
        62299.14064690115,
    ),
    "text/strong_scaling/two_parameter_2.txt": (
        ("x", "y"),
        1,
        ("metr",),
        25,
        125,
        62299.14064690115,
    ),
    "text/strong_scaling/two_parameter_7.txt": (("x", "y"), 1, ("metr",), 25, 125, 65459.06579031),
    "text/three_parameter_1.txt": (("x", "y", "z"), 1, ("metr",), 125, 625, 8559415.331432886),
    "text/three_parameter_2.txt": (("x", "y", "z"), 1, ("metr",), 125, 625, 8559415.331432886),
    "text/three_parameter_3.txt": (("x", "y", "z"), 2, ("time",), 125, 1250, 17118830.662865773),
    "text/two_parameter_1.txt": (("x", "y"), 1, ("metr",), 25, 125, 62299.14064690115),
    "text/two_parameter_2.txt": (("x", "y"), 1, ("metr",), 25, 125, 62299.14064690115),
    "text/two_parameter_3.txt": (("x", "y"), 2, ("time", "flops"), 25, 500, 249196.56258760454),
    "text/two_parameter_4.txt": (("p", "q"), 4, ("<default>",), 5, 89, 1023003358.01),
    "text/two_parameter_5.txt": (("p", "s"), 1, ("<default>",), 25, 25, 2039.0000000000002),
    "text/two_parameter_6.txt": (("p", "s"), 1, ("<default>",), 25, 25, 2789.9453857099998),
    "text/two_parameter_7.txt": (("p", "s"), 3, ("<default>",), 25, 75, 5878.945385709999),
    "text/two_parameter_segmented_1.txt": (("x", "y"), 1, ("metr",), 60, 300, 4116072.08),
    "json/input_1.JSON": (("x",), 1, ("time",), 5, 25, 347.5),
    "json/input_10.JSON": (("x", "y", "z", "t"), 1, ("time",), 625, 3125, 5124375.0),
    "json/input_12.JSON": (("x", "y"), 1, ("time",), 25, 125, 204975.0),
    "json/input_2.JSON": (("x",), 1, ("time", "flops"), 5, 50, 81990.0),
    "json/input_3.JSON": (("x",), 2, ("time",), 5, 50, 81990.0),
    "json/input_4.JSON": (("x",), 2, ("time", "flops"), 5, 100, 163980.0),
    "json/input_5.JSON": (("x", "y"), 1, ("time",), 25, 125, 204975.0),
    "json/input_6.JSON": (("x", "y"), 1, ("time", "flops"), 25, 250, 409950.0),
    "json/input_7.JSON": (("x", "y"), 2, ("time",), 25, 250, 409950.0),
    "json/input_8.JSON": (("x", "y"), 2, ("time", "flops"), 25, 500, 819900.0),
    "json/input_9.JSON": (("x", "y", "z"), 1, ("time",), 125, 625, 1024875.0),
    "json/new/input1.json": (("x",), 1, ("time",), 5, 25, 347.5),
    "json/new/input2.json": (("x", "y"), 2, ("time", "visits"), 5, 60, 745.0),
    "jsonlines/band_matrix_2p.jsonl": (("x", "y"), 1, ("metr",), 14, 70, 85642.3743810975),
    "jsonlines/complete_matrix_2p.jsonl": (("x", "y"), 1, ("metr",), 25, 125, 62299.14064690115),
    "jsonlines/cross_matrix_2p.jsonl": (("x", "y"), 1, ("metr",), 9, 45, 50476.20718660936),
    "jsonlines/extended1.jsonl": (("x", "y"), 1, ("metr",), 25, 125, 1750.0),
    "jsonlines/extended2.jsonl": (("x", "y"), 1, ("metr",), 9, 45, 300.0),
    "jsonlines/incomplete_matrix_2p.jsonl": (("x", "y"), 1, ("metr",), 7, 35, 11177.062120160876),
    "jsonlines/input_1.jsonl": (("x", "y"), 1, ("metr",), 25, 125, 1663326617.4568288),
    "jsonlines/matrix_3p.jsonl": (("x", "y", "z"), 1, ("metr",), 13, 15, 15.0),
    "jsonlines/matrix_3p_bands.jsonl": (("x", "y", "z"), 1, ("metr",), 17, 17, 40.0),
    "jsonlines/matrix_3p_bands_incomplete.jsonl": (("x", "y", "z"), 1, ("metr",), 18, 18, 43.0),
    "jsonlines/matrix_4p.jsonl": (("a", "b", "c", "d"), 1, ("metr",), 17, 20, 20.0),
    "jsonlines/reduced.jsonl": (("x", "y"), 1, ("<default>",), 25, 125, 1750.0),
    "jsonlines/sparse_matrix_2p.jsonl": (("x", "y"), 1, ("metr",), 25, 125, 100018.81895459729),
    "jsonlines/test1.jsonl": (("x", "y"), 1, ("metr",), 25, 125, 1750.0),
    "jsonlines/test2.jsonl": (("p", "n"), 1, ("metr",), 25, 125, 714393814.2403928),
    "talpas/talpas_1.txt": (("x",), 1, ("time",), 5, 25, 9049.680687939448),
    "talpas/talpas_2.txt": (("x", "y"), 1, ("time",), 25, 125, 62299.14064690115),
    "talpas/talpas_3.txt": (("x", "y", "z"), 1, ("time",), 125, 125, 8237860000.0),
    "talpas/talpas_4.txt": (("p", "np", "pnp"), 1, ("time",), 125, 125, 8237860000.0),
    "talpas/talpas_5.txt": (("x", "y", "z", "t"), 1, ("time",), 625, 625, 106202814.56638353),
    "talpas/talpas_6.txt": (("x",), 2, ("time",), 5, 50, 18099.361375878896),
    "talpas/talpas_7.txt": (("x",), 1, ("time", "flops"), 5, 50, 18099.361375878896),
    "talpas/talpas_8.txt": (("x",), 2, ("time", "flops"), 5, 100, 36198.72275175779),
    "talpas/talpas_9.txt": (("x", "y"), 2, ("time", "flops"), 25, 500, 249196.56258760454),
}
REJECTED = {"json/input_11.JSON": "coordinate {'x': 64.0} (id 5) has no measurements"}
FORMATS = {
    "text": "extrap-text",
    "json": "extrap-json",
    "jsonlines": "extrap-jsonlines",
    "talpas": "talpas",
}


def _all_files() -> list[str]:
    files = []
    for folder in FORMATS:
        files += [
            str(p.relative_to(EXTRAP_DATA))
            for p in (EXTRAP_DATA / folder).rglob("*")
            if p.is_file()
        ]
    return sorted(files)


def test_every_file_is_covered():
    assert set(_all_files()) == set(EXPECTED) | set(REJECTED) | {"talpas/talpas_10_neg.txt"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_file_reads_like_extrap(name):
    parameters, kernels, metrics, points, values, total = EXPECTED[name]
    experiment = read_experiment(EXTRAP_DATA / name)
    assert experiment.parameter_names == parameters
    assert len(experiment.kernels) == kernels
    assert tuple(experiment.metric_names) == metrics
    assert len(experiment.points()) == points
    assert len(experiment.frame) == values
    assert math.isclose(experiment.frame["value"].sum(), total, rel_tol=1e-12)


@pytest.mark.parametrize("name", _all_files())
def test_format_detected_from_content(name):
    assert detect_format(EXTRAP_DATA / name) == FORMATS[name.split("/")[0]]


def test_point_without_measurements_is_rejected_like_extrap():
    with pytest.raises(InputError) as caught:
        read_experiment(EXTRAP_DATA / "json/input_11.JSON")
    assert str(caught.value).endswith(REJECTED["json/input_11.JSON"])
    assert "input_11.JSON" in str(caught.value)


def test_kernel_measured_at_fewer_points_is_kept():
    # Extra-P rejects this file; perfcast keeps all 35 values and models each point set apart.
    experiment = read_experiment(EXTRAP_DATA / "talpas/talpas_10_neg.txt")
    frame = experiment.frame
    assert len(frame) == 35
    flops = frame[frame["metric"] == "flops"]
    assert sorted(set(flops["x"])) == [20.0, 30.0, 60.0]
    assert len(experiment.series("flops")[0].kernels) == 1
    assert experiment.series("flops")[0].points.ravel().tolist() == [20.0, 30.0, 60.0]


def test_one_parameter_1_exactly():
    experiment = read_experiment(EXTRAP_DATA / "text/one_parameter_1.txt")
    (series,) = experiment.series("time")
    assert series.kernels == ["compute"]
    assert series.points.ravel().tolist() == [20.0, 30.0, 40.0, 50.0, 60.0]
    assert series.values[0, 0].tolist() == [
        82.00848518948744,
        81.42023198759563,
        81.98984501217201,
        80.76019835580321,
        82.54252892405795,
        82.54252892405795,
    ]
    assert series.values[0, 4, -1] == 721.0616186790007
    assert experiment.frame["repetition"].tolist()[:6] == [0, 1, 2, 3, 4, 5]


def test_three_parameter_points_given_several_per_line():
    experiment = read_experiment(EXTRAP_DATA / "text/three_parameter_1.txt")
    points = experiment.points()
    assert points.shape == (125, 3)
    assert points[0].tolist() == [20.0, 1.0, 100.0]
    assert points[-1].tolist() == [60.0, 5.0, 500.0]


def test_call_path_kernels_and_collapsed_whitespace():
    experiment = read_experiment(EXTRAP_DATA / "text/one_parameter_2.txt")
    assert experiment.kernels[:4] == [
        "main",
        "main->merge",
        "main->merge->comp1",
        "main->merge->comp2",
    ]
    relearn = read_experiment(EXTRAP_DATA / "text/mpa/relearn_data.txt")
    assert relearn.kernels[:3] == ["main()", "Initialization", "Simulation loop"]
    assert "Update #synaptic elements delta" in relearn.kernels


def test_text_without_metric_uses_default_metric():
    experiment = read_experiment(EXTRAP_DATA / "text/one_parameter_6.txt")
    assert experiment.metric_names == ["<default>"]
    assert experiment.kernels == ["met1", "met2", "met3", "met4"]


def test_legacy_json_values_and_ids():
    experiment = read_experiment(EXTRAP_DATA / "json/input_4.JSON")
    assert experiment.kernels == ["sweep", "solve"]
    assert experiment.metric_names == ["time", "flops"]
    assert experiment.points().ravel().tolist() == [4.0, 8.0, 16.0, 32.0, 64.0]
    assert len(experiment.frame) == 100


def test_new_json_layout():
    experiment = read_experiment(EXTRAP_DATA / "json/new/input2.json")
    frame = experiment.frame
    visits = frame[(frame["metric"] == "visits") & (frame["kernel"] == "sweep")]
    assert visits[["x", "y", "value"]].to_numpy().tolist() == [
        [4.0, 10.0, 5.0],
        [8.0, 20.0, 5.0],
        [16.0, 30.0, 5.0],
        [32.0, 40.0, 5.0],
        [64.0, 50.0, 5.0],
    ]
    time = frame[(frame["metric"] == "time") & (frame["kernel"] == "sweep")]
    assert time["value"].tolist()[:5] == [3.5] * 5


def test_jsonlines_value_lists_and_repeated_points():
    listed = read_experiment(EXTRAP_DATA / "jsonlines/extended2.jsonl")
    first = listed.frame[(listed.frame["x"] == 1) & (listed.frame["y"] == 1)]
    assert first["value"].tolist() == [2.0] * 5
    assert first["repetition"].tolist() == [0, 1, 2, 3, 4]
    repeated = read_experiment(EXTRAP_DATA / "jsonlines/matrix_3p.jsonl")
    origin = repeated.frame[(repeated.frame[["x", "y", "z"]] == 1).all(axis=1)]
    assert origin["repetition"].tolist() == [0, 1, 2]
    assert repeated.kernels == ["<root>"]


def test_talpas_values():
    experiment = read_experiment(EXTRAP_DATA / "talpas/talpas_1.txt")
    frame = experiment.frame
    assert frame["value"].tolist()[:3] == [82.00848518948744, 81.42023198759563, 81.98984501217201]
    assert np.unique(frame["x"]).tolist() == [20.0, 30.0, 40.0, 50.0, 60.0]
