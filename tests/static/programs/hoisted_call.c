/* perfcast test program (issue 20, static32): a call under a guard with probability 0 whose
   body does not depend on the loop around it; clang -O3 hoists the inlined body out of the loop
   into one block without a source line, run under a test it made of the loop's bound and the
   guard. */
#include <stdio.h>
#include <stdlib.h>

float p[4][4], q[4][4], r[4][4];

static void product(int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float s = 0.0f;
      for (int k = 0; k < n; k++)
        s += p[i][k] * q[k][j];
      r[i][j] = s;
    }
}

int main(int argc, char **argv)
{
  int rpt = atoi(argv[1]), check = atoi(argv[2]);
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 4; j++) {
      p[i][j] = (float) (i - j);
      q[i][j] = (float) (i + j);
    }
  for (int t = 0; t < rpt; t++) {
#pragma perfcast probability(0)
    if (check)
      product(3);
  }
  printf("%f\n", r[1][1]);
  return 0;
}
