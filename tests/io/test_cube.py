"""CUBE4 importer on the real Score-P cube sets from Extra-P's test data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from pycubexr import CubexParser

from perfcast.core.errors import InputError
from perfcast.core.experiment import Metric
from perfcast.io import cube
from perfcast.io.cube import read_cube
from tests.io.importer_data import CUBE_MULTI, CUBE_SINGLE, require

# The call paths and metrics Extra-P's cube reader gives for these sets (it keeps cube metric
# names with exclusive values and skips metrics without data).
EXTRAP_KERNELS = ["main", "main->init_mat", "main->zero_mat", "main->mat_mul"]
EXTRAP_METRICS = ["visits", "time", "min_time", "max_time", "PAPI_FP_OPS", "PAPI_L3_TCM",
                  "PAPI_L2_TCM"]  # fmt: skip
X_VALUES = [1, 10, 25, 50, 100, 250, 500, 1000, 2000]


@pytest.fixture(scope="module")
def single():
    return read_cube(require(CUBE_SINGLE))


@pytest.fixture(scope="module")
def multi():
    return read_cube(require(CUBE_MULTI))


def test_single_parameter_set_reads_x_from_directory_names(single):
    assert single.parameter_names == ("x",)
    assert single.points()[:, 0].tolist() == X_VALUES
    assert single.metadata["constant_parameters"] == {"y": 1.0, "z": 1.0}
    assert single.frame["repetition"].unique().tolist() == [1]


def test_multi_parameter_set_has_the_full_grid(multi):
    assert multi.parameter_names == ("x", "y", "z")
    grid = {tuple(p) for p in multi.points().tolist()}
    assert grid == {(x, y, z) for x in (1, 10, 25) for y in (1, 10, 25) for z in (1, 10, 25)}
    assert "constant_parameters" not in multi.metadata


def test_kernels_and_metrics_compared_with_extrap(single, multi):
    for experiment in (single, multi):
        assert experiment.kernels == EXTRAP_KERNELS
        exclusive = [m for m in experiment.metric_names if not m.endswith("_inclusive")]
        assert exclusive == EXTRAP_METRICS
        inclusive = [m for m in experiment.metric_names if m.endswith("_inclusive")]
        assert inclusive == ["visits_inclusive", "time_inclusive", "PAPI_FP_OPS_inclusive",
                             "PAPI_L3_TCM_inclusive", "PAPI_L2_TCM_inclusive"]  # fmt: skip
    assert single.metadata["metrics_without_data"] == {"bytes_put": 9, "bytes_get": 9}
    assert single.metrics["time"] == Metric("time", "s")
    assert single.metrics["visits"] == Metric("visits", "count")
    assert single.metrics["PAPI_FP_OPS"] == Metric("PAPI_FP_OPS", "count")


@pytest.mark.parametrize("x", [1, 250, 2000])
def test_values_equal_what_pycubexr_reports(single, x):
    frame = single.frame[single.frame["x"] == x].set_index(["kernel", "metric"])["value"]
    with CubexParser(str(CUBE_SINGLE / f"mm.x{x}y1z1.r1" / "profile.cubex")) as parsed:
        time = parsed.get_metric_values(parsed.get_metric_by_name("time"))
        visits = parsed.get_metric_values(parsed.get_metric_by_name("visits"))
        flops = parsed.get_metric_values(parsed.get_metric_by_name("PAPI_FP_OPS"))
        for cnode in parsed.all_cnodes():
            kernel = EXTRAP_KERNELS[cnode.id]
            assert frame[(kernel, "time")] == time.value(cnode, convert_to_exclusive=True)
            assert frame[(kernel, "time_inclusive")] == time.value(cnode)
            assert frame[(kernel, "visits")] == visits.value(cnode)
            assert frame[(kernel, "PAPI_FP_OPS")] == flops.value(cnode, convert_to_exclusive=True)
    # Exclusive and inclusive differ where a region has children, and inclusive time of main
    # is its exclusive time plus its callees' time.
    callees = sum(frame[(k, "time_inclusive")] for k in EXTRAP_KERNELS[1:])
    assert frame[("main", "time_inclusive")] == pytest.approx(frame[("main", "time")] + callees)
    assert frame[("main", "visits")] == 1
    assert frame[("main->init_mat", "visits")] == 2


def test_explicit_pattern_gives_the_same_experiment(multi):
    named = read_cube(CUBE_MULTI, pattern="mm.x{x}y{y}z{z}.r{rep}")
    assert named.parameter_names == ("x", "y", "z")
    assert named.frame.equals(multi.frame)


def test_pattern_without_repetition_numbers_repetitions_from_zero(single):
    named = read_cube(CUBE_SINGLE, pattern="mm.x{x}y{y}z{z}.r*")
    assert named.frame["repetition"].unique().tolist() == [0]
    assert named.frame.drop(columns="repetition").equals(single.frame.drop(columns="repetition"))


def test_profile_files_and_sniffing():
    assert len(cube.profile_files(CUBE_MULTI)) == 27
    assert cube.sniff(CUBE_SINGLE, "")
    assert cube.sniff(CUBE_SINGLE / "mm.x1y1z1.r1", "")
    assert not cube.sniff(CUBE_SINGLE.parent.parent / "text", "")


def make_set(root: Path, names: list[str]) -> list[Path]:
    """A cube set of copies of one real profile under the given run directory names."""
    source = require(CUBE_SINGLE) / "mm.x10y1z1.r1" / "profile.cubex"
    files = []
    for name in names:
        (root / name).mkdir(parents=True)
        files.append(Path(shutil.copy(source, root / name / "profile.cubex")))
    return files


def test_corrupt_profile_is_named(tmp_path):
    files = make_set(tmp_path, ["mm.x1.r1", "mm.x2.r1", "mm.x3.r1"])
    files[1].write_bytes(files[1].read_bytes()[:2000])
    with pytest.raises(InputError, match="not a readable CUBE4 .cubex file") as error:
        read_cube(tmp_path)
    assert error.value.source == str(files[1])


def test_directory_without_profiles(tmp_path):
    (tmp_path / "mm.x1.r1").mkdir()
    with pytest.raises(InputError, match="no .cubex profiles") as error:
        read_cube(tmp_path)
    assert error.value.source == str(tmp_path)


def test_pattern_that_does_not_match_a_directory_name(tmp_path):
    make_set(tmp_path, ["mm.x1.r1", "mm.x2.r1", "run-x3"])
    with pytest.raises(InputError, match="'run-x3' does not match the pattern") as error:
        read_cube(tmp_path, pattern="mm.x{x}.r{rep}")
    assert error.value.source == str(tmp_path / "run-x3")


def test_directory_names_without_parameters(tmp_path):
    make_set(tmp_path, ["scorep-a", "scorep-b"])
    with pytest.raises(InputError, match="cannot read parameters from the name 'scorep-a'"):
        read_cube(tmp_path)


def test_runs_naming_different_parameters(tmp_path):
    make_set(tmp_path, ["mm.x1y1.r1", "mm.x2z1.r1"])
    with pytest.raises(InputError, match="same parameters in the same order") as error:
        read_cube(tmp_path)
    assert error.value.source == str(tmp_path / "mm.x2z1.r1")


def test_same_point_and_repetition_twice(tmp_path):
    files = make_set(tmp_path, ["mm.x1.r1", "mm.x1.0.r1", "mm.x2.r1"])
    with pytest.raises(InputError, match="same parameters \\(x=1\\) and repetition 1") as error:
        read_cube(tmp_path)
    assert error.value.source in {str(f) for f in files[:2]}


def test_repetitions_from_names(tmp_path):
    make_set(tmp_path, ["mm.x1.r1", "mm.x1.r2", "mm.x2.r1", "mm.x2.r2"])
    experiment = read_cube(tmp_path)
    assert sorted(experiment.frame["repetition"].unique()) == [1, 2]
    assert experiment.frame.groupby("x")["repetition"].nunique().tolist() == [2, 2]


def test_cube_rejects_metadata_parameters():
    with pytest.raises(InputError, match="no run metadata"):
        read_cube(CUBE_SINGLE, params={"mpi.world.size": "p"})


def test_a_value_that_is_not_finite_is_refused_naming_file_metric_and_call_path(tmp_path):
    # A real profile with its first data value replaced by NaN, written uncompressed (the
    # plain CUBEX.DATA layout pycubexr reads beside the zlib one).
    import struct
    import tarfile

    from pycubexr.parsers.data_parser import decompress_data

    files = make_set(tmp_path, ["mm.x1.r1", "mm.x2.r1", "mm.x3.r1"])
    unpacked = tmp_path / "unpacked"
    with tarfile.open(files[2]) as archive:
        archive.extractall(unpacked, filter="data")
    data = unpacked / "1.data"  # time (0 holds visits, as integers)
    with data.open("rb") as stream:
        assert stream.read(11) == b"ZCUBEX.DATA"
        raw = bytearray(decompress_data(stream, "<"))
    raw[:8] = struct.pack("<d", float("nan"))
    data.write_bytes(b"CUBEX.DATA" + bytes(raw))
    with tarfile.open(files[2], "w") as archive:
        for member in sorted(unpacked.iterdir()):
            archive.add(member, arcname=member.name)
    with pytest.raises(InputError, match="not a finite number") as error:
        read_cube(tmp_path)
    assert error.value.source == str(files[2]) and "call path" in str(error.value)
