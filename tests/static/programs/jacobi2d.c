/* 2-D Jacobi relaxation written with benchmark-suite macros in the style of PolyBench: the
   sizes and loop bounds are macros (_PB_N), the data type and constants are macros too.
   Build with -DN=... -DTSTEPS=...; Usage: jacobi2d */
#include <stdio.h>

#ifndef N
#define N 120
#endif
#ifndef TSTEPS
#define TSTEPS 10
#endif
#define _PB_N N
#define _PB_TSTEPS TSTEPS
#define DATA_TYPE double
#define SCALAR_VAL(x) x

static DATA_TYPE A[N][N], B[N][N];

static void init_array(int n) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] = ((DATA_TYPE)i * (j + 2) + 2) / n;
      B[i][j] = ((DATA_TYPE)i * (j + 3) + 3) / n;
    }
}

static void kernel_jacobi_2d(int tsteps, int n) {
  for (int t = 0; t < _PB_TSTEPS; t++) {
    for (int i = 1; i < _PB_N - 1; i++)
      for (int j = 1; j < _PB_N - 1; j++)
        B[i][j] = SCALAR_VAL(0.2) *
                  (A[i][j] + A[i][j - 1] + A[i][1 + j] + A[1 + i][j] + A[i - 1][j]);
    for (int i = 1; i < _PB_N - 1; i++)
      for (int j = 1; j < _PB_N - 1; j++)
        A[i][j] = SCALAR_VAL(0.2) *
                  (B[i][j] + B[i][j - 1] + B[i][1 + j] + B[1 + i][j] + B[i - 1][j]);
  }
  (void)tsteps;
  (void)n;
}

int main(void) {
  init_array(N);
  kernel_jacobi_2d(TSTEPS, N);
  printf("%f\n", A[N / 2][N / 2]);
  return 0;
}
