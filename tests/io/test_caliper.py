"""Caliper importer on the real LULESH scaling series (27..343 ranks)."""

from __future__ import annotations

import json
from pathlib import Path

import caliperreader
import numpy as np
import pytest

from perfcast.core.errors import InputError
from perfcast.core.experiment import Metric
from perfcast.io import caliper
from perfcast.io.caliper import UNANNOTATED, read_caliper
from perfcast.io.caliper_metrics import caliper_metric
from tests.io.importer_data import CALI_SERIES, RANKS, copy_cali_series, require

AVG = "time_inclusive_rank_avg"
TOTAL = "time_inclusive_rank_sum"
LEAPFROG = "main->lulesh.cycle->LagrangeLeapFrog"


@pytest.fixture(scope="module")
def series():
    return read_caliper(require(CALI_SERIES))


def raw_profile(ranks: int):
    reader = caliperreader.CaliperReader()
    reader.read(str(CALI_SERIES / f"{ranks}_cores.cali"))
    return reader


def test_parameters_are_detected_from_varying_metadata(series):
    assert series.parameter_names == ("p",)
    assert series.parameters[0].role == "processes"
    assert series.points()[:, 0].tolist() == list(RANKS)
    assert series.metadata["parameter_keys"] == {"mpi.world.size": "p"}
    # jobsize equals mpi.world.size and numhosts follows from it: neither is a parameter.
    assert series.metadata["dependent_keys"] == {
        "jobsize": ["mpi.world.size"],
        "numhosts": ["mpi.world.size"],
    }
    assert series.metadata["profile_metadata"]["problem_size"] == "30"


def test_metrics_are_named_from_the_caliper_attributes(series):
    assert series.metrics == {
        f"time_inclusive_rank_{s}": Metric(f"time_inclusive_rank_{s}", "s")
        for s in ("min", "max", "avg", "sum")
    }


def test_kernels_are_the_region_call_paths(series):
    kernels = set(series.kernels)
    assert len(kernels) == 46
    assert UNANNOTATED in kernels
    assert "main->lulesh.cycle->TimeIncrement->MPI_Allreduce" in kernels
    per_run = series.frame.groupby("p")["kernel"].nunique()
    assert per_run.tolist() == [46] * 5


@pytest.mark.parametrize("ranks", RANKS)
def test_values_equal_what_caliper_reader_reports(series, ranks):
    reader = raw_profile(ranks)
    checked = 0
    for record in reader.records:
        path = record.get("path")
        if not path or not isinstance(path, list) or path[-1] not in ("main", "LagrangeLeapFrog"):
            continue
        kernel = "->".join(path)
        for attribute, metric in (
            ("avg#inclusive#sum#time.duration", AVG),
            ("sum#inclusive#sum#time.duration", TOTAL),
            ("max#inclusive#sum#time.duration", "time_inclusive_rank_max"),
        ):
            frame = series.frame
            rows = frame[(frame.kernel == kernel) & (frame.metric == metric) & (frame.p == ranks)]
            assert rows["value"].tolist() == [float(record[attribute])]
            checked += 1
    assert checked == 6


def test_explicit_metadata_keys_and_repetition(tmp_path):
    experiment = read_caliper(CALI_SERIES, params={"mpi.world.size": "p", "numhosts": "h"})
    assert experiment.parameter_names == ("p", "h")
    hosts = experiment.frame.groupby("p")["h"].first()
    assert hosts.tolist() == [1.0, 2.0, 4.0, 6.0, 10.0]
    assert "dependent_keys" not in experiment.metadata


def test_parameters_from_a_file_name_pattern_match_the_metadata(series):
    named = read_caliper(CALI_SERIES, pattern="{p}_cores")
    assert named.parameter_names == ("p",)
    key = ["kernel", "metric", "p"]
    left = named.frame.sort_values(key).reset_index(drop=True)
    right = series.frame.sort_values(key).reset_index(drop=True)
    assert left.equals(right)


def test_constant_parameters_are_dropped_and_recorded():
    experiment = read_caliper(CALI_SERIES, pattern="{p}_cores", params={"problem_size": "n"})
    assert experiment.parameter_names == ("p",)
    assert experiment.metadata["constant_parameters"] == {"n": 30.0}


def test_single_profile_keeps_its_constant_parameter():
    experiment = read_caliper(CALI_SERIES / "64_cores.cali", params={"mpi.world.size": "p"})
    assert experiment.points().tolist() == [[64.0]]


