/* A rare path gcc moves to a separate cold part (f.cold) that jumps back into the hot code
   (issue 20, flow conservation; written here). Usage: cold_path n */
#include <stdio.h>
#include <stdlib.h>

__attribute__((cold, noinline)) void report_negative(int i)
{
  fprintf(stderr, "negative value at %d\n", i);
}

__attribute__((noinline)) double clamp_sum(const double *v, int n)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) {
    double x = v[i];
    if (x < 0.0) {
      report_negative(i);
      x = -x;
    }
    s += x;
  }
  return s;
}

int main(int argc, char **argv)
{
  if (argc != 2)
    return 2;
  int n = atoi(argv[1]);
  double *v = malloc(n * sizeof *v);
  if (!v)
    return 1;
  for (int i = 0; i < n; i++)
    v[i] = (i % 17 == 3) ? -1.0 * i : 0.5 * i;
  printf("%f\n", clamp_sum(v, n));
  free(v);
  return 0;
}
