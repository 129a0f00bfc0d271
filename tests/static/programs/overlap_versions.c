/* Loops over two distinct arrays that the compiler cannot prove apart: clang and gcc version
   them behind a run-time overlap check (a vector copy for arrays that do not overlap, a scalar
   copy for arrays that do). The arrays never overlap here. Sizes fixed when
   compiling (-DN=..., -DSTEPS=...) or given at run time. Usage: overlap_versions n steps */
#include <stdio.h>
#include <stdlib.h>

#ifdef N
#define SIZE N /* fixed when compiling */
#else
#define SIZE n
#endif
#ifdef STEPS
#define REPEATS STEPS
#else
#define REPEATS steps
#endif

__attribute__((noinline)) void fill(double *a, double *b, int n) {
  for (int i = 0; i < SIZE; i++) {
    a[i] = (i + 2.0) / SIZE;
    b[i] = (i + 3.0) / SIZE;
  }
}

__attribute__((noinline)) void smooth(double *out, const double *in, int n) {
  for (int i = 1; i < SIZE - 1; i++)
    out[i] = 0.25 * (in[i - 1] + 2.0 * in[i] + in[i + 1]);
}

__attribute__((noinline)) void sweep(double *a, double *b, int n, int steps) {
  for (int t = 0; t < REPEATS; t++) {
    for (int i = 1; i < SIZE - 1; i++)
      b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1]);
    for (int i = 1; i < SIZE - 1; i++)
      a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1]);
  }
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int n = atoi(argv[1]);
  int steps = atoi(argv[2]);
  double *a = malloc(n * sizeof *a);
  double *b = malloc(n * sizeof *b);
  if (!a || !b)
    return 1;
  fill(a, b, n);
  smooth(b, a, n);
  sweep(a, b, n, steps);
  printf("%f %f\n", a[n / 2], b[n / 3]);
  free(a);
  free(b);
  return 0;
}
