"""Error returns written through macros: decided from the tokens as written, not from the
macro definition's range (which libclang tokenized far beyond the value: 48 s for one function
of regex's ``_regex.c``)."""

from __future__ import annotations

from pathlib import Path

from perfcast.static import analyze

SOURCE = """#define FAILED (-1)
#define CHECK(x) if ((x) < 0) return FAILED
static int step(int x) {
  CHECK(x);
  if (x > 100)
    return -2;
  if (x > 50)
    return FAILED;
  return x;
}
int main(int argc, char **argv) {
  int s = 0;
  for (int i = 0; i < argc; i++)
    s += step(i);
  if (s > 1000)
    return 3;
  return 0;
}
"""


def test_error_constants_written_out_and_through_macros(tmp_path: Path):
    source = tmp_path / "errors.c"
    source.write_text(SOURCE)
    report = analyze([source], ["argc"])
    notes = sorted(d for d in report.diagnostics if "error path" in d)
    # main's nonzero status is an error path, its value's text read as written
    assert any(":15:" in d and "failure status 3 from main at line 16" in d for d in notes)
    assert len(notes) == 1, notes
    assert str(report.kernel("main:loop@13").count) == "argc"
    assert str(report.kernel("step").count) == "argc"


def test_a_negative_error_value_is_shown_as_written(tmp_path: Path):
    source = tmp_path / "negative.c"
    source.write_text(
        "static int check(int x) {\n"
        "  if (x < 0)\n"
        "    return -1;\n"
        "  return x;\n"
        "}\n"
        "int main(void) { return check(3) == 3 ? 0 : 1; }\n"
    )
    notes = [d for d in analyze([source], []).diagnostics if "error path" in d]
    assert any("returns the error value -1 at line 3" in d for d in notes), notes
