"""Vector loops of sizes fixed at compile time keep the size in their model (verify20d H7).

Built with ``-DN=37``, a loop over ``N`` elements vectorized by ``w`` runs the constant
``floor(37 / w)`` passes; that constant replaced the source's ``N`` and the model held at 37
only (with a note). Where ``floor(remaining / width)`` passes of the source's iterations, widest
machine loop first, give exactly the trip counts read from the binary at the values it was built
for, those expressions are kept: ``8*floor(N/2) + 10`` instead of ``154``. A loop the compiler
unrolled completely leaves no count to keep: the model then says it holds at the built values.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import sympy

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    BUILDS,
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

from perfcast.api import analyze_source, instruction_mix  # noqa: E402
from perfcast.static.binary import read_binary  # noqa: E402
from perfcast.static.callgrind import measured_mix, read_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "fixed_vectors.c"
BUILT = {"N": 37, "M": 24}
OPTIMIZED = [b for b in BUILDS if b[1] in ("-O2", "-O3")]
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


def _mixes(tmp_path: Path, compiler: str, level: str) -> tuple:
    """(static mix, mix with a profile, callgrind totals) of the N = 37, M = 24 build."""
    flags = [f"-D{name}={value}" for name, value in BUILT.items()]
    binary = tmp_path / f"vectors_{compiler}{level}"
    compile_c(compiler, level, SOURCE, binary, *flags)
    run = run_callgrind(binary, (), tmp_path)
    report = analyze_source([SOURCE], list(BUILT), flags)
    static = instruction_mix(binary, report, list(BUILT), values=BUILT)
    profiled = instruction_mix(binary, report, list(BUILT), profiles=[(BUILT, run)])
    truth = {
        n: c["total"] for n, c in measured_mix(read_binary(binary), read_callgrind(run)).items()
    }
    return static, profiled, truth


@pytest.mark.parametrize(("compiler", "level"), OPTIMIZED)
def test_fixed_size_models_are_exact_and_say_where_they_hold(tmp_path, compiler, level):
    static, profiled, truth = _mixes(tmp_path, compiler, level)
    n = sympy.Symbol("N")
    for name in ("update", "row_sums", "scale"):
        for mix in (static, profiled):
            function = mix.functions[name]
            if function.counts is None:
                assert mix is static and function.undef_reason
                continue
            assert abs(function.evaluate(BUILT)["total"] / truth[name] - 1) < 0.01, name
            total = sympy.sympify(function.counts["total"])
            if n not in total.free_symbols:
                # the size is gone from the model: it must say so
                assert any("built value" in note for note in function.notes), function.notes


def test_the_vector_loop_keeps_its_passes_in_the_size(tmp_path):
    static, _, truth = _mixes(tmp_path, "gcc", "-O3")
    update = static.functions["update"]
    assert update.counts is not None, update.undef_reason
    total = sympy.sympify(update.counts["total"])
    assert total.has(sympy.floor) and sympy.Symbol("N") in total.free_symbols, total
    assert update.evaluate(BUILT)["total"] == truth["update"]
    assert any("floor(N/2) passes of 2 iterations" in note for note in update.notes)


def test_a_model_in_a_size_fixed_at_compile_time_says_so(tmp_path):
    # gcc -O0 keeps every loop, so the model is in N; its multiplications by constant strides
    # are this build's (shifts and adds at one size, an imul at another): a note says so
    static, _, truth = _mixes(tmp_path, "gcc", "-O0")
    update = static.functions["update"]
    assert update.counts is not None, update.undef_reason
    assert sympy.Symbol("N") in sympy.sympify(update.counts["total"]).free_symbols
    assert update.evaluate(BUILT)["total"] == truth["update"]
    assert any("N is a constant of this build (N = 37)" in note for note in update.notes)
