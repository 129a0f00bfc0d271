/* perfcast test program (issue 20, static30): a modular guard and its call on one line, in a
   loop; its static count is exact, and a profile must not replace it. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static double sum_every(int n, const double *a)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s += a[i];
    if (i % 20 == 0) fprintf(stderr, "%d\n", i);
  }
  return s;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  double *a = calloc(n, sizeof *a);
  double s = sum_every(n, a);
  free(a);
  return s > 1.0;
}
