/* A loop that skips its odd iterations (verify20f K15): clang -O2/-O3 unroll it by two and
   drop the empty odd copy, leaving a counter that steps by 2 up to n rounded down to even. */
#include <stdio.h>
#include <stdlib.h>

double cells[4096];

static void __attribute__ ((noinline)) decrement_even (int n)
{
  for (int i = 0; i < n; i++) {
    if (i & 1)
      continue;
    cells[i] -= 1.0;
  }
}

int main (int argc, char **argv)
{
  int n = argc > 1 ? atoi (argv[1]) : 10;
  if (n > 4096)
    n = 4096;
  decrement_even (n);
  printf ("%g\n", cells[0]);
  return 0;
}
