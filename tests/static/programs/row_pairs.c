/* Sums of squares down the columns of a row-major matrix (PolyBench gramschmidt's norm
   loop). gcc -O2 unrolls the row loop by 2 and packs two rows' elements into one register,
   its pointer stepping two rows per pass; gcc -O3 vectorizes the column loop and runs the
   last column's row loop once, after it. Usage: row_pairs ROWS_AT_RUN_TIME */
#include <stdio.h>
#include <stdlib.h>

#define ROWS 30
#define COLS 25

double fixed[ROWS][COLS];

__attribute__((noinline)) double fixed_norms(void)
{
  double total = 0.0;
  for (int k = 0; k < COLS; k++) {
    double norm = 0.0;
    for (int i = 0; i < ROWS; i++)
      norm += fixed[i][k] * fixed[i][k];
    total += norm;
  }
  return total;
}

__attribute__((noinline)) double run_time_norms(double (*rows)[COLS], int m)
{
  double total = 0.0;
  for (int k = 0; k < COLS; k++) {
    double norm = 0.0;
    for (int i = 0; i < m; i++)
      norm += rows[i][k] * rows[i][k];
    total += norm;
  }
  return total;
}

int main(int argc, char **argv)
{
  int m = argc > 1 ? atoi(argv[1]) : ROWS;
  double (*rows)[COLS] = malloc(sizeof(double[COLS]) * (size_t) m);
  for (int i = 0; i < ROWS; i++)
    for (int j = 0; j < COLS; j++)
      fixed[i][j] = (double) ((i * j) % ROWS) / ROWS + 1.0;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < COLS; j++)
      rows[i][j] = (double) (i + j) / COLS;
  printf("%f %f\n", fixed_norms(), run_time_norms(rows, m));
  free(rows);
  return 0;
}
