/* perfcast test program (issue 20, static34; verify20e J6): functions that check their
   arguments first and return an error constant when the check fails (Embench minver's
   `if (row < 2 || row > 500 || eps <= 0.0) return 999;`), a null-pointer check, and an edge
   case that is no error check (`n <= 0`). */
#include <stdio.h>
#include <stdlib.h>

#define BAD_ARGUMENT 999

double grid[8][8];

int sweep(int rows, float eps)
{
  int k, i, touched = 0;
  if (rows < 2 || rows > 8 || eps <= 0.0)
    return 999;
  for (k = 0; k < rows; k++)
    for (i = k; i < rows; i++) {
      grid[i][k] = grid[i][k] * 0.5 + eps;
      touched++;
    }
  return touched;
}

int scale(double *values, int n)
{
  if (values == NULL)
    return BAD_ARGUMENT;
  for (int i = 0; i < n; i++)
    values[i] = values[i] * 2.0 + 1.0;
  return 0;
}

int main(int argc, char **argv)
{
  int rpt = atoi(argv[1]), s = 0;
  double values[16] = {0};
  for (int t = 0; t < rpt; t++) {
    s += sweep(6, 1.0e-6);
    s += scale(values, 16);
  }
  printf("%d %f %f\n", s, grid[3][2], values[5]);
  return 0;
}
