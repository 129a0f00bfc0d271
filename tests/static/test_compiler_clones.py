"""A function gcc emits only as a specialized copy (``f.constprop.0``, ``f.isra.0``) is
modeled as ``f``: it runs at every call of ``f``.

Found on the NAS CG benchmark (C version): at -O2 and -O3 gcc emits ``conj_grad`` only as
``conj_grad.constprop.0``, 84 % of the program's instructions, which the mix listed as a
"compiler-made copy (not modeled)", so coverage with ``--profile`` fell from 99.7 % to 16 %.
Built with the real gcc and compared with a callgrind run.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "constprop_clone.c"

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


@needs_tools
@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_the_only_copy_of_a_function_is_counted_as_the_function(tmp_path, level):
    binary_path = tmp_path / f"clone{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    if "scale.constprop.0" not in binary.functions:
        pytest.skip("this gcc does not clone scale")
    assert "scale" not in binary.functions
    mix = instruction_mix(binary, analyze([SOURCE], ["n", "reps"]), ["n", "reps"])
    assert "scale.constprop.0" not in mix.unmodeled
    clone = mix.functions["scale.constprop.0"]
    assert clone.counts is not None, clone.undef_reason
    assert any("compiler-made copy of scale" in note for note in clone.notes), clone.notes
    measured = measured_mix(
        binary, read_callgrind(run_callgrind(binary_path, (1000, 50), tmp_path))
    )
    truth = measured["scale.constprop.0"]["total"]
    predicted = clone.evaluate({"n": 1000, "reps": 50})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)
