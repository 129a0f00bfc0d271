"""Where the real-tool test files live (``tests/data``), and small helpers the importer tests
share."""

from __future__ import annotations

import shutil
from pathlib import Path

TESTDATA = Path(__file__).resolve().parents[1] / "data"
CALI_SERIES = TESTDATA / "caliper" / "mpi_scaling_cali"
CUBE_SINGLE = TESTDATA / "extrap" / "cubeset" / "single_parameter"
CUBE_MULTI = TESTDATA / "extrap" / "cubeset" / "multi_parameter"
RANKS = (27, 64, 125, 216, 343)


def require(path: Path) -> Path:
    """``path``, which the repository carries (a missing one is a broken checkout)."""
    assert path.exists(), f"test data missing from the repository: {path}"
    return path


def copy_cali_series(target: Path) -> list[Path]:
    """Copy the five real .cali profiles into ``target`` (to alter one of them in a test)."""
    target.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(require(CALI_SERIES) / f"{p}_cores.cali", target)) for p in RANKS]
