/* DGEMM-like triple loop C += A * B on n x n matrices.  Usage: dgemm N */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: dgemm N\n");
    exit(2);
  }
  long n = atol(argv[1]);
  double *a = malloc(n * n * sizeof(double));
  double *b = malloc(n * n * sizeof(double));
  double *c = malloc(n * n * sizeof(double));
  for (long i = 0; i < n * n; i++) {
    a[i] = 1.0 / (double)(i + 1);
    b[i] = 2.0;
    c[i] = 0.0;
  }
  for (long i = 0; i < n; i++)
    for (long j = 0; j < n; j++) {
      double sum = c[i * n + j];
      for (long k = 0; k < n; k++)
        sum += a[i * n + k] * b[k * n + j];
      c[i * n + j] = sum;
    }
  printf("%g\n", c[n * n - 1]);
  free(a);
  free(b);
  free(c);
  return 0;
}
