/* Copies of functions whose runs the source's counts do not tell, in the shapes LINPACK's
   kernels take (verify20b): gcc -O2/-O3 inline the early tests of `axpy` (LINPACK's daxpy)
   into the caller and outline its loop as `axpy.part.0`, left unmodeled even with --profile;
   clang -O1..-O3 inline `fill` (matgen) at both calls and keep a stand-alone copy that never
   runs, which the profile gave the source loops' counts; gcc -O1..-O3 and clang -O2/-O3 compute
   `epsilon` (epslon) when compiling, so no call is left and its copy, never run, was counted
   once. */
#include <math.h>
#include <stdlib.h>

#define SIZE 64

double x[SIZE], y[SIZE], grid[SIZE * SIZE];

void axpy(int n, double a, const double *u, int incu, double *v, int incv)
{
  int i, iu, iv, m;
  if (n <= 0)
    return;
  if (a == 0.0)
    return;
  if (incu != 1 || incv != 1) {
    iu = 0;
    iv = 0;
    if (incu < 0)
      iu = (-n + 1) * incu;
    if (incv < 0)
      iv = (-n + 1) * incv;
    for (i = 0; i < n; i++) {
      v[iv] = v[iv] + a * u[iu];
      iu = iu + incu;
      iv = iv + incv;
    }
    return;
  }
  m = n % 4;
  if (m != 0) {
    for (i = 0; i < m; i++)
      v[i] = v[i] + a * u[i];
    if (n < 4)
      return;
  }
  for (i = m; i < n; i = i + 4) {
    v[i] = v[i] + a * u[i];
    v[i + 1] = v[i + 1] + a * u[i + 1];
    v[i + 2] = v[i + 2] + a * u[i + 2];
    v[i + 3] = v[i + 3] + a * u[i + 3];
  }
}

void fill(int n, double *m)
{
  int i, j;
  for (j = 0; j < n; j++)
    for (i = 0; i < n; i++)
      m[j * n + i] = (i * 31 + j * 17) % 64 - 32.0;
}

double epsilon(double v)
{
  double a = 4.0 / 3.0, b, c, eps = 0.0;
  while (eps == 0.0) {
    b = a - 1.0;
    c = b + b + b;
    eps = fabs(c - 1.0);
  }
  return eps * fabs(v);
}

void eliminate(int n, double *m)
{
  int j, k;
  for (k = 0; k < n - 1; k++)
    for (j = k + 1; j < n; j++)
      axpy(n - (k + 1), m[n * j + k], &m[n * k + k + 1], 1, &m[n * j + k + 1], 1);
}

int main(int argc, char **argv)
{
  int reps = atoi(argv[1]), r;
  fill(SIZE, grid);
  for (r = 0; r < reps; r++)
    eliminate(SIZE, grid);
  fill(SIZE, grid);
  return y[1] + epsilon(1.0) < -1e9;
}
