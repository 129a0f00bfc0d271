/* A small conjugate-gradient solver on a dense symmetric positive definite n x n matrix, a fixed
   number of iterations, with the matrix-vector product, dot product and vector updates in their
   own functions called inside the iteration loop.  Usage: cg N ITERS */
#include <stdio.h>
#include <stdlib.h>

void matvec(long n, const double *a, const double *x, double *y) {
  for (long i = 0; i < n; i++) {
    double sum = 0.0;
    for (long j = 0; j < n; j++)
      sum += a[i * n + j] * x[j];
    y[i] = sum;
  }
}

double dot(long n, const double *x, const double *y) {
  double sum = 0.0;
  for (long i = 0; i < n; i++)
    sum += x[i] * y[i];
  return sum;
}

void axpy(long n, double alpha, const double *x, double *y) {
  for (long i = 0; i < n; i++)
    y[i] += alpha * x[i];
}

void xpay(long n, const double *x, double beta, double *y) {
  for (long i = 0; i < n; i++)
    y[i] = x[i] + beta * y[i];
}

double cg_solve(long n, long iters, const double *a, const double *b, double *x) {
  double *r = malloc(n * sizeof(double));
  double *p = malloc(n * sizeof(double));
  double *ap = malloc(n * sizeof(double));
  for (long i = 0; i < n; i++) {
    x[i] = 0.0;
    r[i] = b[i];
    p[i] = b[i];
  }
  double rr = dot(n, r, r);
  for (long it = 0; it < iters; it++) {
    matvec(n, a, p, ap);
    double alpha = rr / dot(n, p, ap);
    axpy(n, alpha, p, x);
    axpy(n, -alpha, ap, r);
    double rr_new = dot(n, r, r);
    xpay(n, r, rr_new / rr, p);
    rr = rr_new;
  }
  free(r);
  free(p);
  free(ap);
  return rr;
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cg N ITERS\n");
    exit(2);
  }
  long n = atol(argv[1]);
  long iters = atol(argv[2]);
  double *a = malloc(n * n * sizeof(double));
  double *b = malloc(n * sizeof(double));
  double *x = malloc(n * sizeof(double));
  for (long i = 0; i < n; i++) {
    for (long j = 0; j < n; j++)
      a[i * n + j] = 1.0 / (double)(1 + i + j);
    a[i * n + i] += 2.0 * n;
    b[i] = 1.0;
  }
  double residual = cg_solve(n, iters, a, b, x);
  printf("%g %g\n", residual, x[0]);
  free(a);
  free(b);
  free(x);
  return 0;
}
