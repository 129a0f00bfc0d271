/* STREAM-like kernels over arrays whose size n is read at run time: vector loops with
   remainder code whose trip counts the compiler does not know.
   Usage: stream_runtime N NTIMES */
#include <stdio.h>
#include <stdlib.h>

void kernels(double *restrict a, double *restrict b, double *restrict c, int n, int ntimes,
             double scalar) {
  for (int k = 0; k < ntimes; k++) {
    for (int j = 0; j < n; j++)
      c[j] = a[j];
    for (int j = 0; j < n; j++)
      b[j] = scalar * c[j];
    for (int j = 0; j < n; j++)
      c[j] = a[j] + b[j];
    for (int j = 0; j < n; j++)
      a[j] = b[j] + scalar * c[j];
  }
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int n = atoi(argv[1]);
  int ntimes = atoi(argv[2]);
  double *a = malloc(n * sizeof(double));
  double *b = malloc(n * sizeof(double));
  double *c = malloc(n * sizeof(double));
  for (int j = 0; j < n; j++) {
    a[j] = 1.0;
    b[j] = 2.0;
    c[j] = 0.0;
  }
  kernels(a, b, c, n, ntimes, 3.0);
  printf("%f\n", a[n / 2]);
  return 0;
}
