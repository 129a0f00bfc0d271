/* A triangular inner loop inside its outer loop, in the style of PolyBench durbin (perfcast
   test program, issue 20 G4): clang -O2/-O3 unroll the inner loop by 2 with a counter
   stepping by 2 and a remainder for odd k. */
#include <stdio.h>
#ifndef N
#define N 60
#endif
double r[N], y[N];

__attribute__((noinline)) double triangle(int n)
{
  double total = 0.0;
  for (int k = 1; k < n; k++) {
    double sum = 0.0;
    for (int i = 0; i < k; i++)
      sum += r[k - i - 1] * y[i];
    total += sum;
  }
  return total;
}

int main(void)
{
  for (int i = 0; i < N; i++) {
    r[i] = N + 1 - i;
    y[i] = 1.0 / (i + 1);
  }
  printf("%f\n", triangle(N));
  return 0;
}
