/* PolyBench syrk's shape: per row i, a triangular j loop (j <= i) scaling the row, then for
   each k a second triangular j loop updating it, on arrays from an allocator in another file
   and inlined into main. The row count being a constant, the largest trip of the j loops is
   known: gcc -O3 vectorizes the first j loop and unrolls its vector part completely into a
   chain of copies, each leaving when j reaches i (`cmp esi, K; je out`). Build with
   unrolled_chain_alloc.c. */
#include <stdio.h>
#include <stdlib.h>

#ifndef ROWS
#define ROWS 29
#endif
#ifndef DEPTH
#define DEPTH 23
#endif

void *chain_alloc(size_t bytes);

static void rank_update(int n, int m, double alpha, double beta, double c[ROWS][ROWS],
                        double a[ROWS][DEPTH])
{
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++)
      c[i][j] *= beta;
    for (int k = 0; k < m; k++)
      for (int j = 0; j <= i; j++)
        c[i][j] += alpha * a[i][k] * a[j][k];
  }
}

int main(void)
{
  double (*c)[ROWS] = chain_alloc(sizeof(double[ROWS][ROWS]));
  double (*a)[DEPTH] = chain_alloc(sizeof(double[ROWS][DEPTH]));
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < ROWS; j++)
      c[i][j] = i + j;
  for (int i = 0; i < ROWS; i++)
    for (int k = 0; k < DEPTH; k++)
      a[i][k] = i - k;
  rank_update(ROWS, DEPTH, 1.5, 1.2, c, a);
  printf("%f\n", c[ROWS - 1][ROWS - 1]);
  free(c);
  free(a);
  return 0;
}
