/* perfcast test program (issue 20, static30): inner loops under affine conditions on an outer
   loop variable, in a triangular nest (the shape of Embench ud's ludcmp). */
#include <stdio.h>
#include <stdlib.h>

long m[40][40];

__attribute__((noinline)) void eliminate(int n)
{
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j <= n; j++) {
      long w = m[j][i];
      if (i != 0)
        for (int k = 0; k < i; k++)
          w -= m[j][k] * m[k][i];
      m[j][i] = w / (m[i][i] + 1);
    }
}

__attribute__((noinline)) void late_rows(int n)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i >= 3)
        for (int k = 3; k < i; k++)
          m[i][j] += m[k][j];
    }
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  for (int i = 0; i <= n; i++)
    for (int j = 0; j <= n; j++)
      m[i][j] = i + j + 2;
  eliminate(n);
  late_rows(n);
  printf("%ld\n", m[n][n - 1]);
  return 0;
}
