/* PolyBench mvt's initialisation with its size read at run time, inlined into main: clang -O2
   unrolls the j loop by 2 and finishes an odd row with one more copy of the body behind
   `test r8, r8; je`, a block that runs only when n is odd. Build with
   unrolled_chain_alloc.c (the allocator the compiler cannot see into).
   Usage: odd_tail N (N <= 64) */
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 64

void *chain_alloc(size_t bytes);

static void fill_rows(int n, double *first, double *second, double rows[WIDTH][WIDTH])
{
  for (int i = 0; i < n; i++) {
    first[i] = (double) (i % n) / n;
    second[i] = (double) ((i + 1) % n) / n;
    for (int j = 0; j < n; j++)
      rows[i][j] = (double) (i * j % n) / n;
  }
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  double (*rows)[WIDTH] = chain_alloc(sizeof(double[WIDTH][WIDTH]));
  double *first = chain_alloc(WIDTH * sizeof(double));
  double *second = chain_alloc(WIDTH * sizeof(double));
  fill_rows(n, first, second, rows);
  printf("%f %f\n", rows[n - 1][n - 2], first[3] + second[4]);
  return 0;
}
