/* A lower triangle (j < i + 1) whose longest row is a compile-time size, then a row reduction
   (issue 20, flow conservation; written here). gcc -O3 vectorizes the triangle two elements a
   pass with a scalar step for odd rows: with a profile the measured loop keeps blocks around
   it counted in every row, which no run can give; the check measures them. */
#include <stdio.h>
#ifndef ROWS
#define ROWS 31
#endif
#ifndef COLS
#define COLS 19
#endif
static double T[ROWS][ROWS], B[ROWS][COLS], v[COLS], r[ROWS];

__attribute__((noinline)) void shift_lower(double delta)
{
  for (int i = 0; i < ROWS; i++) {
    for (int j = 0; j < i + 1; j++)
      T[i][j] += delta;
    for (int k = 0; k < COLS; k++)
      r[i] -= B[i][k] * v[k];
  }
}

int main(void)
{
  for (int i = 0; i < ROWS; i++)
    for (int k = 0; k < COLS; k++)
      B[i][k] = i * 0.5 - k;
  for (int k = 0; k < COLS; k++)
    v[k] = k + 1;
  shift_lower(0.25);
  printf("%f %f\n", T[ROWS - 1][0], r[ROWS - 1]);
  return 0;
}
