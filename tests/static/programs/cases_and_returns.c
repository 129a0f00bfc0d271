/* The cases of a switch and an early return outside loops (issue 20, written here).
   Usage: cases_and_returns n mode */
#include <stdlib.h>

__attribute__((noinline)) double pick(double x, int mode)
{
  switch (mode) {
  case 0:
    x = x * 2.0 + 1.0;
    break;
  case 1:
    x = x / (x + 3.0);
    x = x * x;
    break;
  default:
    x = x - 1.0;
  }
  return x;
}

__attribute__((noinline)) double clipped(double x, int n)
{
  if (n < 10)
    return 0.0;
  x = x * 0.5 + 1.0;
  x = x / (x + 2.0);
  return x;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]), mode = atoi(argv[2]), i;
  double s = 0.0;
  for (i = 0; i < n; i++)
    s += pick((double) i, mode) + clipped((double) i, n);
  return s < 0.0;
}
