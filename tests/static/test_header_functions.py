"""Functions of included headers in the report of a source (issue 20, speed).

A header's function that no function of the sources calls (directly or through other
functions) never runs in the program: it is neither walked nor reported. A header's function
the sources call is reported with the counts it always had, and every function of the sources
keeps the kernels a lazy analysis of it alone gives (which walks all of its callers).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfcast.api import analyze_source

HEADER = """#ifndef TOOLS_H
#define TOOLS_H
void report_value(int v);
static inline int scaled(int v, int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    s += v;
  return s;
}
static inline int twice(int v) { return scaled(v, 2); }
static inline void notify(int v) { report_value(v); }
static inline int spare(int n) {
  int s = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      s += scaled(j, n);
  return s;
}
#endif
"""
SOURCE = """#include "tools.h"
int total;
void report_value(int v) {
  for (int k = 0; k < 4; k++)
    total += v;
}
int main(int argc, char **argv) {
  int n = argc * 10;
  for (int r = 0; r < 3; r++)
    total += twice(r);
  notify(n);
  return 0;
}
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "tools.h").write_text(HEADER)
    source = tmp_path / "main.c"
    source.write_text(SOURCE)
    return source


def _functions(report) -> list[str]:
    return [k.function for k in report.kernels if k.kind == "function"]


def test_header_functions_no_source_function_calls_are_left_out(program):
    report = analyze_source([program], ["argc"])
    # twice and scaled (through twice) and notify run; spare is called by nobody
    assert _functions(report) == ["scaled", "twice", "notify", "report_value", "main"]
    assert not [k for k in report.kernels + report.branches if k.function == "spare"]


def test_reported_functions_keep_the_counts_of_a_lazy_analysis(program):
    full = analyze_source([program], ["argc"])
    counted = {k.function: k for k in full.kernels if k.kind == "function"}
    assert counted["twice"].expression() == "3"
    # scaled is also called by spare, which never runs but is walked for scaled's count
    # (a call per call of spare, main not calling it), as before header functions were left out
    assert "spare" in (counted["scaled"].note or "")
    assert counted["report_value"].expression() == "1"
    for name in _functions(full):
        alone = analyze_source([program], ["argc"], functions=[name])
        assert [k.to_dict() for k in alone.kernels] == [
            k.to_dict() for k in full.kernels if k.function == name
        ], name
        assert [k.to_dict() for k in alone.branches] == [
            k.to_dict() for k in full.branches if k.function == name
        ], name


def test_a_header_function_is_still_reported_when_asked_for(program):
    report = analyze_source([program], ["argc"], functions=["spare"])
    assert _functions(report) == ["spare"]
    loops = [k for k in report.kernels if k.kind == "loop"]
    assert len(loops) == 2
