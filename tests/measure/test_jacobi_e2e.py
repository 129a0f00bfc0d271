"""End to end: instruction counts of the Jacobi example under callgrind, modeled exactly.

Builds ``examples/jacobi/jacobi.c`` with mpicc and the region library, runs an ``instructions``
campaign at five grid sizes (one rank, so the halo exchange is a local copy), and checks that
the models find lead order n^2 for the compute kernel and n^1 for the halo kernel. The counts
are deterministic, so the check is exact.
"""

from __future__ import annotations

import shutil
import subprocess
from fractions import Fraction
from pathlib import Path

import pytest
from campaign_helpers import REPO

from perfcast.measure.campaign import run_campaign
from perfcast.measure.spec import load_campaign

JACOBI = REPO / "examples" / "jacobi" / "jacobi.c"
REGION_LIBRARY = REPO / "src" / "perfcast" / "measure" / "c"
SIZES = [16, 32, 48, 64, 80]

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not JACOBI.exists(), reason="examples/jacobi is not on this branch"),
    pytest.mark.skipif(
        shutil.which("mpicc") is None or shutil.which("valgrind") is None,
        reason="needs OpenMPI (mpicc) and valgrind",
    ),
]


def test_jacobi_instruction_models_have_exact_lead_orders(tmp_path: Path) -> None:
    from perfcast.model import fit

    binary = tmp_path / "jacobi"
    subprocess.run(
        [
            "mpicc",
            "-O2",
            "-g",
            f"-I{REGION_LIBRARY}",
            "-o",
            str(binary),
            str(JACOBI),
            str(REGION_LIBRARY / "perfcast.c"),
            "-ldl",
            "-lm",
        ],
        check=True,
        capture_output=True,
    )
    campaign = tmp_path / "jacobi.toml"
    campaign.write_text(
        'launcher = "mpirun -np 1"\ncommand = "./jacobi {n} 4"\nmetrics = ["instructions"]\n'
        f"timeout = 300\n[parameters]\nn = {SIZES}\n"
    )
    result = run_campaign(load_campaign(campaign))
    assert result.failures == []
    experiment = result.experiment.select(kernels="jacobi_*", metric="instructions")
    frame = experiment.frame

    def counts(kernel: str) -> list[int]:
        rows = frame[frame.kernel == kernel].sort_values("n")
        assert rows.n.tolist() == SIZES
        return [int(v) for v in rows.value]

    compute, halo = counts("jacobi_compute"), counts("jacobi_halo")
    first = [b - a for a, b in zip(compute, compute[1:], strict=False)]
    assert len({b - a for a, b in zip(first, first[1:], strict=False)}) == 1  # exactly quadratic
    assert len({b - a for a, b in zip(halo, halo[1:], strict=False)}) == 1  # exactly linear

    models = {m.kernel: m for m in fit(experiment, modeler="pmnf")}
    assert models["jacobi_compute"].lead_order("n") == (Fraction(2), 0)
    assert models["jacobi_halo"].lead_order("n") == (Fraction(1), 0)
