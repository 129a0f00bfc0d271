"""Error paths (noreturn calls, failure returns) are taken with probability 0, with a note."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from perfcast.static import analyze
from perfcast.static.binary import read_binary
from perfcast.static.callgrind import measured_mix, read_callgrind
from perfcast.static.control_flow import basic_blocks, doomed
from perfcast.static.instruction_mix import instruction_mix

sys.path.insert(0, str(Path(__file__).resolve().parent))
from mix_programs import PROGRAMS_DIR, run_callgrind  # noqa: E402

SOURCE = PROGRAMS_DIR / "error_paths.c"
n = sympy.Symbol("n")


def test_a_loop_holding_noreturn_calls_is_counted_with_a_note():
    report = analyze([SOURCE], ["n"])
    loop = report.kernel("sum:loop@19")
    assert loop.count == n
    assert "error paths" in loop.note
    # fail and die run only on the error paths; main's checks do not end the counting
    assert report.kernel("fail").count == 0
    assert report.kernel("die").count == 0
    assert report.kernel("main:loop@38").count == n
    notes = [d for d in report.diagnostics if "error path" in d]
    lines = sorted(int(d.split(":")[1]) for d in notes)
    assert lines == [20, 22, 30, 34]
    assert any("ends in a call of die" in d for d in notes)  # die ends in abort
    assert any("failure status 2 from main" in d for d in notes)
    assert any("reports to stderr" in d for d in notes)


def test_a_failure_return_under_a_parameter_guard_stays_an_early_return(tmp_path):
    source = tmp_path / "early.c"
    source.write_text(
        "int n;\n"
        "int main(void) {\n"
        "  if (n > 100)\n"
        "    return 1;\n"
        "  for (int i = 0; i < n; i++) ;\n"
        "  return 0;\n"
        "}\n"
    )
    report = analyze([source], ["n"])
    assert "return early at line 4" in report.kernel("main:loop@5").undef_reason


def test_a_probability_annotation_overrides_the_error_path(tmp_path):
    source = tmp_path / "p.c"
    source.write_text(
        "#include <stdlib.h>\n"
        "int n;\n"
        "int main(void) {\n"
        "  for (int i = 0; i < n; i++) {\n"
        "#pragma perfcast probability(0.5)\n"
        "    if (i % 7 == 3) {\n"
        "      for (int j = 0; j < n; j++) ;\n"
        "      exit(1);\n"
        "    }\n"
        "  }\n"
        "  return 0;\n"
        "}\n"
    )
    report = analyze([source], ["n"])
    assert report.kernel("main:loop@7").count == n**2 / 2


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
@pytest.mark.parametrize("level", ["-O0", "-O1", "-O2"])
def test_error_blocks_never_run_in_the_mix_as_callgrind_measures(tmp_path, level):
    binary_path = tmp_path / f"error_paths{level}"
    subprocess.run(["gcc", "-g", level, "-o", str(binary_path), str(SOURCE)], check=True)
    binary = read_binary(binary_path)
    blocks = basic_blocks(binary.functions["sum"])
    assert doomed(blocks), "the calls of fail and die end blocks that never run"
    mix = instruction_mix(binary, analyze([SOURCE], ["n"]), ("n",))
    measured = measured_mix(binary, read_callgrind(run_callgrind(binary_path, (1000,), tmp_path)))
    predicted = mix.functions["sum"].evaluate({"n": 1000})["total"]
    assert abs(predicted / measured["sum"]["total"] - 1) <= 0.01
    assert mix.functions["fail"].evaluate({"n": 1000})["total"] == 0


def test_many_error_paths_are_summed_up_on_stderr_and_all_kept_in_json(tmp_path):
    checks = "".join(f"  if (n == {k}) exit({k % 3 + 1});\n" for k in range(1, 15))
    source = tmp_path / "checks.c"
    source.write_text(
        "#include <stdlib.h>\nint n;\nint main(void) {\n" + checks + "  return 0;\n}\n"
    )
    command = [sys.executable, "-m", "perfcast.cli", "static", str(source), "--no-cache"]
    text = subprocess.run(command, capture_output=True, text=True)
    assert text.returncode == 0, text.stderr
    notes = [line for line in text.stderr.splitlines() if "error path" in line]
    assert len(notes) == 11  # ten in full, then one line for the rest
    assert notes[-1].startswith("... and 4 more branches counted as an error path")
    document = subprocess.run([*command, "--format", "json"], capture_output=True, text=True)
    assert document.returncode == 0, document.stderr
    listed = json.loads(document.stdout)["diagnostics"]
    assert sum("error path" in d for d in listed) == 14
