"""Loop bounds behind macros, do-while(0) blocks, pre-set induction variables, depth under
uncountable loops and calls through function pointers (the forms benchmark suites use)."""

from __future__ import annotations

import textwrap

import sympy

from perfcast.static import analyze

n, N, M = sympy.symbols("n N M")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_bounds_read_after_macro_expansion_keep_parameter_macros_symbolic(tmp_path):
    source = write(
        tmp_path,
        "m.c",
        """\
        #define N 100
        #define NA 10
        #define BOUND(a, b) b
        #define TWICE(x) ((x) * 2)
        #define SIZE N
        #define SIZE2 (N + 1)
        void k(int n) {
          int i, j;
          for (i = 0; i < BOUND(q, N); i++) {
            for (j = 0; j <= NA + 1; j++) {
              ;
            }
          }
          for (i = 0; i < TWICE(n); i++) {
            ;
          }
          for (i = 0; i < TWICE(SIZE); i++) {
            ;
          }
          for (i = 0; i < TWICE(3) + M; i++) {
            ;
          }
          for (i = 0; i < TWICE(SIZE2); i++) {
            ;
          }
        }
        int main(void) {
          k(5);
          return 0;
        }
        """,
    )
    report = analyze([source], ["N", "M"], ["-DM=7"])
    assert report.kernel("k:loop@9").count == N
    assert report.kernel("k:loop@10").count == 12 * N
    assert report.kernel("k:loop@14").count == 10
    assert report.kernel("k:loop@17").count == 2 * N
    assert report.kernel("k:loop@20").count == M + 6
    reason = report.kernel("k:loop@23").undef_reason
    assert "macro SIZE2 computes with a parameter through a function-like macro" in reason
    # without N as a parameter the same macros are plain numbers
    plain = analyze([source], ["n"], ["-DM=7"])
    assert plain.kernel("k:loop@9").count == 100
    assert plain.kernel("k:loop@23").count == 202


