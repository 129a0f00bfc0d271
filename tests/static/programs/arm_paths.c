/* perfcast test program (issue 20, static30): a one-line `if` with a call in a dump loop, in
   the shape of PolyBench's print_array. gcc -O3 inlines it into main and ends the then arm with
   a jump carrying the next line; gcc -O2 copies the loop's update onto the path that skips it. */
#include <stdio.h>
#include <stdlib.h>

static void dump(int n, const double *y)
{
  for (int i = 0; i < n; i++) {
    if (i % 20 == 0) fputc('\n', stderr);
    fprintf(stderr, "%0.2lf ", y[i]);
  }
}

__attribute__((noinline)) static double every_twentieth(int n, const double *a)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    s += a[i];
    if (i % 20 == 0) fprintf(stderr, "%d\n", i);
  }
  return s;
}

__attribute__((noinline)) static void fill(int n, double *y)
{
  for (int i = 0; i < n; i++)
    y[i] = n + 1 - i;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  double *y = malloc(n * sizeof *y);
  fill(n, y);
  dump(n, y);
  double s = every_twentieth(n, y);
  free(y);
  return s < 0.0;
}
