/* A shortest-path relaxation over rows of a fixed size (the kernel of PolyBench's
   floyd-warshall, written here). gcc -O3 unrolls the j loop completely into packed code over
   the 30-int row inside the i loop, whose pointer then steps one row per pass; the row may
   hold path[i][k], so the packed copy sits behind a run-time check beside a scalar copy.
   Usage: row_relax REPS */
#include <stdlib.h>

#define N 30

int path[N][N];

__attribute__((noinline)) void relax(void) {
  for (int k = 0; k < N; k++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        int through = path[i][k] + path[k][j];
        path[i][j] = path[i][j] < through ? path[i][j] : through;
      }
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  int reps = atoi(argv[1]);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      path[i][j] = (i * j) % 7 + 1;
  for (int r = 0; r < reps; r++)
    relax();
  return path[1][2] < 0;
}