def test_metric_name_mapping_keeps_inclusive_and_exclusive_apart():
    def name(attribute, unit=None):
        return caliper_metric(attribute, unit).metric

    assert name("sum#time.duration") == Metric("time", "s")
    assert name("inclusive#sum#time.duration", "sec") == Metric("time_inclusive", "s")
    assert name("avg#sum#time.duration") == Metric("time_rank_avg", "s")
    assert name("sum#time.duration.ns") == Metric("time", "ns")
    assert name("count") == Metric("visits", "count")
    assert name("sum#count") == Metric("visits_rank_sum", "count")
    assert name("avg#time.duration") == Metric("time_avg", "s")
    assert name("sum#papi.PAPI_TOT_CYC") == Metric("papi.PAPI_TOT_CYC", "")
    assert caliper_metric("mpi.rank") is None
    assert caliper_metric("min#min#aggregate.slot") is None


def json_split_from_cali(source: Path, target: Path) -> Path:
    """Write the records of a real .cali file in json-split layout (cali-query's -O json-split,
    which hatchet reads); built here from caliper-reader's view of the file."""
    reader = caliperreader.CaliperReader()
    reader.read(str(source))
    metrics = reader.globals["spot.metrics"].split(",")
    nodes: list[dict] = []
    index: dict[tuple, int] = {}
    data = []
    for record in reader.records:
        path = record.get("path")
        node = None
        if path:
            steps = [path] if isinstance(path, str) else path
            for depth in range(1, len(steps) + 1):
                key = tuple(steps[:depth])
                if key not in index:
                    index[key] = len(nodes)
                    entry = {"label": key[-1], "column": "path"}
                    if depth > 1:
                        entry["parent"] = index[key[:-1]]
                    nodes.append(entry)
            node = index[tuple(steps)]
        data.append([node, *(float(record[m]) for m in metrics)])
    column_metadata = [{"is_value": False}] + [
        {"is_value": True, "attribute.unit": reader.attribute(m).get("attribute.unit")}
        for m in metrics
    ]
    document = {
        "data": data,
        "columns": ["path", *metrics],
        "column_metadata": column_metadata,
        "nodes": nodes,
        **{k: str(v) for k, v in reader.globals.items()},
    }
    target.write_text(json.dumps(document))
    return target


def test_json_split_files_read_like_the_cali_files(tmp_path, series):
    for ranks in RANKS:
        json_split_from_cali(CALI_SERIES / f"{ranks}_cores.cali", tmp_path / f"{ranks}.json")
    assert caliper.sniff(tmp_path / "27.json", (tmp_path / "27.json").read_text()[:8192])
    assert caliper.sniff(tmp_path, "")
    experiment = read_caliper(tmp_path)
    assert experiment.metrics == series.metrics
    key = ["kernel", "metric", "p"]
    left = experiment.frame.sort_values(key).reset_index(drop=True)
    right = series.frame.sort_values(key).reset_index(drop=True)
    assert left.equals(right)


def test_per_rank_records_reduce_across_ranks(tmp_path):
    document = {
        "data": [[0, 0, 1.0, 3], [0, 1, 3.0, 5], [1, 0, 0.5, 1], [1, 1, 1.5, 1], [None, 0, 2.0, 1]],
        "columns": ["path", "mpi.rank", "sum#time.duration", "sum#rc.count"],
        "column_metadata": [
            {"is_value": False},
            {"is_value": True},
            {"is_value": True, "attribute.unit": "sec"},
            {"is_value": True},
        ],
        "nodes": [{"label": "main", "column": "path"}, {"label": "solve", "column": "path",
                                                          "parent": 0}],
        "mpi.world.size": "2",
    }  # fmt: skip
    path = tmp_path / "ranks.json"
    path.write_text(json.dumps(document))
    for statistic, main_time, solve_visits in (("avg", 2.0, 1.0), ("max", 3.0, 1.0),
                                               ("sum", 4.0, 2.0)):  # fmt: skip
        experiment = read_caliper(path, params={"mpi.world.size": "p"}, rank_statistic=statistic)
        values = experiment.frame.set_index(["kernel", "metric"])["value"]
        assert values[("main", f"time_rank_{statistic}")] == main_time
        assert values[("main->solve", f"visits_rank_{statistic}")] == solve_visits
        assert values[(UNANNOTATED, f"time_rank_{statistic}")] == 2.0
        assert experiment.metrics[f"time_rank_{statistic}"].unit == "s"


def test_imported_series_models_total_time_against_mpi_world_size(series):
    try:
        from perfcast.model import fit
    except ImportError:
        pytest.skip("perfcast.model.fit is not on this branch yet")
    # Five single-repetition points: the default F-test level (0.001) admits no term, so this
    # uses alpha=0.05.
    (main,) = fit(series.select(kernels="main"), modeler="pmnf", metric=TOTAL, alpha=0.05)
    exponent, _ = main.lead_order("p")
    # Total time is the sum over ranks of a roughly constant per-rank time: about linear in p.
    assert 0.5 <= exponent <= 1.5
    measured = series.select(kernels="main", metric=TOTAL).frame
    predicted = main.evaluate(measured[["p"]].to_numpy())
    assert np.allclose(predicted, measured["value"], rtol=0.25)
    models = fit(series, modeler="pmnf", metric=AVG)
    assert sorted(m.kernel for m in models) == sorted(series.kernels)


