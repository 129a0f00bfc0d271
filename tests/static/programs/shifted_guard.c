/* Loop guards with an offset on the loop variable (issue 20, J14 of the fifth round): the
   SIMD-style `i + 4 <= n` stepping by 4, a downward `i - 2 >= 0`, `3 + j < n`, and the
   remainder loop `for (; i < n; i++)` that starts where the loop by 4 left i.
   Usage: shifted_guard N */
#include <stdio.h>
#include <stdlib.h>

float xs[4096], ys[4096];

static void __attribute__ ((noinline)) by_four (int n, float a)
{
  int i;
  for (i = 0; i + 4 <= n; i += 4)
    {
      ys[i] += a * xs[i];
      ys[i + 1] += a * xs[i + 1];
      ys[i + 2] += a * xs[i + 2];
      ys[i + 3] += a * xs[i + 3];
    }
}

static void __attribute__ ((noinline)) down_by_two (int n)
{
  int i;
  for (i = n; i - 2 >= 0; i -= 2)
    ys[i] += 1.0f;
}

static void __attribute__ ((noinline)) offset_first (int n)
{
  int j;
  for (j = 0; 3 + j < n; j++)
    xs[j] = ys[j + 3];
}

static void __attribute__ ((noinline)) with_rest (int n, float a)
{
  int i;
  for (i = 0; i + 4 <= n; i += 4)
    {
      ys[i] += a * xs[i];
      ys[i + 1] += a * xs[i + 1];
      ys[i + 2] += a * xs[i + 2];
      ys[i + 3] += a * xs[i + 3];
    }
  for (; i < n; i++)
    ys[i] += a * xs[i];
}

int main (int argc, char **argv)
{
  int n = atoi (argv[1]);
  by_four (n, 2.0f);
  down_by_two (n);
  offset_first (n);
  with_rest (n, 3.0f);
  printf ("%f\n", ys[1] + xs[2]);
  return 0;
}
