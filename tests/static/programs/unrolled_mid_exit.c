/* Loops with an odd constant trip count that clang -O2/-O3 unrolls with the exit test after
   the first copy of the body: the header holds copy 1 and the test, the latch the other
   copies and a jump back. Reproduces the running sums of NAS IS's rank (511 and 2047
   iterations, unrolled by 2 and 4) and the column sums of PolyBench's covariance (37 rows,
   a byte offset stepping over two rows), which were counted as if not unrolled
   (prefix: +100 % against callgrind, no note). */
#include <stdlib.h>

#define COUNTS 512
#define ROWS 37
#define COLUMNS 30

int histogram[COUNTS], ranks[COUNTS];
double data[ROWS][COLUMNS], sums[COLUMNS];

__attribute__((noinline)) void running_sum(void)
{
  int i;
  ranks[0] = 0;
  for (i = 1; i < COUNTS; i++)
    ranks[i] = ranks[i - 1] + histogram[i - 1];
}

__attribute__((noinline)) void column_sums(void)
{
  int i, j;
  for (j = 0; j < COLUMNS; j++) {
    sums[j] = 0.0;
    for (i = 0; i < ROWS; i++)
      sums[j] += data[i][j];
  }
}

int main(int argc, char **argv)
{
  int reps = atoi(argv[1]);
  int r, i;
  for (i = 0; i < COUNTS; i++)
    histogram[i] = i % 7;
  for (r = 0; r < reps; r++) {
    running_sum();
    column_sums();
  }
  return ranks[COUNTS - 1] + (int) sums[1] == 3 ? 1 : 0;
}
