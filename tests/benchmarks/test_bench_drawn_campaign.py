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
    cells = [cell.strip().removesuffix(" s") for cell in timing.strip("|").split("|")[1:]]
    bare, measured, ratio = (float(cell) for cell in cells)
    # The seconds are printed to 0.05 s, the ratio (of the unrounded times) to 0.005.
    rounding = 0.05 * (1 / bare + measured / bare**2) + 0.005
    assert abs(measured / bare - ratio) <= rounding
    errors = lines[-1].strip("|").split("|")
    assert int(errors[0]) == 10 and int(errors[1]) > 10
    assert all(cell.strip().endswith("%") for cell in errors[2:])
