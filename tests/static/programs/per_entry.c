/* Loops measured by a profile, called a parameter's number of times: how their measured
   counts carry to other values.  gcc -O0 keeps `register` loop counters in registers, so
   the machine loops of the first two functions are not read from the binary; a profile
   measures them.
   - fixed_nest: constant iterations per call, called rpt times (a count per entry holds);
   - sized_nest: its inner loop runs n times per entry (a count per entry depends on n);
   - data_bound: its inner loop's bound is read from an array (nothing tells).
   Usage: per_entry RPT N */
#include <stdio.h>
#include <stdlib.h>

#define N 20
long A[N][N], B[N][N], R[N][N];
int len[16];

void fixed_nest (void)
{
  register int i, j, k;
  for (i = 0; i < N; i++)
    for (j = 0; j < N; j++)
      {
        R[i][j] = 0;
        for (k = 0; k < N; k++)
          R[i][j] += A[i][k] * B[k][j];
      }
}

void sized_nest (int n)
{
  register int i, j;
  for (i = 0; i < N; i++)
    for (j = 0; j < n; j++)
      R[i][j % N] += A[i][j % N];
}

long data_bound (int m)
{
  long s = 0;
  for (int r = 0; r < m; r++)
    for (int k = 0; k < len[r]; k++)
      s += k;
  return s;
}

int main (int argc, char **argv)
{
  int rpt = atoi (argv[1]), n = atoi (argv[2]);
  long s = 0;
  for (int r = 0; r < 16; r++)
    len[r] = r % 5 + n;
  for (int r = 0; r < rpt; r++)
    {
      fixed_nest ();
      sized_nest (n);
      s += data_bound (8);
    }
  printf ("%ld %ld\n", R[1][2], s);
  return 0;
}
