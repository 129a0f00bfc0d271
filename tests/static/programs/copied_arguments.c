/* perfcast test program (issue 20, static34): Embench minver's mmul checks copies of its
   arguments (`row_c = row_a;`) before its loops and returns an error constant. */
#include <stdio.h>
#include <stdlib.h>

float a[3][3] = {{3, -6, 7}, {9, 0, -5}, {5, -8, 6}}, b[3][3], c[3][3];

static int __attribute__((noinline)) product(int row_a, int col_a, int row_b, int col_b)
{
  int row_c = row_a, col_c;
  col_c = col_b;
  if (row_c < 1 || row_b < 1 || col_c < 1 || col_a != row_b)
    return 999;
  for (int i = 0; i < row_c; i++)
    for (int j = 0; j < col_c; j++) {
      float w = 0.0f;
      for (int k = 0; k < row_b; k++)
        w += a[i][k] * b[k][j];
      c[i][j] = w;
    }
  return 0;
}

int main(int argc, char **argv)
{
  int rpt = atoi(argv[1]), s = 0;
  for (int t = 0; t < rpt; t++)
    s += product(3, 3, 3, 3);
  printf("%d %f\n", s, c[1][1]);
  return 0;
}
