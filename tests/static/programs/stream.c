/* STREAM-like kernels: copy, scale, add, triad over arrays of n doubles, ntimes repetitions.
   Usage: stream N NTIMES */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: stream N NTIMES\n");
    exit(2);
  }
  long n = atol(argv[1]);
  long ntimes = atol(argv[2]);
  double *a = malloc(n * sizeof(double));
  double *b = malloc(n * sizeof(double));
  double *c = malloc(n * sizeof(double));
  double scalar = 3.0;
  for (long j = 0; j < n; j++) {
    a[j] = 1.0;
    b[j] = 2.0;
    c[j] = 0.0;
  }
  for (long k = 0; k < ntimes; k++) {
    for (long j = 0; j < n; j++)
      c[j] = a[j];
    for (long j = 0; j < n; j++)
      b[j] = scalar * c[j];
    for (long j = 0; j < n; j++)
      c[j] = a[j] + b[j];
    for (long j = 0; j < n; j++)
      a[j] = b[j] + scalar * c[j];
  }
  double sum = 0.0;
  for (long j = 0; j < n; j++)
    sum += a[j] + b[j] + c[j];
  printf("%g\n", sum);
  free(a);
  free(b);
  free(c);
  return 0;
}
