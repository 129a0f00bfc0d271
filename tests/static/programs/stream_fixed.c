/* STREAM-like kernels over arrays whose size N is fixed when compiling (-DN=...): the compiler
   knows every trip count, vectorizes the loops and may replace the copy by memcpy.
   Usage: stream_fixed */
#include <stdio.h>

#ifndef N
#define N 4000
#endif
#define NTIMES 5

static double a[N], b[N], c[N];

void kernels(double scalar) {
  for (int k = 0; k < NTIMES; k++) {
    for (int j = 0; j < N; j++)
      c[j] = a[j];
    for (int j = 0; j < N; j++)
      b[j] = scalar * c[j];
    for (int j = 0; j < N; j++)
      c[j] = a[j] + b[j];
    for (int j = 0; j < N; j++)
      a[j] = b[j] + scalar * c[j];
  }
}

int main(void) {
  for (int j = 0; j < N; j++) {
    a[j] = 1.0;
    b[j] = 2.0;
    c[j] = 0.0;
  }
  kernels(3.0);
  printf("%f\n", a[N / 2]);
  return 0;
}
