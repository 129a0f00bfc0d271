"""An early return of an error constant under a check of the function's arguments is an error
path with probability 0 by default (issue 20 point 4, static34; verify20e J6): Embench minver's
``if (row < 2 || row > 500 || eps <= 0.0) return 999;`` left everything after it undefined ("the
function may return early", "unsupported expression (floating literal)"). A range check of
parameters joined by ``||`` and a null test of a pointer parameter now count as never taken, with
a note naming the return; a ``probability`` pragma overrides that; a single comparison (``n <=
0``) is an edge case, not an error check. The counts are checked against callgrind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from perfcast import api

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_TOOLS,
    PROGRAMS_DIR,
    assert_right_or_undefined,
    compile_c,
    static_profiled_and_measured,
)

SOURCE = PROGRAMS_DIR / "argument_check.c"


def _kernel(report, name):
    return next(k for k in report.kernels if k.name == name)


def test_range_and_null_checks_are_error_paths_with_a_note():
    report = api.analyze_source([SOURCE], ["rpt"])
    notes = [d for d in report.diagnostics if "error path" in d]
    assert any(":15:" in n and "999 at line 16" in n and "range check" in n for n in notes), notes
    assert any(":27:" in n and "999 at line 28" in n and "null pointer" in n for n in notes), notes
    # the loops after the checks are counted: a triangle of 6 rows, 16 values, per call
    counts = {k.name: k.count for k in report.kernels}
    assert str(counts["sweep:loop@17"]) == "6*rpt"
    assert str(counts["sweep:loop@18"]) == "21*rpt"
    assert str(counts["scale:loop@29"]) == "16*rpt"


def test_a_probability_pragma_overrides_the_default(tmp_path):
    source = tmp_path / "annotated.c"
    source.write_text(
        SOURCE.read_text().replace(
            "  if (rows < 2", "#pragma perfcast probability(p_bad)\n  if (rows < 2"
        )
    )
    report = api.analyze_source([source], ["rpt"])
    assert not any(":15:" in d and "error path" in d for d in report.diagnostics)
    then = next(b for b in report.branches if b.name == "sweep:if@16:then")  # one line down
    assert "p_bad" in str(then.count)


def test_a_single_comparison_is_no_error_check(tmp_path):
    source = tmp_path / "edge.c"
    source.write_text(
        "int total(int n)\n{\n  int s = 0;\n  if (n <= 0)\n    return 0;\n"
        "  for (int i = 0; i < n; i++)\n    s += i;\n  return s;\n}\n"
        "int main(void) { return total(9) == 36 ? 0 : 1; }\n"
    )
    report = api.analyze_source([source], [])
    assert not any("error path" in d for d in report.diagnostics), report.diagnostics


def _check_build(compiler, level, tmp_path):
    binary = compile_c(compiler, level, SOURCE, tmp_path / f"check_{compiler}{level}")
    static, profiled, truth = static_profiled_and_measured(binary, SOURCE, ["rpt"], (3,), tmp_path)
    for name in ("main", "sweep", "scale"):
        if truth.get(name):
            assert_right_or_undefined(static, profiled, truth, name, {"rpt": 3}, 0.01)
    return static


@pytest.mark.parametrize(("compiler", "level"), [("gcc", "-O0"), ("clang", "-O0")])
def test_checked_functions_are_counted_right(tmp_path, compiler, level):
    static = _check_build(compiler, level, tmp_path)
    for name in ("sweep", "scale"):  # defined now, not "may return early"
        assert static.functions[name].counts is not None, static.functions[name].undef_reason


@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_every_build_is_right_or_undefined(tmp_path, compiler, level):
    _check_build(compiler, level, tmp_path)


pytestmark = NEEDS_TOOLS


ALLOCATION = PROGRAMS_DIR / "allocation_check.c"


def test_null_tests_of_an_allocation_are_error_paths():
    report = api.analyze_source([ALLOCATION], ["n"])
    notes = [d for d in report.diagnostics if "error path" in d]
    assert any(":12:" in n and "reports the failed allocation" in n for n in notes), notes
    assert any(":25:" in n and "when an allocation fails" in n for n in notes), notes
    counts = {k.name: str(k.count) for k in report.kernels}
    assert counts["checked_sum:loop@14"] == "n"
    assert counts["make_matrix:loop@27"] == "n**2"


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_allocation_checks_are_counted_right_at_O0(tmp_path, compiler):
    binary = compile_c(compiler, "-O0", ALLOCATION, tmp_path / f"alloc_{compiler}")
    static, profiled, truth = static_profiled_and_measured(
        binary, ALLOCATION, ["n"], (23,), tmp_path
    )
    for name in ("checked_sum", "make_matrix"):
        assert static.functions[name].counts is not None, static.functions[name].undef_reason
        assert_right_or_undefined(static, profiled, truth, name, {"n": 23}, 0.01)


COPIES = PROGRAMS_DIR / "copied_arguments.c"


@pytest.mark.parametrize("compiler", ["gcc", "clang"])
def test_a_check_of_copied_arguments_is_an_error_path(tmp_path, compiler):
    report = api.analyze_source([COPIES], ["rpt"])
    assert any(":12:" in d and "range check" in d for d in report.diagnostics)
    assert str(next(k for k in report.kernels if k.name == "product:loop@17").count) == "27*rpt"
    binary = compile_c(compiler, "-O0", COPIES, tmp_path / f"copies_{compiler}")
    static, profiled, truth = static_profiled_and_measured(binary, COPIES, ["rpt"], (4,), tmp_path)
    assert static.functions["product"].counts is not None, static.functions["product"].undef_reason
    assert_right_or_undefined(static, profiled, truth, "product", {"rpt": 4}, 0.01)


def test_a_failed_allocation_reported_on_stdout_then_returned_is_an_error_path(tmp_path):
    # Rodinia backprop's alloc_1d_dbl (verify20f K13)
    source = tmp_path / "alloc_report.c"
    source.write_text(
        "#include <stdio.h>\n#include <stdlib.h>\n"
        "double *zeros(int n)\n{\n  double *fresh = malloc(n * sizeof(double));\n"
        '  if (fresh == NULL) {\n    printf("ALLOC: couldn\'t allocate\\n");\n'
        "    return (NULL);\n  }\n  for (int i = 0; i < n; i++)\n    fresh[i] = 0.0;\n"
        "  return fresh;\n}\n"
        'int main(void) { double *z = zeros(40); printf("%f\\n", z[3]); return 0; }\n'
    )
    report = api.analyze_source([source], [])
    assert any(":6:" in d and "reports the failed allocation" in d for d in report.diagnostics)
    assert str(next(k for k in report.kernels if k.name == "zeros:loop@10").count) == "40"
