/* Code under an `if` outside loops (issue 20, written here): a run-time guard nobody can count
   (a set-up done once, `if (ready == 0)`), guards on the parameter n with an else arm and a
   nested if, a guard annotated with a probability, an error path and a verbose print.
   Usage: guards_outside_loops n [verbose] */
#include <stdio.h>
#include <stdlib.h>

static double table[64];
static int ready = 0;

__attribute__((noinline)) double lookup(int k)
{
  int i;
  if (ready == 0) {
    for (i = 0; i < 64; i++)
      table[i] = 0.5 * i;
    table[0] = 1.0;
    table[1] = table[0] * 3.0 + 2.0;
    ready = 1;
  }
  return table[k & 63];
}

__attribute__((noinline)) double scaled(double x, int n)
{
  double y = x;
  if (n > 100) {
    y = y * 2.0 + 1.0;
    y = y / 3.0;
    if (n > 1000) {
      y = y - 7.0;
      y = y / (y + 1.5);
    }
  } else {
    y = y + 5.0;
    y = y / (y + 0.25);
  }
  return y;
}

__attribute__((noinline)) double damped(double x, int flag)
{
#pragma perfcast probability(0)
  if (flag) {
    x = x * 3.0 + 1.0;
    x = x / (x + 7.0);
    x = x / (x - 2.0);
  }
  return x;
}

__attribute__((noinline)) double weighted(double x, int flag)
{
#pragma perfcast probability(p)
  if (flag) {
    x = x * 3.0 + 1.0;
    x = x / (x + 7.0);
    x = x / (x - 2.0);
  }
  return x;
}

int main(int argc, char **argv)
{
  int n, i;
  double s = 0.0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s n [verbose]\n", argv[0]);
    exit(2);
  }
  n = atoi(argv[1]);
  for (i = 0; i < n; i++)
    s += lookup(i) + scaled((double) i, n) + damped(s, argc > 5) + weighted(s, argc > 6);
  if (argc > 2) {
    printf("sum %f\n", s);
    printf("n %d\n", n);
  }
  return s < 0.0;
}
