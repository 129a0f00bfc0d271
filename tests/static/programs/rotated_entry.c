/* A Gauss-Seidel sweep in place over a compile-time-size grid, in the shape of PolyBench's
   seidel-2d. gcc -O2 rotates the row loop's inner loop and enters it at the block holding
   the whole body and the exit test; a one-instruction block before it (a register copy for
   the next iteration) is reached by the back edge only. That entry block is the loop's header
   and exits, and was counted once more per entry than the body runs, as a test-only header
   is (+3.2 % against callgrind, no note). */
#include <stdlib.h>

#define SIZE 33

double grid[SIZE][SIZE];

__attribute__((noinline)) void sweeps(int reps)
{
  int s, i, j;
  for (s = 0; s < reps; s++)
    for (i = 1; i <= SIZE - 2; i++)
      for (j = 1; j <= SIZE - 2; j++)
        grid[i][j] = (grid[i - 1][j - 1] + grid[i - 1][j] + grid[i - 1][j + 1]
                      + grid[i][j - 1] + grid[i][j] + grid[i][j + 1] + grid[i + 1][j - 1]
                      + grid[i + 1][j] + grid[i + 1][j + 1]) / 9.0;
}

int main(int argc, char **argv)
{
  int reps = atoi(argv[1]);
  grid[SIZE / 2][SIZE / 2] = 1.0;
  sweeps(reps);
  return grid[1][1] < 0.0;
}
