/* A product with the transpose over the first n rows and columns of a matrix whose row
   length is a compile-time constant (PolyBench gemver with its size read at run time):
   clang -O1 walks a column with an index register stepped by a whole row (`add r8, 0x40`,
   `[rdx + r8*8]`) against the bound n << 6. Usage: column_products N (N <= WIDTH) */
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 64

__attribute__((noinline)) void transposed_product(int n, double (*a)[WIDTH], double *x,
                                                  const double *y)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      x[i] += a[j][i] * y[j];
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 41;
  double (*a)[WIDTH] = malloc(sizeof(double[WIDTH][WIDTH]));
  double *x = calloc(WIDTH, sizeof(double));
  double *y = malloc(WIDTH * sizeof(double));
  for (int i = 0; i < WIDTH; i++) {
    y[i] = i;
    for (int j = 0; j < WIDTH; j++)
      a[i][j] = i - j;
  }
  transposed_product(n, a, x, y);
  printf("%f\n", x[n - 1]);
  free(a);
  free(x);
  free(y);
  return 0;
}
