/* First-order recurrences over i = 1 .. n-1, inlined into main: clang -O2/-O3 unroll them by
   two and leave each pass on a register derived from the scaled index, so one machine pass
   covers two source iterations though the exit test shows no step. */
#include <stdio.h>
#include <stdlib.h>

double a[2001], b[2001], c[2001];

static void damped(long n)
{
  for (long i = 1; i < n; i++)
    a[i] = c[i] * (b[i] - a[i - 1]);
}

static void running_sum(long n)
{
  a[0] = b[0];
  for (long k = 1; k < n; k++)
    a[k] = a[k - 1] + b[k];
}

int main(int argc, char **argv)
{
  long n = atol(argv[1]);
  int rounds = atoi(argv[2]);
  for (int i = 0; i < 2001; i++) {
    b[i] = 1.0 + (i % 7) * 0.25;
    c[i] = 0.5 + (i % 5) * 0.125;
  }
  for (int r = 0; r < rounds; r++) {
    damped(n);
    running_sum(n);
  }
  printf("%g\n", a[n / 2]);
  return 0;
}
