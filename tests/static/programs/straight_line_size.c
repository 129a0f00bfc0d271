/* Sizes changed by straight-line code before the loops (issue 20, verify20f K4; Rodinia nw's
   `max_rows = max_rows + 1;`): every write a plain `=` among the function's top-level
   statements, so the value at the loops is that of the last write before them. */
#include <stdio.h>
#include <stdlib.h>

int table[80][80];

static void __attribute__ ((noinline)) grid (int max_rows)
{
  int max_cols = max_rows;
  max_rows = max_rows + 1;
  max_cols = max_cols + 1;
  for (int i = 0; i < max_rows; i++)
    for (int j = 0; j < max_cols; j++)
      table[i][j] = i - j;
  max_rows = 2;
}

static int __attribute__ ((noinline)) halves (int n)
{
  int m;
  m = n / 2;
  m = m * 3;
  int s = 0;
  for (int i = 0; i < m; i++)
    s += table[0][i % 80];
  return s;
}

static int __attribute__ ((noinline)) maybe (int n)
{
  int m = n;
  if (n > 10)
    m = 10;
  int s = 0;
  for (int i = 0; i < m; i++)
    s += table[1][i];
  return s;
}

int main (int argc, char **argv)
{
  int n = atoi (argv[1]);
  grid (n);
  printf ("%d %d %d\n", table[n][n], halves (n), maybe (n));
  return 0;
}
