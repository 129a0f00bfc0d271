/* Kernels written the way PolyBench/C writes them: every loop bound goes through a
   function-like macro (_PB_N expands to POLYBENCH_LOOP_BOUND(N, n), which keeps the run-time
   argument), arrays are indexed through macros, and one bound uses an object-like macro. */
#include <stdlib.h>

#define N 4000
#define M 3000
#define TSTEPS 500
#define POLYBENCH_LOOP_BOUND(x, y) y
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)
#define _PB_M POLYBENCH_LOOP_BOUND(M, m)
#define _PB_TSTEPS POLYBENCH_LOOP_BOUND(TSTEPS, tsteps)
#define SCALAR_VAL(x) x
#define AT(a, i, j, width) (a)[(i) * (width) + (j)]
#define HALO 2

static void kernel_gemm(int n, int m, double alpha, double beta, double *C, double *A,
                        double *B) {
  int i, j, k;
  for (i = 0; i < _PB_N; i++) {
    for (j = 0; j < _PB_M; j++) {
      AT(C, i, j, m) *= beta;
    }
    for (k = 0; k < _PB_N; k++) {
      for (j = 0; j < _PB_M; j++) {
        AT(C, i, j, m) += alpha * AT(A, i, k, n) * AT(B, k, j, m);
      }
    }
  }
}

static void kernel_jacobi_2d(int tsteps, int n, double *A, double *B) {
  int t, i, j;
  for (t = 0; t < _PB_TSTEPS; t++) {
    for (i = 1; i < _PB_N - 1; i++) {
      for (j = 1; j < _PB_N - 1; j++) {
        AT(B, i, j, n) = SCALAR_VAL(0.2) * (AT(A, i, j, n) + AT(A, i, j - 1, n) +
                                            AT(A, i, j + 1, n) + AT(A, i + 1, j, n) +
                                            AT(A, i - 1, j, n));
      }
    }
    for (i = 1; i < _PB_N - 1; i++) {
      for (j = 1; j < _PB_N - 1; j++) {
        AT(A, i, j, n) = SCALAR_VAL(0.2) * (AT(B, i, j, n) + AT(B, i, j - 1, n) +
                                            AT(B, i, j + 1, n) + AT(B, i + 1, j, n) +
                                            AT(B, i - 1, j, n));
      }
    }
  }
}

static void kernel_lu(int n, double *A) {
  int i, j, k;
  for (i = 0; i < _PB_N; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++) {
        AT(A, i, j, n) -= AT(A, i, k, n) * AT(A, k, j, n);
      }
      AT(A, i, j, n) /= AT(A, j, j, n) + SCALAR_VAL(1.0);
    }
    for (j = i; j < _PB_N; j++) {
      for (k = 0; k < i; k++) {
        AT(A, i, j, n) -= AT(A, i, k, n) * AT(A, k, j, n);
      }
    }
  }
}

/* trmm-like: the inner bound starts after the outer index; a halo loop bound through an
   object-like macro (i <= HALO + 1). */
static void kernel_trmm(int m, int n, double alpha, double *A, double *B) {
  int i, j, k;
  for (i = 0; i < _PB_M; i++) {
    for (j = 0; j < _PB_N; j++) {
      for (k = i + 1; k < _PB_M; k++) {
        AT(B, i, j, n) += AT(A, k, i, m) * AT(B, k, j, n);
      }
      AT(B, i, j, n) = alpha * AT(B, i, j, n);
    }
  }
  for (i = 0; i <= HALO + 1; i++) {
    for (j = 0; j < _PB_N; j += HALO) {
      AT(B, 0, j, n) += i;
    }
  }
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  int tsteps = atoi(argv[3]);
  int size = (n > m ? n : m) + 1;
  double *A = calloc((size_t)size * size, sizeof(double));
  double *B = calloc((size_t)size * size, sizeof(double));
  double *C = calloc((size_t)size * size, sizeof(double));
  kernel_gemm(n, m, 1.5, 1.2, C, A, B);
  kernel_jacobi_2d(tsteps, n, A, B);
  kernel_lu(n, A);
  kernel_trmm(m, n, 1.5, A, B);
  free(A);
  free(B);
  free(C);
  return 0;
}
