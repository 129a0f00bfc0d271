"""Lazy per-function analysis and the report cache (issue 20, speed).

``functions=`` walks only the named functions and their callers and counts only the named
ones: their kernels must equal those of the full analysis. The cache must return the same
report for unchanged input without parsing again, and miss when a source, an included header
or a flag changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perfcast.api import InputError, analyze_source
from perfcast.static import analysis
from perfcast.static.cache import cached_report, report_key

PROGRAMS = Path(__file__).resolve().parent / "programs"
ROOT = Path(__file__).resolve().parents[2]

HEADER = "#define STEPS 4\n"
SOURCE = """#include "sizes.h"
static double sweep(double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++)
    s += a[i];
  return s;
}
static double twice(double *a, int n) {
  double s = 0;
  for (int t = 0; t < STEPS; t++)
    s += sweep(a, n);
  return s;
}
static void unused(double *a, int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      a[j] += a[i];
}
int main(int argc, char **argv) {
  double a[100];
  int n = argc * 10;
  for (int r = 0; r < 3; r++)
    twice(a, n);
  return 0;
}
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "sizes.h").write_text(HEADER)
    source = tmp_path / "lazy.c"
    source.write_text(SOURCE)
    return source


def _by_function(report, name: str) -> tuple[list[dict], list[dict]]:
    kernels = [k.to_dict() for k in report.kernels if k.function == name]
    branches = [b.to_dict() for b in report.branches if b.function == name]
    return kernels, branches


@pytest.mark.parametrize("source", ["cg_csr.c", "jacobi2d.c", "dgemm.c"])
def test_each_function_alone_has_the_counts_of_the_full_analysis(source):
    path = PROGRAMS / source
    full = analyze_source([path], [])
    names = sorted({k.function for k in full.kernels})
    assert len(names) >= 1
    for name in names:
        lazy = analyze_source([path], [], functions=[name])
        assert {k.function for k in lazy.kernels} == {name}
        assert _by_function(lazy, name) == _by_function(full, name), name


def test_a_callee_counts_through_its_callers_walked_on_demand(program):
    lazy = analyze_source([program], ["argc"], functions=["sweep"])
    loop = next(k for k in lazy.kernels if k.kind == "loop")
    # sweep runs 3 * STEPS times per run, n = 10 * argc iterations each
    assert str(loop.count) == "120*argc"
    assert [k.function for k in lazy.kernels] == ["sweep", "sweep"]


def test_an_unknown_function_is_an_error_naming_the_closest(program):
    with pytest.raises(InputError, match="function swep is defined in none.*closest: sweep"):
        analyze_source([program], [], functions=["swep"])


def test_a_second_run_reads_the_cache_without_parsing(program, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    first = analyze_source([program], ["argc"], cache=cache)
    parses = []
    real_parse = analysis.parse_sources

    def counting_parse(*args, **kwargs):
        parses.append(args)
        return real_parse(*args, **kwargs)

    monkeypatch.setattr(analysis, "parse_sources", counting_parse)
    second = analyze_source([program], ["argc"], cache=cache)
    assert parses == []
    assert second.to_dict() == first.to_dict()
    assert [str(k.count) for k in second.kernels] == [str(k.count) for k in first.kernels]
    # lazy reports are cached under their own key
    analyze_source([program], ["argc"], functions=["sweep"], cache=cache)
    assert len(parses) == 1
    assert len(list(cache.glob("*.pickle"))) == 2


def test_a_changed_header_source_or_flag_is_a_miss(program, tmp_path):
    cache = tmp_path / "cache"
    before = analyze_source([program], ["argc"], cache=cache)
    steps = next(k for k in before.kernels if k.name.startswith("twice:loop"))
    assert str(steps.count) == "12"
    (tmp_path / "sizes.h").write_text("#define STEPS 5\n")
    after = analyze_source([program], ["argc"], cache=cache)
    assert str(next(k for k in after.kernels if k.name.startswith("twice:loop")).count) == "15"
    flagged = analyze_source([program], ["argc"], ["-DUNUSED=1"], cache=cache)
    assert flagged.to_dict() == after.to_dict()
    # the header is checked by content, not keyed: its new report replaced the stale one
    assert len(list(cache.glob("*.pickle"))) == 2
    key = report_key([program], ["argc"], [], None)
    assert cached_report(cache, key) is not None
    program.write_text(SOURCE.replace("r < 3", "r < 4"))
    assert cached_report(cache, report_key([program], ["argc"], [], None)) is None


def _cli(*arguments: str, cache: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "perfcast.cli", "static", *arguments],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": str(ROOT / "src"), "PERFCAST_CACHE_DIR": str(cache), "PATH": ""},
        check=False,
    )


@pytest.mark.slow
def test_cli_function_option_and_cache(program, tmp_path):
    cache = tmp_path / "cli-cache"
    done = _cli(str(program), "--param", "argc", "--function", "twice", "--format", "json",
                cache=cache)  # fmt: skip
    assert done.returncode == 0, done.stderr
    kernels = json.loads(done.stdout)["kernels"]
    assert {k["function"] for k in kernels} == {"twice"}
    assert len(list(cache.glob("*.pickle"))) == 1
    again = _cli(str(program), "--param", "argc", "--function", "twice", "--format", "json",
                 cache=cache)  # fmt: skip
    assert again.stdout == done.stdout
    fresh = _cli(str(program), "--param", "argc", "--function", "twice", "--format", "json",
                 "--no-cache", cache=tmp_path / "other")  # fmt: skip
    assert fresh.stdout == done.stdout
    assert not (tmp_path / "other").exists()
    wrong = _cli(str(program), "--function", "nothere", cache=cache)
    assert wrong.returncode == 2
    assert "function nothere is defined in none of the sources" in wrong.stderr
    assert "Traceback" not in wrong.stderr


def test_a_session_parses_once_and_answers_function_after_function(program):
    from perfcast.static.analysis import StaticSession

    full = analyze_source([program], ["argc"])
    session = StaticSession([program], ["argc"])
    assert session.functions == ["sweep", "twice", "unused", "main"]
    for name in ["unused", "sweep", "main", "twice"]:  # an order unlike the sources'
        part = session.report([name])
        assert _by_function(part, name) == _by_function(full, name), name
    assert session.report().to_dict() == full.to_dict()
