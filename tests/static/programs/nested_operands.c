/* Operands of && and ?: nested in an if block (issue 20, verify20f K9 and K2): the right
   operand of && in an else-if condition runs only when the left one holds, and the arms of a
   ?: in an if arm each run in a share of that arm's runs. */
#include <stdio.h>
#include <stdlib.h>

#define MIN(a, b) ((a) <= (b) ? (a) : (b))

double out[64 * 64];
int src[4096], dst[4096];

static void __attribute__ ((noinline)) corners (int row, int col)
{
  for (int r = 0; r < row; r++)
    for (int c = 0; c < col; c++) {
      double d;
      if ((r == 0) && (c == 0))
        d = 1.0;
      else if ((r == 0) && (c == col - 1))
        d = 2.0;
      else if ((r == row - 1) || (c == 0))
        d = 3.0;
      else
        d = 4.0;
      out[r * col + c] = d;
    }
}

static void __attribute__ ((noinline)) nested_and (int row, int col)
{
  for (int r = 0; r < row; r++)
    for (int c = 0; c < col; c++) {
      double d = 4.0;
      if (c > 0) {
        if ((r == 1) && (c == col - 1))
          d = 2.0;
      }
      out[r * col + c] += d;
    }
}

static void __attribute__ ((noinline)) step_min (int cols)
{
  int m;
  for (int n = 0; n < cols; n++) {
    m = src[n];
    if (n > 0)
      m = MIN (m, src[n - 1]);
    dst[n] = m;
  }
}

static int __attribute__ ((noinline)) pick (int a, int b, int c)
{
  int m;
  if (c > 0)
    m = a <= b ? a : b;
  else if ((c == 0) && (b > 4))
    m = b;
  else
    m = -c;
  return m;
}

int main (int argc, char **argv)
{
  int row = atoi (argv[1]), col = atoi (argv[2]);
  corners (row, col);
  nested_and (row, col);
  for (int i = 0; i < col; i++)
    src[i] = (i * 7919) % 10;
  step_min (col);
  for (int i = 0; i < col; i++)
    dst[i] += pick (src[i], 5, i - 2);
  printf ("%g %d\n", out[row * col - 1], dst[col - 1]);
  return 0;
}
