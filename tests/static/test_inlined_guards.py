"""Inlined code keeps the guard of its call site: an if block's count, its probability
annotation, 0 for probability 0 (never NaN), undefined naming a guard nobody can count."""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.instruction_mix import COUNT_KEYS, instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "guarded_inline.c"
PARAMETERS = ("n", "iters")
CLANG = shutil.which("clang") or shutil.which("clang-16")
needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed"
)


def _build(compiler: str, level: str, source: Path, directory: Path) -> Path:
    binary = directory / f"{source.stem}_{Path(compiler).name}{level}"
    subprocess.run([compiler, "-g", level, "-o", str(binary), str(source)], check=True)
    return binary


@needs_valgrind
@pytest.mark.parametrize(
    ("compiler", "level"),
    [("gcc", "-O1"), ("gcc", "-O2"), ("gcc", "-O3"), ("clang", "-O1"), ("clang", "-O2")],
)
def test_guarded_inlined_calls_match_callgrind(tmp_path, compiler, level):
    path = CLANG if compiler == "clang" else shutil.which("gcc")
    if path is None:
        pytest.skip(f"{compiler} is not installed")
    binary_path = _build(path, level, SOURCE, tmp_path)
    binary = read_binary(binary_path)
    mix = instruction_mix(binary, analyze([SOURCE], list(PARAMETERS)), PARAMETERS)
    values = {"n": 1000, "iters": 10}
    profile = read_callgrind(run_callgrind(binary_path, (1000, 10), tmp_path))
    measured = measured_mix(binary, profile)
    checked = 0
    split = False
    for name, function in mix.functions.items():
        if function.counts is None:
            reason = function.undef_reason or ""
            if (compiler, level) == ("gcc", "-O3") and name == "step":
                # gcc -O3 splits step's loop at `t < iters / 2` into two machine loops run one
                # after the other. Counted as a loop and its remainder, step was +0.45 % here
                # but +20 % at n = 2, iters = 1000: a wrong model that only happened to be
                # within 1 % at these values, so undefined is the correct answer (static24).
                assert "implement source loop step:loop@18 one after the other" in reason
                split = True
                continue
            if name == "main" and "inconsistent with the machine control flow" in reason:
                # main's few instructions (under 1000) count its `argc != 3` return once, which
                # no run with the right arguments takes: the flow check (issue 20, flow20)
                continue
            assert "inlined at every call site" in reason, reason
            continue
        predicted = function.evaluate(values)
        assert all(math.isfinite(predicted[key]) for key in COUNT_KEYS)
        truth = measured[name]["total"]
        if truth > 1000:
            assert abs(predicted["total"] / truth - 1) <= 0.01, (name, predicted, truth)
            checked += 1
    assert checked == (0 if split else 1)  # step, or main with step inlined


def test_probability_zero_makes_the_inlined_callee_contribute_nothing(tmp_path):
    binary = read_binary(_build("gcc", "-O1", SOURCE, tmp_path))
    assert any(
        frame.callee == "smooth"
        for insn in binary.functions["step"].instructions
        for frame in insn.inlined
    ), "gcc -O1 inlines smooth into step"
    report = analyze([SOURCE], list(PARAMETERS))
    assert report.kernel("smooth").count == 0
    # the same lines with the annotation at probability 1: the smooth loop runs every time
    always = tmp_path / "always.c"
    always.write_text(SOURCE.read_text().replace("probability(0)", "probability(1)"))
    report_always = analyze([always], list(PARAMETERS))
    at = {"n": 1000, "iters": 10}
    never = instruction_mix(binary, report, PARAMETERS).functions["step"].evaluate(at)
    taken = (
        instruction_mix(binary, _renamed(report_always, SOURCE), PARAMETERS)
        .functions["step"]
        .evaluate(at)
    )
    assert all(math.isfinite(value) for value in never.values())
    # at least one instruction per iteration of the smooth loop, which probability 0 drops
    assert taken["total"] - never["total"] >= at["iters"] * (at["n"] - 1)
    assert taken["fp_scalar"] - never["fp_scalar"] >= at["iters"] * (at["n"] - 1)


def _renamed(report, source: Path):
    """The report of a copy of the source, its kernels pointing at the original file."""
    import dataclasses

    return dataclasses.replace(
        report,
        kernels=[dataclasses.replace(k, file=str(source)) for k in report.kernels],
        branches=[dataclasses.replace(b, file=str(source)) for b in report.branches],
    )


@needs_valgrind
def test_a_data_guard_around_an_inlined_call_is_undefined_naming_it(tmp_path):
    source = tmp_path / "data_guard.c"
    source.write_text(SOURCE.read_text().replace("if (t < iters / 2)", "if (a[t % n] > 0.5)"))
    binary = read_binary(_build("gcc", "-O1", source, tmp_path))
    mix = instruction_mix(binary, analyze([source], list(PARAMETERS)), PARAMETERS)
    step = mix.functions["step"]
    assert step.counts is None
    assert "step:if@22:then" in (step.undef_reason or "")
    assert "condition at line 22" in (step.undef_reason or "")
