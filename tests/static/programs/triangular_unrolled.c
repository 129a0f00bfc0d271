/* An LU factorization whose inner loops (k < j, k < i) are triangular: their iterations per
   entry grow with the enclosing loop's variable. clang -O2/-O3 unroll them by 2 with a
   remainder block (perfcast test program, issue 20 F13). */
#include <stdlib.h>

#define SIZE 40

double m[SIZE][SIZE];

__attribute__((noinline)) void factor(void)
{
  int i, j, k;
  for (i = 0; i < SIZE; i++) {
    for (j = 0; j < i; j++) {
      for (k = 0; k < j; k++)
        m[i][j] -= m[i][k] * m[k][j];
      m[i][j] /= m[j][j];
    }
    for (j = i; j < SIZE; j++)
      for (k = 0; k < i; k++)
        m[i][j] -= m[i][k] * m[k][j];
  }
}

int main(int argc, char **argv)
{
  int reps = atoi(argv[1]), r, i, j;
  for (r = 0; r < reps; r++) {
    for (i = 0; i < SIZE; i++)
      for (j = 0; j < SIZE; j++)
        m[i][j] = i == j ? SIZE : 1.0 / (1 + i + j);
    factor();
  }
  return m[1][1] < 0.0;
}
