/* A matrix-vector product whose size is a macro, as PolyBench sets its sizes with -D: the
   optimized binary counts its loops to the constant (37), while the source counts them to
   SIZE. The model keeps the source's counts in SIZE where the binary's trip counts equal
   them at the built value. */
#include <stdio.h>

#ifndef SIZE
#define SIZE 37
#endif

static double matrix[SIZE][SIZE], vector_in[SIZE], vector_out[SIZE];

int main(void)
{
  int n = SIZE;
  for (int i = 0; i < n; i++) {
    vector_in[i] = i;
    for (int j = 0; j < n; j++)
      matrix[i][j] = (double) ((i * j + 1) % n) / n;
  }
  for (int i = 0; i < n; i++) {
    double sum = 0.0;
    for (int j = 0; j < n; j++)
      sum += matrix[i][j] * vector_in[j];
    vector_out[i] = sum;
  }
  printf("%f\n", vector_out[n - 1]);
  return 0;
}
