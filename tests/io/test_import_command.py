"""``perfcast import`` and reading profile sets through ``read_experiment``."""

from __future__ import annotations

import importlib

import pytest

import perfcast.io
from perfcast import cli
from perfcast.core.errors import InputError
from perfcast.io import read_experiment
from perfcast.io.importers import detect_profile_format, import_profiles
from tests.io.importer_data import CALI_SERIES, CUBE_MULTI, CUBE_SINGLE, RANKS, require


@pytest.fixture
def import_only(monkeypatch):
    """The command line with only the ``import`` sub-command (others may not be merged yet)."""
    monkeypatch.setattr(cli, "COMMANDS", ("import_",))


@pytest.fixture
def profile_readers(monkeypatch):
    """The reader registry restricted to the profile formats under test."""
    monkeypatch.setattr(perfcast.io, "FORMAT_MODULES", ("caliper", "cube"))


def writer_available() -> bool:
    try:
        importlib.import_module("perfcast.io.perfcast_json")
    except ImportError:
        return False
    return all(importlib.util.find_spec(f"perfcast.io.{m}") for m in perfcast.io.FORMAT_MODULES)


def test_read_experiment_detects_caliper_and_cube_sets(profile_readers):
    require(CALI_SERIES)
    assert perfcast.io.detect_format(CALI_SERIES) == "caliper"
    assert perfcast.io.detect_format(CALI_SERIES / "27_cores.cali") == "caliper"
    assert perfcast.io.detect_format(CUBE_SINGLE) == "cube"
    assert perfcast.io.detect_format(CUBE_SINGLE / "mm.x1y1z1.r1" / "profile.cubex") == "cube"
    experiment = read_experiment(CALI_SERIES)
    assert experiment.points()[:, 0].tolist() == list(RANKS)
    assert read_experiment(CUBE_MULTI).parameter_names == ("x", "y", "z")


def test_profile_format_detection_and_mixed_paths(tmp_path):
    assert detect_profile_format(require(CALI_SERIES)) == "caliper"
    assert detect_profile_format(CUBE_MULTI) == "cube"
    with pytest.raises(InputError, match="no Caliper .* or CUBE") as error:
        detect_profile_format(tmp_path)
    assert error.value.source == str(tmp_path)
    with pytest.raises(InputError, match="different tools"):
        import_profiles([CALI_SERIES, CUBE_SINGLE])
    experiment = import_profiles([CALI_SERIES / f"{p}_cores.cali" for p in RANKS[:3]])
    assert experiment.points()[:, 0].tolist() == [27.0, 64.0, 125.0]


def test_import_command_rejects_bad_input_with_status_2(import_only, tmp_path, capsys):
    out = tmp_path / "out.json"
    status = cli.main(["import", str(tmp_path / "missing"), "-o", str(out)])
    assert status == 2
    assert "missing: no such file or directory" in capsys.readouterr().err
    status = cli.main(
        ["import", str(require(CUBE_SINGLE)), "--pattern", "mm.p{p}.r{rep}", "-o", str(out)]
    )
    assert status == 2
    err = capsys.readouterr().err
    assert "does not match the pattern 'mm.p{p}.r{rep}'" in err
    assert "Traceback" not in err
    status = cli.main(["import", str(CALI_SERIES), "--param", "jobsize=p", "--param",
                       "cluster=c", "-o", str(out)])  # fmt: skip
    assert status == 2
    assert "metadata 'cluster' is 'opal', not a number" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.skipif(not writer_available(), reason="the perfcast-json writer is not merged yet")
def test_import_command_writes_an_experiment_that_reads_back(import_only, tmp_path, capsys):
    out = tmp_path / "lulesh.json"
    status = cli.main(
        ["import", str(require(CALI_SERIES)), "--param", "mpi.world.size=p", "-o", str(out)]
    )
    assert status == 0
    assert "imported 5 runs (p), 46 kernels, 4 metrics" in capsys.readouterr().out
    back = read_experiment(out)
    original = import_profiles([CALI_SERIES], params={"mpi.world.size": "p"})
    key = ["kernel", "metric", "p"]
    assert (
        back.frame.sort_values(key)
        .reset_index(drop=True)
        .equals(original.frame.sort_values(key).reset_index(drop=True))
    )
    status = cli.main(["import", str(CUBE_MULTI), "--format", "cube", "-o", str(out)])
    assert status == 0
    assert read_experiment(out).parameter_names == ("x", "y", "z")


@pytest.mark.skipif(not writer_available(), reason="the perfcast-json writer is not merged yet")
def test_import_command_reports_how_parameters_were_found(import_only, tmp_path, capsys):
    out = tmp_path / "mm.json"
    assert cli.main(["import", str(require(CALI_SERIES)), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "parameters from metadata: mpi.world.size as p" in printed
    assert "not parameters (follow from those): jobsize, numhosts" in printed
    assert cli.main(["import", str(CUBE_SINGLE), "-o", str(out)]) == 0
    assert "constant, dropped: y=1, z=1" in capsys.readouterr().out
