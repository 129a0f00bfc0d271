/* A loop bound that divides a shifted parameter: (m + 40) / 8 passes for m >= 1 (C truncates
   toward zero and runs no pass for a negative quotient, so below 1 the count is another one). */
#include <stdio.h>
#include <stdlib.h>

long total;

void shifted_passes(int m)
{
  for (int k = 0; k < (m + 40) / 8; k++)
    total += k;
}

int main(int argc, char **argv)
{
  int m = argc > 1 ? atoi(argv[1]) : 3;
  shifted_passes(m);
  printf("%ld\n", total);
  return 0;
}
