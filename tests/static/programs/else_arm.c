/* A nested if/else in a triangular loop, in the style of PolyBench nussinov (perfcast test
   program, issue 20 G6): the else arm is unbraced, its statement on the line after `else`. */
#include <stdio.h>
#ifndef N
#define N 30
#endif
int table[N][N];

__attribute__((noinline)) void sweep(int n)
{
  for (int i = n - 1; i >= 0; i--)
    for (int j = i + 1; j < n; j++) {
      if (j - 1 >= 0 && i + 1 < n) {
        if (i < j - 1)
          table[i][j] = table[i + 1][j - 1] + 1;
        else
          table[i][j] = table[i + 1][j - 1] + 2;
      }
    }
}

int main(void)
{
  sweep(N);
  printf("%d\n", table[0][N - 1]);
  return 0;
}
