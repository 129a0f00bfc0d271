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
from perfcast.static.callgrind import measured_loop_counts, measured_mix, read_callgrind
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


class _Without:
    """A static report missing one loop, as a report misses a loop the compiler made."""

    def __init__(self, report, loop: str) -> None:
        self.kernels = [k for k in report.kernels if k.name != loop]
        self.branches = list(report.branches)


@needs_tools
def test_a_machine_loop_without_a_source_loop_takes_its_measured_counts(tmp_path):
    """Without a profile the function is undefined naming the machine loop; with one, the
    loop's blocks take their measured counts and the function is complete (NAS CG with
    clang -O2: main stayed undefined with a profile, coverage 79.7 %)."""
    binary_path = tmp_path / "clone-O1"
    subprocess.run(["gcc", "-g", "-O1", "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    report = _Without(analyze([SOURCE], ["n", "reps"]), "scale:loop@10")
    static = instruction_mix(binary, report, ["n", "reps"]).functions["scale"]
    assert static.counts is None
    assert "has no source loop" in static.undef_reason
    run = run_callgrind(binary_path, (1000, 50), tmp_path)
    profile = read_callgrind(run)
    measured = dict(measured_loop_counts(binary, profile))
    scale = instruction_mix(binary, report, ["n", "reps"], measured=measured).functions["scale"]
    assert scale.counts is not None, scale.undef_reason
    truth = measured_mix(binary, profile)["scale"]["total"]
    predicted = scale.evaluate({"n": 1000, "reps": 50})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth)


DCE_GUARD = PROGRAMS_DIR / "dce_guard.c"


@needs_tools
@pytest.mark.parametrize("level", ["-O1", "-O2"])
def test_inlined_code_under_a_run_time_guard_takes_its_measured_counts(tmp_path, level):
    """PolyBench's polybench_prevent_dce: print_array inlined under `argc > 42 && !strcmp(...)`
    left main undefined even with --profile (0 % coverage at -O1..-O3)."""
    binary_path = tmp_path / f"dce{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary_path), str(DCE_GUARD)], check=True)
    binary = read_binary(binary_path)
    report = analyze([DCE_GUARD], ["n"])
    static = instruction_mix(binary, report, ["n"]).functions["main"]
    if static.counts is not None:
        pytest.skip("this gcc does not inline dump under the guard")
    assert "main:if@20:then" in static.undef_reason, static.undef_reason
    profile = read_callgrind(run_callgrind(binary_path, (500,), tmp_path))
    measured = dict(measured_loop_counts(binary, profile))
    main = instruction_mix(binary, report, ["n"], measured=measured).functions["main"]
    assert main.counts is not None, main.undef_reason
    truth = measured_mix(binary, profile)["main"]["total"]
    predicted = main.evaluate({"n": 500})["total"]
    assert abs(predicted / truth - 1) < 0.01, (predicted, truth, main.notes)
