/* A three-point stencil over the rows of two matrices that may overlap, with a run-time odd
   row length n - 2. gcc -O3 versions the whole loop nest behind one overlap check: a copy
   with a vector inner loop (2 per pass and a peeled last iteration) and a scalar copy; only
   one runs. Usage: versioned_nest N */
#include <stdlib.h>

__attribute__((noinline)) void sweep(int n, double (*a)[n], double (*b)[n]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      b[i][j] = 0.2 * (a[i][j - 1] + a[i][j] + a[i][j + 1]);
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  int n = atoi(argv[1]);
  double(*a)[n] = calloc(n * n, sizeof(double));
  double(*b)[n] = calloc(n * n, sizeof(double));
  sweep(n, a, b);
  int result = (int)b[1][1];
  free(a);
  free(b);
  return result;
}
