/* A one-time set-up under a data guard outside loops, in the style of NAS IS/EP's randlc
   (`if (KS == 0) { ...loops... KS = 1; }`). The guard's count is undefined, so the function
   is; with --profile its loop's blocks took measured counts but its straight-line code was
   counted at every call (randlc +14 % to +38 % against callgrind). */
#include <stdlib.h>
static int ready = 0;
static double scale, offset;
__attribute__((noinline)) double next(double x)
{
  int i;
  if (ready == 0) {
    scale = 1.0;
    offset = 1.0;
    for (i = 1; i <= 23; i++)
      scale = 0.5 * scale;
    offset = scale * 3.0 + offset * 7.0 - scale / 5.0;
    ready = 1;
  }
  return x * scale + offset;
}
int main(int argc, char **argv)
{
  int n = atoi(argv[1]), i;
  double s = 0.0;
  for (i = 0; i < n; i++)
    s += next((double) i);
  return s < 0.0;
}
