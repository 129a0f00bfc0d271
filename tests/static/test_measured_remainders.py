"""``--profile`` fills the counts of a vectorized loop's unrolled remainder (verify20f K11:
Rodinia srad gcc -O3 ``main`` stayed undefined with a profile, coverage 4.3 %).

gcc -O3 vectorizes ``for (i < rows) { up[i] = i - 1; down[i] = i + 1; }`` 4 ints per pass and
finishes it with up to 3 straight-line copies; how many of them run the binary does not tell,
so the static count is undefined naming the block. That reason was raised for the whole
function before any measured count was looked at: the profile of the very run left ``main``
undefined. The copies now take their measured counts, with a warning that those follow the
trip count modulo the pass width (the model holds at the profiled values only).
"""

from __future__ import annotations

import sys
from pathlib import Path

from perfcast.api import analyze_source, instruction_mix
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import (  # noqa: E402
    NEEDS_BOTH_COMPILERS_AND_VALGRIND,
    PROGRAMS_DIR,
    compile_c,
    run_callgrind,
)

SOURCE = PROGRAMS_DIR / "neighbour_offsets.c"
PARAMETERS = ["rows", "cols"]
pytestmark = NEEDS_BOTH_COMPILERS_AND_VALGRIND


def test_the_profile_fills_the_remainder_copies(tmp_path):
    binary = compile_c("gcc", "-O3", SOURCE, tmp_path / "offsets")
    values = {"rows": 35, "cols": 18}  # 3 and 2 iterations left after the vector passes
    run = run_callgrind(binary, (values["rows"], values["cols"]), tmp_path)
    truth = measured_mix(read_binary(binary), read_callgrind(run))["main"]["total"]
    report = analyze_source([SOURCE], PARAMETERS)
    static = instruction_mix(binary, report, PARAMETERS).functions["main"]
    assert static.counts is None
    assert "finishes source loop main:loop@" in (static.undef_reason or "")
    profiled = instruction_mix(binary, report, PARAMETERS, profiles=[(values, run)])
    main = profiled.functions["main"]
    assert main.counts is not None, main.undef_reason  # was undefined with the profile too
    assert main.evaluate(values)["total"] == truth
    assert any(
        note.startswith("warning: blocks at") and "modulo the pass width" in note
        for note in main.notes
    ), main.notes
