"""The drawn-campaign benchmark end to end on a few runs (real mpirun, so marked slow)."""

from __future__ import annotations

import shutil

import pytest

from benchmarks.drawn_campaign import main


@pytest.mark.slow
def test_the_benchmark_reports_timing_and_errors(capsys):
    if shutil.which("mpicc") is None or shutil.which("mpirun") is None:
        pytest.skip("needs mpicc and mpirun")
    assert main(["--runs", "10", "--trees", "10"]) == 0
    lines = capsys.readouterr().out.splitlines()
    timing = next(line for line in lines if line.startswith("| 10 |"))
    bare, measured, ratio = (cell.strip() for cell in timing.strip("|").split("|")[1:])
    assert float(measured.removesuffix(" s")) / float(bare.removesuffix(" s")) == pytest.approx(
        float(ratio), abs=0.01
    )
    errors = lines[-1].strip("|").split("|")
    assert int(errors[0]) == 10 and int(errors[1]) > 10
    assert all(cell.strip().endswith("%") for cell in errors[2:])
