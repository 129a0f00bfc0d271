"""The static-analysis API: report contents, models, JSON, errors, annotations, clusters, CLI."""

from __future__ import annotations

import argparse
import json
import textwrap
from fractions import Fraction

import numpy as np
import pytest
import sympy

from perfcast.commands import static as static_command
from perfcast.core.errors import InputError
from perfcast.static import StaticReport, analyze, parse_expression

n, m = sympy.symbols("n m")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def count_of(report: StaticReport, name: str):
    return report.kernel(name).count


def test_report_describes_functions_and_loops(tmp_path):
    source = write(
        tmp_path,
        "k.c",
        """\
        void kernel(int n, int m) {
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < m; j++) {
              ;
            }
          }
        }
        int main(void) {
          kernel(N, M);
          return 0;
        }
        """,
    )
    report = analyze([source], ["N", "M"], ["-DN=10", "-DM=5"])
    names = [k.name for k in report.kernels]
    assert names == ["kernel", "kernel:loop@2", "kernel:loop@3", "main"]
    outer = report.kernel("kernel:loop@2")
    inner = report.kernel("kernel:loop@3")
    assert (outer.kind, outer.depth, outer.line, outer.end_line) == ("loop", 1, 2, 6)
    assert (inner.depth, inner.function, inner.file) == (2, "kernel", str(source))
    assert outer.count == sympy.Symbol("N")
    assert inner.count == sympy.Symbol("N") * sympy.Symbol("M")
    assert inner.parameters == ("N", "M")
    assert report.kernel("kernel").count == 1 and report.kernel("kernel").depth == 0


