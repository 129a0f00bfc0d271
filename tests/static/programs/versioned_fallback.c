/* A loop the compiler versions behind a run-time overlap test: vector code for arrays that do
   not overlap, and a scalar copy for arrays that do, which never runs here (issue 20, flow
   conservation; written here). Usage: versioned_fallback n */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void add(double *a, const double *b, long n)
{
  for (long i = 0; i < n; i++)
    a[i] += b[i];
}

int main(int argc, char **argv)
{
  if (argc != 2)
    return 2;
  long n = atol(argv[1]);
  double *a = malloc(n * sizeof *a);
  double *b = malloc(n * sizeof *b);
  if (!a || !b)
    return 1;
  for (long i = 0; i < n; i++) {
    a[i] = i;
    b[i] = 1.0;
  }
  for (int r = 0; r < 10; r++)
    add(a, b, n);
  printf("%f\n", a[n - 1]);
  free(a);
  free(b);
  return 0;
}
