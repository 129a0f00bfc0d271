/* Loops of the same shape with and without possible aliasing, with a trip count fixed when
   compiling (even and odd) or given at run time, and one unrolled by a pragma. At -O3 clang
   versions the plain-pointer loops behind a run-time overlap check; with a fixed count it writes
   the vector copy as straight-line code and keeps a scalar machine loop as the fallback. The
   arrays never overlap here, so the vector copies run. Usage: alias_versions N REPS (N <= 1000) */
#include <stdio.h>
#include <stdlib.h>

#define EVEN 70
#define ODD 71

static double x[1000], y[1000];

#if defined(__GNUC__) && !defined(__clang__)
#define KEEP __attribute__((noipa)) /* no inlining, no specialized copy */
#else
#define KEEP __attribute__((noinline))
#endif

KEEP void fixed_even(double *out, const double *in, double s) {
  for (int j = 0; j < EVEN; j++)
    out[j] += s * in[j];
}

KEEP void fixed_odd(double *out, const double *in, double s) {
  for (int j = 0; j < ODD; j++)
    out[j] += s * in[j];
}

KEEP void fixed_restrict(double *restrict out, const double *restrict in, double s) {
  for (int j = 0; j < EVEN; j++)
    out[j] += s * in[j];
}

KEEP void sized(double *out, const double *in, double s, int n) {
  for (int j = 0; j < n; j++)
    out[j] += s * in[j];
}

KEEP void sized_restrict(double *restrict out, const double *restrict in, double s, int n) {
  for (int j = 0; j < n; j++)
    out[j] += s * in[j];
}

KEEP void sized_unrolled(double *out, const double *in, double s, int n) {
#if defined(__clang__)
#pragma unroll 4
#else
#pragma GCC unroll 4
#endif
  for (int j = 0; j < n; j++)
    out[j] = out[j] * s + in[j];
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int n = atoi(argv[1]);
  int reps = atoi(argv[2]);
  for (int j = 0; j < 1000; j++) {
    x[j] = j;
    y[j] = 1.0;
  }
  for (int r = 0; r < reps; r++) {
    fixed_even(y, x, 0.5);
    fixed_odd(y, x, 0.5);
    fixed_restrict(y, x, 0.5);
    sized(y, x, 0.5, n);
    sized_restrict(y, x, 0.5, n);
    sized_unrolled(y, x, 0.5, n);
  }
  printf("%f\n", y[n / 2]);
  return 0;
}
