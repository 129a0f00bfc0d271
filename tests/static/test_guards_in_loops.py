"""Guards inside loops found on NAS IS (verify20b, F7 and F8): an unbraced ``if`` in an unbraced
``for``, and an inlined function's one-time set-up under a run-time flag. Both were counted in
every iteration with a note calling them "a ?: operator, a && or || condition" (+2.4 % to
+33 % on the descents loop, +7.6 % on IS's create_seq); gcc -O2 moves the set-up loop out of
the calling loop (unswitching), and the two machine loops shared the source loop's count
(-64 %, silently). Each case builds ``programs/guards_in_loops.c`` with the real compiler
and compares with callgrind.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, static_profiled_and_measured  # noqa: E402

SOURCE = PROGRAMS_DIR / "guards_in_loops.c"
CLANG = shutil.which("clang-16")
N = 4096

needs_tools = pytest.mark.skipif(
    shutil.which("valgrind") is None or shutil.which("gcc") is None,
    reason="valgrind and gcc are needed",
)


def _mixes(compiler: str, level: str, tmp_path: Path, source: Path = SOURCE):
    """Static mix, mix with the run's profile, and callgrind's totals per function."""
    binary_path = tmp_path / f"guards_{Path(compiler).name}{level}"
    debug = ["-gdwarf-4"] if "clang" in compiler else []
    subprocess.run([compiler, "-g", *debug, level, "-o", str(binary_path), str(source)], check=True)
    return static_profiled_and_measured(binary_path, source, ["n"], (N,), tmp_path)


def _close(function, truth: float) -> bool:
    return abs(function.evaluate({"n": N})["total"] / truth - 1) < 0.01


BUILDS = [("gcc", level) for level in ("-O0", "-O1", "-O2", "-O3")]
BUILDS += [(CLANG, level) for level in ("-O0", "-O1", "-O2", "-O3")] if CLANG else []


@needs_tools
@pytest.mark.slow
@pytest.mark.parametrize(("compiler", "level"), BUILDS)
def test_each_total_is_within_one_percent_or_undefined(tmp_path, compiler, level):
    static, profiled, truth = _mixes(compiler, level, tmp_path)
    for name in ("descents", "series"):
        function = static.functions[name]
        if function.counts is not None:
            assert _close(function, truth[name]), name
        else:
            assert "line" in function.undef_reason or "loop" in function.undef_reason
        with_profile = profiled.functions[name]
        # gcc -O3's descents() stays undefined with a profile: a remainder block after a loop
        # of 4 iterations per pass (perfcast.static.epilogues), not a guard
        if with_profile.counts is not None:
            assert _close(with_profile, truth[name]), name


@needs_tools
@pytest.mark.parametrize("level", ["-O0", "-O1"])
def test_an_unbraced_if_in_a_loop_is_named_as_its_guard(tmp_path, level):
    static, _, _ = _mixes("gcc", level, tmp_path)
    function = static.functions["descents"]
    assert function.counts is None
    assert "descents:if@13:then" in function.undef_reason, function.undef_reason


@needs_tools
def test_an_inlined_set_up_under_a_flag_is_named_as_its_guard(tmp_path):
    static, _, _ = _mixes("gcc", "-O1", tmp_path)
    function = static.functions["series"]
    assert function.counts is None
    assert "scaled:if@23:then" in function.undef_reason, function.undef_reason


@needs_tools
def test_a_probability_pragma_on_the_inlined_guard_gives_a_count(tmp_path):
    """Annotated as (almost) never taken, the set-up counts 0 times per call: within 1 %."""
    text = SOURCE.read_text().replace(
        "    /* SETUP GUARD */\n", "#pragma perfcast probability(0)\n"
    )
    source = tmp_path / "annotated.c"
    source.write_text(text)
    static, _, truth = _mixes("gcc", "-O1", tmp_path, source)
    function = static.functions["series"]
    assert function.counts is not None, function.undef_reason
    assert _close(function, truth["series"])


@needs_tools
def test_a_set_up_loop_moved_out_of_its_loop_is_undefined_then_measured(tmp_path):
    """gcc -O2 tests the flag once before the calling loop and runs the set-up loop there."""
    static, profiled, truth = _mixes("gcc", "-O2", tmp_path)
    function = static.functions["series"]
    assert function.counts is None
    reason = function.undef_reason
    # the moved loop is matched to the set-up's source loop by the line of its back edge (then
    # its entries are the flag's block's), else left unmatched as moved
    assert "scaled:if@23:then" in reason or "moved out of it by the compiler" in reason, reason
    assert _close(profiled.functions["series"], truth["series"])
