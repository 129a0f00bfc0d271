/* perfcast test program (issue 20, static32): an early return that a probability(0) pragma
   says never happens; the loops after it are counted as if it were not there. */
#include <stdio.h>
#include <stdlib.h>

long m[64][64];
long total;

__attribute__((noinline)) int row_sums(int rows, int cols)
{
#pragma perfcast probability(0)
  if (rows > 64 || cols > 64)
    return 999;
  long s = 0;
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      s += m[i][j] * (i + 1);
  total = s;
  return 0;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 64; j++)
      m[i][j] = i - j;
  int status = row_sums(n, n);
  printf("%d %ld\n", status, total);
  return 0;
}
