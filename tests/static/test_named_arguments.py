"""Function arguments that carry a parameter's name: the parameter where nothing else has the
name, the value each call passes where a variable of the program has it too."""

from __future__ import annotations

import textwrap

import sympy

from perfcast.static import analyze

n = sympy.Symbol("n")


def _report(tmp_path, text):
    path = tmp_path / "named.c"
    path.write_text(textwrap.dedent(text))
    return analyze([path], ["n"])


def _count(report, name):
    kernel = report.kernel(name)
    assert kernel.undef_reason is None, kernel.undef_reason
    return sympy.simplify(
        kernel.count.xreplace({s: sympy.Symbol(s.name) for s in kernel.count.free_symbols})
    )


def test_a_constant_passed_to_an_argument_named_like_mains_variable_is_counted(tmp_path):
    report = _report(
        tmp_path,
        """\
        #include <stdlib.h>
        double v[8];
        double scaled_sum(const double *w, int n) {
          double s = 0;
          for (int i = 0; i < n; i++) s += 2.0 * w[i];
          return s;
        }
        double twice(const double *w, int n) {
          double s = 0;
          for (int i = 0; i < n; i++) s += w[i];
          return s;
        }
        int main(int argc, char **argv) {
          int n = atoi(argv[1]);
          double t = 0;
          for (int i = 0; i < n; i++) t += scaled_sum(v, 4);
          t += twice(v, 2 * n);
          return t > 0;
        }
        """,
    )
    # main's n and scaled_sum's n are two values: each call of scaled_sum runs its loop 4 times
    assert _count(report, "scaled_sum:loop@5") == 4 * n
    assert _count(report, "twice:loop@10") == 2 * n


def test_an_argument_that_alone_has_the_name_is_the_parameter(tmp_path):
    report = _report(
        tmp_path,
        """\
        double v[128];
        void kernel(int n) {
          for (int i = 0; i < n; i++) v[i] += 1.0;
        }
        int main(void) {
          kernel(100);
          return 0;
        }
        """,
    )
    # the driver's constant does not replace the parameter the user named
    assert _count(report, "kernel:loop@3") == n
