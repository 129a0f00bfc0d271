/* perfcast test program (issue 20, static34): a call whose body does not depend on the loop
   around it, under a run-time guard with an annotated probability. clang -O3 moves the inlined
   body out of the loop into code without a source line, run under a test it made of the loop's
   bound and the guard's variable; the count of that code must follow the guard's probability
   (0 contributes 0). */
#include <stdio.h>
#include <stdlib.h>

double left[3][3] = {{3, -6, 7}, {9, 0, -5}, {5, -8, 6}};
double right[3][3] = {{-3, 0, 2}, {3, -2, 0}, {0, 2, -3}};
double product[3][3];

static void multiply(int rows, int columns, int inner)
{
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < columns; j++) {
      double sum = 0.0;
      for (int k = 0; k < inner; k++)
        sum += left[i][k] * right[k][j];
      product[i][j] = sum;
    }
}

int main(int argc, char **argv)
{
  int rpt = atoi(argv[1]), verify = atoi(argv[2]);
  for (int t = 0; t < rpt; t++) {
#pragma perfcast probability(p_verify)
    if (verify)
      multiply(3, 3, 3);
  }
  printf("%f\n", product[1][1]);
  return 0;
}
