/* A loop whose two arrays may overlap: at -O3 gcc vectorizes it behind a run-time alias check
   and keeps a scalar copy for the overlapping case. Both copies have the trip count M, fixed
   when compiling; only one of them runs per call. Usage: versioned_loops */
#include <stdio.h>

#define M 70
#define REPS 100

static double x[M + 1], y[M + 1];

#if defined(__GNUC__) && !defined(__clang__)
#define KEEP __attribute__((noipa)) /* no inlining, no specialized copy */
#else
#define KEEP __attribute__((noinline))
#endif

KEEP void update(double *out, const double *in, double s) {
  for (int j = 0; j < M; j++)
    out[j] += s * in[j];
}

int main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  int reps = REPS;
  for (int j = 0; j <= M; j++) {
    x[j] = j;
    y[j] = 1.0;
  }
  for (int r = 0; r < reps; r++)
    update(y, x, 0.5);
  printf("%f\n", y[M / 2]);
  return 0;
}
