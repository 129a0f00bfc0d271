/* perfcast test program (issue 20, static32): a function whose result its caller drops;
   inlined, the compiler removes the arithmetic but keeps sqrt's errno check and library call
   for a negative argument (no square-root instruction is left). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double v[512];

static double spread(const double *x, int n)
{
  double e = 0.0;
  for (int i = 0; i < n; i++) {
    double d = x[i] * x[i] + x[(i + 1) % n];
    e += 1.0 / sqrt(d);
  }
  return e;
}

__attribute__((noinline)) static int repeat(int rpt, int n)
{
  for (int r = 0; r < rpt; r++)
    spread(v, n);
  return 0;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  for (int i = 0; i < 512; i++)
    v[i] = 0.5 + i % 7;
  repeat(3, n > 512 ? 512 : n);
  printf("%f\n", spread(v, n > 512 ? 512 : n));
  return 0;
}