def test_model_of_an_exact_count_evaluates_like_the_count(tmp_path):
    source = write(
        tmp_path,
        "tri.c",
        """\
        int n, m;
        int main(void) {
          for (int i = 0; i < n; i++) {
            for (int j = i; j < n; j++) {
              for (int s = 1; s <= m; s *= 2) {
                ;
              }
            }
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n", "m"])
    kernel = report.kernel("main:loop@5")
    assert sympy.simplify(kernel.count - (n**2 + n) / 2 * (sympy.floor(sympy.log(m, 2)) + 1)) == 0
    assert kernel.to_model() is None  # floor: not a sum of power/log terms
    approximate = kernel.approximate_model()
    assert approximate is not None
    assert approximate.lead_order("m") == (Fraction(0), 1)
    triangle = report.kernel("main:loop@4").to_model()
    assert triangle.metric == "count" and triangle.parameters == ("n", "m")
    points = np.array([[4.0, 1.0], [9.0, 2.0]])
    assert np.allclose(triangle.evaluate(points), [10, 45])
    assert triangle.lead_order("n") == (Fraction(2), 0)


def test_json_matches_the_documented_form(tmp_path):
    source = write(
        tmp_path,
        "g.c",
        """\
        int n;
        int main(void) {
          for (int i = 0; i < n; i++) {
            for (int j = 1; j < n; j *= 2) {
              ;
            }
          }
          for (int k = 0; k < n; k += 2) {
            ;
          }
          return 0;
        }
        """,
    )
    data = json.loads(json.dumps(analyze([source], ["n"]).to_dict()))
    kernels = {k["name"]: k for k in data["kernels"]}
    needed = {"name", "kind", "file", "line", "depth", "parameters", "count", "expression"}
    assert all(needed | {"undef_reason"} <= set(k) for k in kernels.values())
    log_loop = kernels["main:loop@4"]
    assert log_loop["expression"] == "n*ceiling(log(n, 2))"
    assert sympy.sympify(log_loop["expression"]) == n * sympy.ceiling(sympy.log(n, 2))
    assert log_loop["count"] is None  # ceiling keeps it from being a model
    outer = kernels["main:loop@3"]["count"]
    assert outer["metric"] == "count" and outer["parameters"] == ["n"]
    assert outer["terms"] == [
        {"coefficient": 1.0, "factors": [{"parameter": "n", "exponent": 1, "log_exponent": 0}]}
    ]
    assert "quality" not in outer
    capital = sympy.Symbol("N")
    assert parse_expression("N*ceiling(log(N, 2))", ["N"]) == capital * sympy.ceiling(
        sympy.log(capital, 2)
    )
    assert sympy.sympify(kernels["main:loop@8"]["expression"]) == sympy.ceiling(n / 2)


def test_log_terms_become_model_factors(tmp_path):
    source = write(
        tmp_path,
        "l.c",
        """\
        #define N 1024
        int main(void) {
          for (int i = 0; i < N; i++) {
          #pragma perfcast count(log(N, 2))
            for (int j = 0; j < N; j++) {
              ;
            }
          }
          return 0;
        }
        """,
    )
    kernel = analyze([source], ["N"]).kernel("main:loop@5")
    model = kernel.to_model()
    assert [(f.parameter, f.exponent, f.log_exponent) for f in model.terms[0].factors] == [
        ("N", Fraction(1), 1)
    ]
    assert model.terms[0].coefficient == pytest.approx(1.0)
    assert model.evaluate(np.array([[1024.0]]))[0] == pytest.approx(10240)


def test_clang_errors_are_input_errors_with_the_diagnostics(tmp_path):
    source = write(tmp_path, "bad.c", "int main(void) {\n  return 0\n}\n")
    with pytest.raises(InputError) as caught:
        analyze([source], [])
    message = str(caught.value)
    assert "bad.c" in message and "error" in message and "expected ';'" in message
    with pytest.raises(InputError, match="no such source file"):
        analyze([tmp_path / "missing.c"], [])


def test_warnings_are_reported_but_not_fatal(tmp_path):
    source = write(
        tmp_path,
        "w.c",
        """\
        int main(void) {
          int v = 1;
          v + 1;
          for (int i = 0; i < 3; i++) {
            ;
          }
          return 0;
        }
        """,
    )
    report = analyze([source], [])
    assert any("warning" in d for d in report.diagnostics)
    assert report.kernel("main:loop@4").count == 3


def test_unsupported_constructs_do_not_stop_the_rest(tmp_path):
    source = write(
        tmp_path,
        "u.c",
        """\
        int n;
        int f(int);
        void jumpy(void) {
          for (int i = 0; i < n; i++) {
            if (i > 2) {
              goto done;
            }
          }
          for (int i = 0; i < n; i++) {
            ;
          }
        done:
          return;
        }
        int main(void) {
          switch (n) {
          case 1:
            for (int i = 0; i < n; i++) {
              ;
            }
          }
          for (int i = 0; i < f(n); i++) {
            ;
          }
          jumpy();
          for (int i = 0; i < 2 * n; i++) {
            ;
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"])
    assert "switch" in report.kernel("main:loop@18").undef_reason
    assert "call to f" in report.kernel("main:loop@22").undef_reason
    assert "goto" in report.kernel("jumpy:loop@4").undef_reason
    # the goto may skip this loop, so it cannot be counted either
    assert "uses goto at line 6" in report.kernel("jumpy:loop@9").undef_reason
    assert report.kernel("jumpy").count == 1
    assert report.kernel("main:loop@26").count == 2 * n
    assert report.kernel("main:loop@18").parameters == ("n",)


def test_never_a_wrong_number_for_risky_forms(tmp_path):
    source = write(
        tmp_path,
        "r.c",
        """\
        int n, m, lim;
        int main(void) {
          for (int i = 0; i != n; i += 2) {
            ;
          }
          for (unsigned u = n; u >= 0; u--) {
            ;
          }
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < m - i; j++) {
              ;
            }
          }
          for (double x = 0; x < n; x++) {
            ;
          }
          for (int i = 0; i < lim; i++) {
            lim = lim - 1;
          }
          int k = 0;
          while (k < m) {
            k++;
            if (k == 3) {
              continue;
            }
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n", "m"])
    assert "!=" in report.kernel("main:loop@3").undef_reason
    assert "wrap" in report.kernel("main:loop@6").undef_reason
    assert "non-empty" in report.kernel("main:loop@10").undef_reason
    assert "floating" in report.kernel("main:loop@14").undef_reason
    assert "modified in the loop body" in report.kernel("main:loop@17").undef_reason
    assert "continue" in report.kernel("main:loop@21").undef_reason
    source.write_text(source.read_text().replace("int k = 0;", "n = 2 * m;\n  int k = 0;"))
    changed = analyze([source], ["n", "m"]).kernel("main:loop@3").undef_reason
    assert "parameter n is used before it is set at line 20" in changed


def test_parameter_reach_through_macros_globals_and_members(tmp_path):
    source = write(
        tmp_path,
        "p.c",
        """\
        #define TOTAL_KEYS 4096
        #define NUM_PROCS 8
        #define NUM_KEYS (TOTAL_KEYS / NUM_PROCS)
        struct grid { int nx; int ny; };
        int iters;
        int key_array[NUM_KEYS];
        void smooth(struct grid *g) {
          for (int y = 0; y < g->ny; y++) {
            for (int x = 0; x < g->nx; x++) {
              ;
            }
          }
        }
        int main(void) {
          struct grid g;
          int shift = 3;
          for (int i = 0; i < NUM_KEYS; i++) {
            key_array[i] = i >> shift;
          }
          for (int t = 0; t < iters; t++) {
            smooth(&g);
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["TOTAL_KEYS", "NUM_PROCS", "nx", "ny", "iters"])
    keys = report.kernel("main:loop@17")
    assert keys.parameters == ("TOTAL_KEYS", "NUM_PROCS")
    assert keys.count == sympy.floor(sympy.Symbol("TOTAL_KEYS") / sympy.Symbol("NUM_PROCS"))
    inner = report.kernel("smooth:loop@9")
    assert set(inner.parameters) == {"nx", "ny", "iters"}
    nx, ny, iters = sympy.symbols("nx ny iters")
    assert inner.count == nx * ny * iters
    assert report.kernel("smooth").parameters == ("iters",)


def test_annotations(tmp_path):
    source = write(
        tmp_path,
        "a.c",
        """\
        int n;
        int data[100];
        int main(void) {
          for (int i = 0; i < n; i++) {
            // the bound is data-dependent: name it
        #pragma perfcast symbol(avg)
            for (int j = 0; j < data[i]; j++) {
              ;
            }
        #pragma perfcast probability(0.25)
            if (data[i] > 0) {
              for (int k = 0; k < 4; k++) {
                ;
              }
            } else {
              for (int k = 0; k < 8; k++) {
                ;
              }
            }
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"])
    avg = sympy.Symbol("avg")
    assert report.kernel("main:loop@7").count == n * avg
    assert "avg" in report.kernel("main:loop@7").parameters
    assert report.kernel("main:loop@12").count == n
    assert report.kernel("main:loop@16").count == 6 * n
    assert "avg" in report.parameters


def test_malformed_annotation_names_file_and_line(tmp_path):
    source = write(
        tmp_path,
        "bad_pragma.c",
        """\
        int main(void) {
        #pragma perfcast count(3 +)
          for (int i = 0; i < 3; i++) {
            ;
          }
          return 0;
        }
        """,
    )
    with pytest.raises(InputError, match=r"bad_pragma.c:2: cannot read the expression"):
        analyze([source], [])
    source.write_text("int main(void) {\n#pragma perfcast often(3)\n  return 0;\n}\n")
    with pytest.raises(InputError, match=r"bad_pragma.c:2: malformed #pragma perfcast"):
        analyze([source], [])


SIMILAR = """\
int n;
double a[100], b[100], c[100], d[100];
int main(void) {
  for (int i = 0; i < n; i++) {
    a[i] = b[i] + 2.0 * c[i];
  }
  for (int k = 1; k < n; k++) {
    d[k] = c[k] + 3.0 * a[k];
  }
  for (int i = 0; i < n; i++) {
    a[i] = a[i] + 2.0 * a[i];
  }
  for (int i = 0; i < n; i++) {
    a[i] = b[i] * 2.0 + c[i];
  }
  return 0;
}
"""


def test_similarity_clusters_loops_equal_up_to_names(tmp_path):
    source = write(tmp_path, "s.c", SIMILAR)
    report = analyze([source], ["n"])
    assert report.clusters() == [["main:loop@4", "main:loop@7"]]


def _run_command(argv, capsys):
    parser = argparse.ArgumentParser()
    static_command.add_parser(parser.add_subparsers())
    args = parser.parse_args(["static", *argv])
    status = args.run(args)
    return status, capsys.readouterr()


def test_command_prints_text_json_and_clusters(tmp_path, capsys):
    source = write(tmp_path, "s.c", SIMILAR.replace("int n;\n", ""))
    status, out = _run_command([str(source), "--param", "n", "--clusters", "--", "-Dn=50"], capsys)
    assert status == 0
    assert "main:loop@3" in out.out and "count = n" in out.out
    assert "cluster 1: main:loop@3, main:loop@6" in out.out
    status, out = _run_command(
        ["--format", "json", str(source), "--param", "n", "--", "-Dn=50"], capsys
    )
    data = json.loads(out.out)
    assert {k["name"]: k["expression"] for k in data["kernels"]}["main:loop@6"] == "n - 1"


def test_command_rejects_bad_sources(tmp_path, capsys):
    source = write(tmp_path, "bad.c", "int main(void) { return }\n")
    with pytest.raises(InputError, match="expected expression"):
        _run_command([str(source)], capsys)


def test_cli_exit_status_and_compile_flags(tmp_path, capsys, monkeypatch):
    from perfcast import cli

    monkeypatch.setattr(cli, "COMMANDS", ("static",))  # only this command's wiring
    bad = write(tmp_path, "bad.c", "int main(void) { return }\n")
    assert cli.main(["static", str(bad)]) == 2
    assert "expected expression" in capsys.readouterr().err
    good = write(tmp_path, "good.c", "int main(void) {\n  for (int i = 0; i < N; i++) {\n  }\n}\n")
    status = cli.main(["static", str(good), "--param", "N", "--format", "json", "--", "-DN=7"])
    assert status == 0
    kernels = json.loads(capsys.readouterr().out)["kernels"]
    assert kernels[1]["expression"] == "N"
    assert cli.main(["static", str(good), "--", "-DN=7"]) == 0
    assert "count = 7" in capsys.readouterr().out


def test_openmp_and_unknown_statements(tmp_path):
    source = write(
        tmp_path,
        "omp.cpp",
        """\
        int n;
        void f() {}
        int main() {
          int v[4] = {1, 2, 3, 4};
          for (int x : v) {
            for (int i = 0; i < n; i++) {
              f();
            }
          }
        #pragma omp parallel for
          for (int i = 0; i < n; i++) {
            v[i % 4] = i;
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"], ["-fopenmp"])
    assert any("-fopenmp dropped" in d for d in report.diagnostics)
    assert report.kernel("main:loop@11").count == n
    assert "cxx for range" in report.kernel("main:loop@6").undef_reason
    assert "cxx for range" in report.kernel("f").undef_reason
    assert report.kernel_at(str(source), 12).name == "main:loop@11"
    assert report.kernel_at("omp.cpp", 7).name == "main:loop@6"
    assert report.kernel_at(str(source), 1) is None


def test_branch_blocks_have_counts_and_lines_map_to_regions(tmp_path):
    source = write(
        tmp_path,
        "b.c",
        """\
        int n;
        double x[100];
        int main(void) {
          for (int i = 0; i < n; i++) {
            if (i < 10) {
              x[i] = 1.0;
            } else {
              x[i] = 2.0;
            }
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"])
    then, other = report.branches
    assert (then.name, then.kind, then.depth, then.line) == ("main:if@5:then", "branch", 1, 5)
    for value in (1, 9, 10, 11, 50):
        assert then.count.subs(n, value) == min(10, value)
        assert other.count.subs(n, value) == value - min(10, value)
    assert report.region_at("b.c", 8).name == "main:if@5:else"
    assert (then.parent, report.kernel("main:loop@4").parent) == ("main:loop@4", "main")
    assert report.kernel("main").parent is None
    assert report.region_at("b.c", 4).name == "main:loop@4"
    assert [b["name"] for b in report.to_dict()["branches"]] == [then.name, other.name]


def test_calls_that_cannot_be_counted(tmp_path):
    source = write(
        tmp_path,
        "c.c",
        """\
        int n;
        void fact(int k) {
          if (k > 1) fact(k - 1);
        }
        void leaf(void) {
          for (int i = 0; i < n; i++) {
            ;
          }
        }
        void (*hook)(void) = leaf;
        void maybe(void) {
        }
        void helper(int len) {
          for (int i = 0; i < len; i++) {
            ;
          }
        }
        int main(void) {
          fact(n);
          int ok = n > 3 && (maybe(), 1);
          if (n > 100) {
            return 1;
          }
          for (int i = 0; i < n; i++) {
            ;
          }
          return ok;
        }
        """,
    )
    report = analyze([source], ["n"])
    assert "recursively" in report.kernel("fact").undef_reason
    # leaf is only stored in a function pointer nobody calls: counted per call, not undef
    assert report.kernel("leaf:loop@6").count == sympy.Symbol("n")
    assert "main does not call" in report.kernel("leaf:loop@6").note
    assert "conditional" in report.kernel("maybe").undef_reason
    assert "return early at line 22" in report.kernel("main:loop@24").undef_reason
    helper = report.kernel("helper:loop@14")
    assert helper.count is None and "per call of helper" in helper.note
    assert report.kernel("helper").count == 1


def test_parameters_set_up_in_helpers_but_not_modified(tmp_path):
    source = write(
        tmp_path,
        "setup.c",
        """\
        #include <stdlib.h>
        struct options { int size; int reps; };
        void parse(int argc, char **argv, struct options *o) {
          o->size = argc > 1 ? atoi(argv[1]) : 64;
          o->reps = 3;
        }
        int main(int argc, char **argv) {
          struct options o;
          parse(argc, argv, &o);
          for (int r = 0; r < o.reps; r++) {
            for (int i = 0; i < o.size; i++) {
              ;
            }
          }
          o.size = o.size / 2;
          for (int i = 0; i < o.size; i++) {
            ;
          }
          return 0;
        }
        """,
    )
    report = analyze([source], ["size", "reps"])
    size, reps = sympy.symbols("size reps")
    assert report.kernel("main:loop@11").count == size * reps
    assert "size is changed at line 15" in report.kernel("main:loop@16").undef_reason


def test_approximate_model_smooths_floors_and_pieces(tmp_path):
    source = write(
        tmp_path,
        "ap.c",
        """\
        int n;
        int main(void) {
          for (int i = 0; i < n - 5; i += 2) {
            for (int j = 0; j < n; j++) {
              ;
            }
          }
          return 0;
        }
        """,
    )
    kernel = analyze([source], ["n"]).kernel("main:loop@4")
    assert kernel.count.has(sympy.Piecewise) and kernel.to_model() is None
    model = kernel.approximate_model()
    assert model.lead_order("n") == (Fraction(2), 0)
    assert model.evaluate(np.array([[105.0]]))[0] == pytest.approx(105 * 50)


def test_same_name_in_two_files_and_cplusplus_methods_are_reported(tmp_path):
    first = write(
        tmp_path,
        "a1.c",
        "static void h(void) {\n  for (int i = 0; i < 3; i++) {\n  }\n}\n"
        "void a(void) {\n  h();\n}\n",
    )
    second = write(
        tmp_path,
        "a2.c",
        "static void h(void) {\n  for (int i = 0; i < 5; i++) {\n  }\n}\n"
        "void a(void);\nint main(void) {\n  a();\n  h();\n  return 0;\n}\n",
    )
    report = analyze([first, second], [])
    assert "two functions are called h" in report.kernel("h").undef_reason
    assert "two functions are called h" in report.kernel("h:loop@2").undef_reason
    assert report.kernel("a").count == 1
    assert any("a2.c:1: function h is defined twice" in d for d in report.diagnostics)
    methods = write(
        tmp_path,
        "m.cpp",
        "int n;\nvoid f() {}\nstruct S {\n  void run() { f(); }\n};\n"
        "int main() {\n  S s;\n  s.run();\n  return 0;\n}\n",
    )
    report = analyze([methods], ["n"])
    assert any("m.cpp:4: run is not analysed" in d for d in report.diagnostics)
    assert "does not walk" in report.kernel("f").undef_reason
