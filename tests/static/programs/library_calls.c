/* A loop that calls a shared-library function (fputc) through the PLT, as PolyBench's
   print_array and NAS EP's sqrt/log calls do. With callgrind's default --skip-plt=yes the
   stub's jump is charged to each call instruction: the function's measured total was 6.3 %
   above the model's count at gcc -O2 (exact with --skip-plt=no). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void show(int n, const double *x)
{
  int i;
  for (i = 0; i < n; i++)
    fputc('a' + (int) x[i] % 26, stderr);
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  double *x = calloc(n, sizeof(double));
  show(n, x);
  free(x);
  return 0;
}
