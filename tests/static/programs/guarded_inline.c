/* Calls the compiler inlines under if statements: one annotated never taken, one taken on
   every other iteration of a parameter-bounded loop, and one guarded by data.
   Usage: guarded_inline N ITERS */
#include <stdio.h>
#include <stdlib.h>

static inline void smooth(double *a, int n) {
  for (int i = 1; i < n; i++)
    a[i] = 0.5 * (a[i] + a[i - 1]);
}

static inline void scale(double *a, int n, double factor) {
  for (int i = 0; i < n; i++)
    a[i] *= factor;
}

void step(double *a, int n, int iters, int verbose) {
  for (int t = 0; t < iters; t++) {
#pragma perfcast probability(0)
    if (verbose)
      smooth(a, n);
    if (t < iters / 2)
      scale(a, n, 0.99);
    a[0] += 1.0;
  }
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int n = atoi(argv[1]);
  int iters = atoi(argv[2]);
  double *a = calloc(n, sizeof *a);
  step(a, n, iters, argc > 5);
  printf("%f\n", a[n - 1]);
  free(a);
  return 0;
}
