/* Chained assignments in a for loop's start (issue 20, verify20f K3; MiBench bitcount's
   `for (j = n = 0, seed = rand (); j < iterations; j++, seed += 13)`): the value of an
   assignment is the value stored, so `j = n = 0` starts j at 0. */
#include <stdio.h>
#include <stdlib.h>

static long __attribute__ ((noinline)) chained (int iters)
{
  long j, n, seed;
  for (j = n = 0, seed = rand (); j < iters; j++, seed += 13)
    n += (j ^ seed) & 3;
  return n;
}

static long __attribute__ ((noinline)) widened (int iters)
{
  long j;
  int k;
  long sum = 0;
  for (j = k = 2; j < iters; j++)
    sum += j + k;
  return sum;
}

static long __attribute__ ((noinline)) narrowed (int iters)
{
  long j;
  unsigned char small;
  long sum = 0;
  for (j = small = 300; j < iters; j++)
    sum += j;
  return sum + small;
}

int main (int argc, char **argv)
{
  int iters = atoi (argv[1]);
  printf ("%ld %ld %ld\n", chained (iters), widened (iters), narrowed (iters));
  return 0;
}