def test_corrupt_profile_is_named(tmp_path):
    files = copy_cali_series(tmp_path)
    files[2].write_bytes(files[2].read_bytes()[:9000])
    with pytest.raises(InputError, match="not a readable Caliper .cali file") as error:
        read_caliper(tmp_path)
    assert error.value.source == str(files[2])


def test_directory_without_profiles(tmp_path):
    (tmp_path / "notes.json").write_text('{"a": 1}')
    with pytest.raises(InputError, match="no Caliper profiles") as error:
        read_caliper(tmp_path)
    assert error.value.source == str(tmp_path)


def test_pattern_that_does_not_match_a_file_name(tmp_path):
    files = copy_cali_series(tmp_path)
    files[1].rename(tmp_path / "64-cores.cali")
    with pytest.raises(InputError, match="does not match the pattern") as error:
        read_caliper(tmp_path, pattern="{p}_cores")
    assert error.value.source == str(tmp_path / "64-cores.cali")


def test_metadata_key_missing_from_one_profile(tmp_path):
    files = copy_cali_series(tmp_path)
    text = files[3].read_text()
    assert text.count("data=mpi.world.size,") == 1
    files[3].write_text(text.replace("data=mpi.world.size,", "data=mpi.world.sizes,"))
    with pytest.raises(InputError, match="no metadata key 'mpi.world.size'") as error:
        read_caliper(tmp_path, params={"mpi.world.size": "p"})
    assert error.value.source == str(files[3])


def test_metadata_that_is_not_a_number(tmp_path):
    with pytest.raises(InputError, match="'cluster' is 'opal', not a number") as error:
        read_caliper(CALI_SERIES, params={"cluster": "c"})
    assert error.value.source.endswith("27_cores.cali")


def test_profiles_without_varying_metadata_need_parameters(tmp_path):
    files = copy_cali_series(tmp_path)
    for file in files[1:]:
        file.unlink()
    (tmp_path / "again.cali").write_bytes(files[0].read_bytes())
    with pytest.raises(InputError, match="no integer metadata varies") as error:
        read_caliper(tmp_path)
    assert error.value.source == str(tmp_path)


def test_same_run_twice_is_rejected_naming_both_files(tmp_path):
    files = copy_cali_series(tmp_path)
    copy = tmp_path / "27_cores_copy.cali"
    copy.write_bytes(files[0].read_bytes())
    repeated = read_caliper(tmp_path)
    assert sorted(repeated.frame.query("p == 27")["repetition"].unique()) == [0, 1]
    with pytest.raises(InputError, match="same parameters \\(p=27\\) and repetition 1") as error:
        read_caliper(tmp_path, pattern="{p}_cores*", params={"numhosts": "rep"})
    assert {error.value.source, str(error.value).split(" as ")[-1].split(":")[0]} == {
        str(files[0]),
        str(copy),
    }


def test_repetition_from_a_metadata_key():
    experiment = read_caliper(CALI_SERIES, params={"mpi.world.size": "p", "numhosts": "rep"})
    assert experiment.parameter_names == ("p",)
    repetitions = experiment.frame.groupby("p")["repetition"].first()
    assert repetitions.tolist() == [1, 2, 4, 6, 10]


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ("{not json", "not a readable json-split file"),
        ('{"data": [], "columns": []}', "needs the keys data, columns, column_metadata, nodes"),
        (
            '{"data": [[0, 1.0, 2.0]], "columns": ["path", "sum#time.duration"],'
            ' "column_metadata": [{"is_value": false}, {"is_value": true}],'
            ' "nodes": [{"label": "main", "column": "path"}]}',
            "data row 1 does not have 2 entries",
        ),
        (
            '{"data": [[0, 1.0], [7, 2.0]], "columns": ["path", "sum#time.duration"],'
            ' "column_metadata": [{"is_value": false}, {"is_value": true}],'
            ' "nodes": [{"label": "main", "column": "path"}]}',
            "data row 2: path 7 is not a node index",
        ),
        (
            '{"data": [[0, "fast"]], "columns": ["path", "sum#time.duration"],'
            ' "column_metadata": [{"is_value": false}, {"is_value": true}],'
            ' "nodes": [{"label": "main", "column": "path"}]}',
            "record 1: sum#time.duration is 'fast', not a number",
        ),
        (
            '{"data": [[0, 1.0]], "columns": ["path", "sum#time.duration"],'
            ' "column_metadata": [{"is_value": false}, {"is_value": true}],'
            ' "nodes": [{"label": "main", "column": "path", "parent": 0}]}',
            "broken parent chain",
        ),
    ],
)
def test_malformed_json_split_files(tmp_path, document, message):
    path = tmp_path / "bad.json"
    path.write_text(document)
    with pytest.raises(InputError, match=message) as error:
        read_caliper(path, params={"x": "x"})
    assert error.value.source == str(path)
