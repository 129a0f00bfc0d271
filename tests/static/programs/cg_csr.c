/* Conjugate gradients on the 2-D Laplacian of an m x m grid stored as a CSR matrix, in the
   style of the NAS CG benchmark: the inner loops run from one row pointer to the next, so
   their trip counts are in the data, not in the source.
   Usage: cg_csr M ITERS */
#include <stdio.h>
#include <stdlib.h>

typedef struct {
  int rows;
  int *rowptr;
  int *col;
  double *val;
} csr;

static csr laplacian(int m) {
  csr a;
  a.rows = m * m;
  a.rowptr = malloc((a.rows + 1) * sizeof(int));
  a.col = malloc(5 * a.rows * sizeof(int));
  a.val = malloc(5 * a.rows * sizeof(double));
  int k = 0;
  for (int i = 0; i < a.rows; i++) {
    int x = i % m, y = i / m;
    a.rowptr[i] = k;
    if (y > 0) { a.col[k] = i - m; a.val[k++] = -1.0; }
    if (x > 0) { a.col[k] = i - 1; a.val[k++] = -1.0; }
    a.col[k] = i; a.val[k++] = 4.0;
    if (x < m - 1) { a.col[k] = i + 1; a.val[k++] = -1.0; }
    if (y < m - 1) { a.col[k] = i + m; a.val[k++] = -1.0; }
  }
  a.rowptr[a.rows] = k;
  return a;
}

void matvec(const csr *a, const double *x, double *y) {
  for (int i = 0; i < a->rows; i++) {
    double s = 0.0;
    for (int j = a->rowptr[i]; j < a->rowptr[i + 1]; j++)
      s += a->val[j] * x[a->col[j]];
    y[i] = s;
  }
}

double dot(const double *x, const double *y, int n) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}

void cg(const csr *a, const double *b, double *x, int iters) {
  int n = a->rows;
  double *r = malloc(n * sizeof(double));
  double *p = malloc(n * sizeof(double));
  double *q = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) {
    x[i] = 0.0;
    r[i] = b[i];
    p[i] = b[i];
  }
  double rho = dot(r, r, n);
  for (int it = 0; it < iters; it++) {
    matvec(a, p, q);
    double alpha = rho / dot(p, q, n);
    for (int i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
    }
    double next = dot(r, r, n);
    for (int i = 0; i < n; i++)
      p[i] = r[i] + (next / rho) * p[i];
    rho = next;
  }
  free(r);
  free(p);
  free(q);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: cg_csr M ITERS\n");
    return 2;
  }
  int m = atoi(argv[1]);
  int iters = atoi(argv[2]);
  csr a = laplacian(m);
  double *b = malloc(a.rows * sizeof(double));
  double *x = malloc(a.rows * sizeof(double));
  for (int i = 0; i < a.rows; i++)
    b[i] = 1.0;
  cg(&a, b, x, iters);
  printf("%g\n", x[0]);
  return 0;
}
