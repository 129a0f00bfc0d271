"""Instruction mixes of optimized code against callgrind: machine loops as the truth.

gcc and clang vectorize and unroll the STREAM-like loops at -O2 and -O3; the machine loops then
run fewer times than their source loops. The counts read from the binary (trip counts of
constant-bound loops, elements per pass of vector loops) must bring every defined total within
1 % of callgrind, and a count that cannot be read must be undefined with a reason.
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
from perfcast.static.control_flow import Loop, basic_blocks
from perfcast.static.instruction_mix import instruction_mix
from perfcast.static.machine_trips import Induction, induction

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

FIXED = PROGRAMS_DIR / "stream_fixed.c"
RUNTIME = PROGRAMS_DIR / "stream_runtime.c"
COMPILERS = {"gcc": shutil.which("gcc"), "clang": shutil.which("clang") or shutil.which("clang-16")}

needs_valgrind = pytest.mark.skipif(
    shutil.which("valgrind") is None, reason="valgrind is not installed"
)


def _compile(compiler: str, level: str, source: Path, directory: Path, flags=()) -> Path:
    path = COMPILERS[compiler]
    if path is None:
        pytest.skip(f"{compiler} is not installed")
    binary = directory / f"{source.stem}_{compiler}{level}{''.join(flags).replace('-', '_')}"
    subprocess.run([path, "-g", level, *flags, "-o", str(binary), str(source)], check=True)
    return binary


def _errors(source, binary_path, parameters, values, flags, directory):
    """Per function: relative error of the predicted total, or the undefined reason."""
    report = analyze([source], list(parameters), list(flags))
    binary = read_binary(binary_path)
    mix = instruction_mix(binary, report, parameters)
    arguments = tuple(values[name] for name in parameters)
    measured = measured_mix(
        binary, read_callgrind(run_callgrind(binary_path, arguments, directory))
    )
    result = {}
    for name, function in mix.functions.items():
        truth = measured.get(name, {}).get("total", 0)
        if function.counts is None:
            result[name] = function.undef_reason
        elif truth:
            result[name] = function.evaluate(dict(values))["total"] / truth - 1
        else:
            assert function.evaluate(dict(values))["total"] == 0, name
    return result


@needs_valgrind
@pytest.mark.parametrize("level", ["-O2", "-O3"])
def test_stream_with_a_compile_time_size_is_within_one_percent_with_gcc(tmp_path, level):
    binary = _compile("gcc", level, FIXED, tmp_path)
    errors = _errors(FIXED, binary, (), {}, (), tmp_path)
    assert set(errors) == {"main", "kernels"}
    for name, error in errors.items():
        assert not isinstance(error, str), (name, error)
        assert abs(error) <= 0.01, (name, error)


@needs_valgrind
@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
@pytest.mark.parametrize("size", ["4000", "4001"])
def test_compile_time_sizes_even_and_odd(tmp_path, compiler, level, size):
    flags = (f"-DN={size}",)
    binary = _compile(compiler, level, FIXED, tmp_path, flags)
    errors = _errors(FIXED, binary, (), {}, flags, tmp_path)
    assert "main" in errors
    for name, error in errors.items():
        if isinstance(error, str):
            # only the stand-alone copy of a function inlined everywhere may stay undefined,
            # for that reason or because clang -O3 unrolled its repetition loop completely
            assert name != "main", error
            assert "inlined at every call site" in error or "unrolled completely" in error, (
                name,
                error,
            )
            continue
        assert abs(error) <= 0.01, (name, error)


@needs_valgrind
@pytest.mark.slow
@pytest.mark.parametrize("compiler", ["gcc", "clang"])
@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2", "-O3"])
def test_run_time_sizes_are_within_one_percent_or_undefined_with_the_loop(
    tmp_path, compiler, level
):
    binary = _compile(compiler, level, RUNTIME, tmp_path)
    for values in ({"n": 1001, "ntimes": 3}, {"n": 2000, "ntimes": 2}):
        errors = _errors(RUNTIME, binary, ("n", "ntimes"), values, (), tmp_path)
        assert "main" in errors
        for name, error in errors.items():
            if isinstance(error, str):
                assert "inlined at every call site" in error or "machine loop at 0x" in error
                continue
            assert abs(error) <= 0.01, (name, values, error)


def test_a_vector_loop_steps_sixteen_bytes_over_doubles(tmp_path):
    binary_path = _compile("gcc", "-O2", FIXED, tmp_path)
    function = read_binary(binary_path).functions["kernels"]
    blocks = basic_blocks(function)
    from perfcast.static.control_flow import natural_loops

    inner = [loop for loop in natural_loops(blocks) if len(loop.blocks) == 1]
    found = [induction(blocks, loop, loop.blocks) for loop in inner]
    assert found and all(f is not None for f in found)
    for item in found:
        assert item is not None
        assert (item.step, item.start, item.bound, item.stay) == (16, 0, 4000 * 8, "!=")
        assert item.trip_count() == 2000
        assert item.elements_per_iteration() == 2


@pytest.mark.parametrize(
    ("induction_", "trips"),
    [
        (Induction("rax", 1, 0, 10, "!=", 8, None), 10),
        (Induction("rax", 4, 0, 10, "!=", 8, None), None),  # 10 is never reached
        (Induction("rax", 4, 0, 10, "<", 8, None), 3),
        (Induction("rax", 4, 0, 12, "<=u", 8, None), 4),
        (Induction("rcx", -1, 10, 0, "!=", None, None), 10),
        (Induction("rcx", -3, 10, 0, ">", None, None), 4),
        (Induction("rcx", 2, 0, None, "<", 1, 8), None),  # bound unknown
    ],
)
def test_trip_counts_of_the_exit_tests(induction_, trips):
    assert induction_.trip_count() == trips


def test_elements_per_iteration_need_the_element_size_of_a_byte_offset():
    assert Induction("rax", 32, 0, None, "!=", 1, 8).elements_per_iteration() == 4
    assert Induction("rax", 4, 0, None, "!=", 8, None).elements_per_iteration() == 4
    assert Induction("rax", 32, 0, None, "!=", 1, None).elements_per_iteration() is None
    assert Induction("rax", 32, 0, None, "!=", None, 8).elements_per_iteration() is None


def test_a_loop_with_two_exits_has_no_induction(tmp_path):
    source = tmp_path / "find.c"
    source.write_text(
        "int find(const int *a, int n, int x) {\n"
        "  for (int i = 0; i < n; i++)\n"
        "    if (a[i] == x) return i;\n"
        "  return -1;\n"
        "}\n"
        "int main(void) { int a[3] = {1, 2, 3}; return find(a, 3, 2); }\n"
    )
    binary = tmp_path / "find"
    subprocess.run(["gcc", "-g", "-O2", "-o", str(binary), str(source)], check=True)
    blocks = basic_blocks(read_binary(binary).functions["find"])
    from perfcast.static.control_flow import natural_loops

    loops: list[Loop] = natural_loops(blocks)
    assert loops
    assert all(induction(blocks, loop, loop.blocks) is None for loop in loops)