def test_do_while_zero_runs_once_unless_a_break_leaves_it(tmp_path):
    source = write(
        tmp_path,
        "d.c",
        """\
        #define RESET(v, len) do { (v)[0] = 0; (v)[1] = (len); } while (0)
        void k(int n, double *x) {
          for (int i = 0; i < n; i++) {
            RESET(x, n);
          }
          do {
            for (int i = 0; i < n; i++) {
              ;
            }
          } while (0);
          do {
            if (x[0] > 1) break;
            for (int i = 0; i < n; i++) {
              ;
            }
          } while (0);
        }
        int main(void) {
          double x[2];
          k(4, x);
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"])
    loops = {k.name for k in report.kernels if k.kind == "loop"}
    assert loops == {"k:loop@3", "k:loop@7", "k:loop@13"}
    assert report.kernel("k:loop@3").count == n
    assert report.kernel("k:loop@7").count == n
    assert report.kernel("k:loop@7").depth == 1
    reason = report.kernel("k:loop@13").undef_reason
    assert "do { } while (0) at line 11" in reason and "break at line 12" in reason


def test_induction_variable_set_before_its_for(tmp_path):
    source = write(
        tmp_path,
        "p.c",
        """\
        void k(int n) {
          int i, j, q = 0;
          i = 2;
          for (; i < n; i++) {
            j = i;
            for (; j < n; j++) {
              ;
            }
          }
          for (; q < n; q++) {
            ;
          }
          for (j = 0; i < n; i++) {
            ;
          }
          for (; n > 0; n--) {
            ;
          }
        }
        """,
    )
    report = analyze([source], ["n"])
    assert report.kernel("k:loop@4").count.subs(n, 7) == 5
    assert report.kernel("k:loop@6").count.subs(n, 7) == 15
    assert report.kernel("k:loop@10").count == n
    assert "does not assign its variable i" in report.kernel("k:loop@13").undef_reason
    assert "no assignment of the loop variable n before the loop" in (
        report.kernel("k:loop@16").undef_reason
    )


def test_depth_counts_uncountable_outer_loops(tmp_path):
    source = write(
        tmp_path,
        "u.c",
        """\
        void k(int n, double *x) {
          while (x[0] > 1.0) {
            for (int i = 0; i < n; i++) {
              for (int j = 0; j < n; j++) {
                if (j > i) {
                  x[0] -= 1.0;
                }
              }
            }
          }
        }
        """,
    )
    report = analyze([source], ["n"])
    assert [report.kernel(f"k:loop@{line}").depth for line in (2, 3, 4)] == [1, 2, 3]
    branch = next(b for b in report.branches if b.name == "k:if@5:then")
    assert branch.depth == 3
    assert "inside the loop at line 2" in report.kernel("k:loop@4").undef_reason


def test_function_pointers_with_one_target_are_followed(tmp_path):
    source = write(
        tmp_path,
        "f.c",
        """\
        static void one(int n) { for (int i = 0; i < n; i++) { ; } }
        static void two(int n) { for (int i = 0; i < n; i++) { ; } }
        static void three(int n) { for (int i = 0; i < n; i++) { ; } }
        static void four(int n) { for (int i = 0; i < n; i++) { ; } }
        static void five(int n) { for (int i = 0; i < n; i++) { ; } }
        static void run(void (*f)(int), int n) { f(n); }
        struct ops { void (*apply)(int); };
        void (*global)(int) = one;
        int main(int argc, char **argv) {
          int n = argc;
          void (*local)(int) = two;
          void (*copy)(int);
          void (*either)(int) = three;
          struct ops table;
          if (n > 2) either = four;
          for (int s = 0; s < n; s++) {
            global(n);
            (*local)(n);
          }
          either(n);
          copy = local;
          copy(n);
          run(five, n);
          table.apply = five;
          table.apply(n);
          return 0;
        }
        """,
    )
    report = analyze([source], ["n"])
    assert report.kernel("one:loop@1").count == n**2
    # two is called through local n times, and once more through copy: local is copied
    assert "local is copied or passed on" in report.kernel("two").undef_reason
    for name in ("three", "four"):
        reason = report.kernel(name).undef_reason
        assert "function pointer either" in reason and "2 values (four, three)" in reason
    assert "address of five is taken at" in report.kernel("five").undef_reason


def test_struct_member_pointer_is_named_in_the_reason(tmp_path):
    source = write(
        tmp_path,
        "s.c",
        """\
        static void leaf(int n) { for (int i = 0; i < n; i++) { ; } }
        struct ops { void (*apply)(int); };
        int main(int argc, char **argv) {
          struct ops table;
          table.apply = leaf;
          table.apply(argc);
          return 0;
        }
        """,
    )
    report = analyze([source], ["argc"])
    assert "apply is a struct member" in report.kernel("leaf").undef_reason


def test_polybench_bound_with_the_dataset_macro_as_parameter(tmp_path):
    source = write(
        tmp_path,
        "pb.c",
        """\
        #define N 4000
        #define POLYBENCH_LOOP_BOUND(x, y) y
        #define _PB_N POLYBENCH_LOOP_BOUND(N, n)
        #define LIM POLYBENCH_LOOP_BOUND(q, N)
        void kernel(int n) {
          for (int i = 0; i < _PB_N; i++) {
            ;
          }
          for (int i = 0; i < LIM; i++) {
            ;
          }
        }
        int main(void) {
          kernel(N);
          return 0;
        }
        """,
    )
    report = analyze([source], ["N"])
    # _PB_N expands to the argument n, which main passes as N
    assert report.kernel("kernel:loop@6").count == N
    # LIM folds N's value into a literal clang cannot attribute: refused, not 4000
    reason = report.kernel("kernel:loop@9").undef_reason
    assert "macro LIM computes with a parameter" in reason


def test_loops_written_inside_macros(tmp_path):
    source = write(
        tmp_path,
        "f.c",
        """\
        #define FOR(i, n) for (i = 0; i < (n); i++)
        #define ZERO(v, n) do { int z_; for (z_ = 0; z_ < (n); z_++) { (v)[z_] = 0; } } while (0)
        #define FROM_HERE(i, n) for (; i < (n); i++)
        void k(int n, double *x) {
          int i;
          FOR(i, n) {
            x[i] = 1;
          }
          for (i = 0; i < n; i++) {
            ZERO(x, i);
          }
          FROM_HERE(i, n) {
            ;
          }
        }
        """,
    )
    report = analyze([source], ["n"])
    assert report.kernel("k:loop@6").count == n
    assert sympy.expand(report.kernel("k:loop@10").count - n * (n - 1) / 2) == 0
    reason = report.kernel("k:loop@12").undef_reason
    assert "comes from a macro and leaves out part of its header" in reason
