/* Small kernels over a run-time length, inlined into a repetition loop, one of them starting at
   k = 1 (issue 20, J12; written here in the style of the Livermore loops). gcc tests the
   loop-invariant `n == 1` and `n <= 0` inside the repetition loop and gives each outcome a copy
   of the rest of its body. Usage: repeated_kernels n rpt */
#include <stdio.h>
#include <stdlib.h>

static double x[1001], y[1001], z[1001];
static double q;

static void dot(long n) {
  q = 0.0;
  for (long k = 0; k < n; k++)
    q += z[k] * x[k];
}

static void recurrence(long n) {
  for (long i = 1; i < n; i++)
    x[i] = z[i] * (y[i] - x[i - 1]);
}

__attribute__((noinline)) static void scale(long n) {
  for (long k = 0; k < n; k++)
    y[k] = 0.5 * y[k] + 0.25;
}

__attribute__((noinline)) static void fill(void) {
  for (int i = 0; i < 1001; i++) {
    x[i] = 0.001 * i;
    y[i] = 1.0 - 0.0005 * i;
    z[i] = 0.5;
  }
}

static void prefix(long n) {
  for (long k = 1; k < n; k++)
    z[k] = z[k - 1] + y[k];
}

int main(int argc, char **argv) {
  (void)argc;
  long n = atol(argv[1]);
  int rpt = atoi(argv[2]);
  fill();
  for (int r = 0; r < rpt; r++) {
    dot(n);
    recurrence(n);
    scale(n);
    prefix(n);
  }
  printf("%g %g %g %g\n", q, x[n / 2], y[n / 3], z[n / 4]);
  return 0;
}
