/*
 * Conjugate gradient on the 2-D Poisson problem: the 5-point Laplacian of an n x n grid (n^2
 * unknowns) stored as a CSR sparse matrix, grid rows distributed over the MPI ranks.
 *
 * usage: cg N [ITERATIONS]      (default 50 iterations, always all of them: no early exit)
 *
 * Regions (call paths), one function each:
 *   setup            cg_assemble: build the rank's CSR rows, ~5 n^2/p entries
 *   solve->exchange  cg_exchange: neighbouring grid rows of the search direction, n values each
 *   solve->spmv      cg_spmv: sparse matrix-vector product, ~5 n^2/p multiply-adds
 *   solve->dot       cg_dot: local dot product + MPI_Allreduce (two per iteration)
 *   solve->axpy      cg_update: the three vector updates, ~3 n^2/p
 */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfcast.h"

#define KERNEL __attribute__((noinline, noclone))

typedef struct {
    int n, rows, first_row; /* grid columns, grid rows owned, first owned global row */
    int up, down;           /* neighbour ranks or MPI_PROC_NULL */
    int *row_start, *col;   /* CSR; columns index the extended vector (see below) */
    double *val;
} matrix;

/* A distributed vector is stored extended: n ghost values of the row above, the rows * n owned
 * values, n ghost values of the row below. Owned value k lives at index n + k. */

KERNEL static void cg_assemble(matrix *a) {
    int n = a->n, local = a->rows * n;
    a->row_start = malloc(sizeof(int) * ((size_t)local + 1));
    a->col = malloc(sizeof(int) * 5 * (size_t)local);
    a->val = malloc(sizeof(double) * 5 * (size_t)local);
    if (!a->row_start || !a->col || !a->val) MPI_Abort(MPI_COMM_WORLD, 1);
    int nnz = 0;
    for (int i = 0; i < a->rows; i++) {
        int global_row = a->first_row + i;
        for (int j = 0; j < n; j++) {
            int k = n + i * n + j;
            a->row_start[i * n + j] = nnz;
            if (global_row > 0) a->col[nnz] = k - n, a->val[nnz++] = -1.0;
            if (j > 0) a->col[nnz] = k - 1, a->val[nnz++] = -1.0;
            a->col[nnz] = k, a->val[nnz++] = 4.0;
            if (j < n - 1) a->col[nnz] = k + 1, a->val[nnz++] = -1.0;
            if (global_row < n - 1) a->col[nnz] = k + n, a->val[nnz++] = -1.0;
        }
    }
    a->row_start[local] = nnz;
}

KERNEL static void cg_exchange(const matrix *a, double *x) {
    int n = a->n;
    double *above = x, *first = x + n, *last = x + (size_t)a->rows * n, *below = last + n;
    MPI_Sendrecv(first, n, MPI_DOUBLE, a->up, 0, below, n, MPI_DOUBLE, a->down, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    MPI_Sendrecv(last, n, MPI_DOUBLE, a->down, 1, above, n, MPI_DOUBLE, a->up, 1, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

KERNEL static void cg_spmv(const matrix *a, const double *x, double *y) {
    int local = a->rows * a->n;
    for (int r = 0; r < local; r++) {
        double sum = 0.0;
        for (int e = a->row_start[r]; e < a->row_start[r + 1]; e++) sum += a->val[e] * x[a->col[e]];
        y[a->n + r] = sum;
    }
}

KERNEL static double cg_dot(int local, const double *x, const double *y) {
    double sum = 0.0, global = 0.0;
    for (int k = 0; k < local; k++) sum += x[k] * y[k];
    MPI_Allreduce(&sum, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

/* x += alpha p; r -= alpha q; p = r + beta p, with beta from the updated r. */
KERNEL static void cg_update(int local, double alpha, double *x, double *r, double *p,
                             const double *q, double rr_old, double rr_new) {
    for (int k = 0; k < local; k++) x[k] += alpha * p[k];
    for (int k = 0; k < local; k++) r[k] -= alpha * q[k];
    double beta = rr_new / rr_old;
    for (int k = 0; k < local; k++) p[k] = r[k] + beta * p[k];
}

KERNEL static double cg_residual_update(int local, double alpha, double *r, const double *q) {
    double sum = 0.0;
    for (int k = 0; k < local; k++) sum += (r[k] - alpha * q[k]) * (r[k] - alpha * q[k]);
    return sum;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int iterations = argc > 2 ? atoi(argv[2]) : 50;
    if (n < 1 || iterations < 1) {
        if (rank == 0) fprintf(stderr, "usage: cg N [ITERATIONS] (N, ITERATIONS >= 1)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    matrix a = {.n = n, .rows = n / size + (rank < n % size)};
    a.first_row = rank * (n / size) + (rank < n % size ? rank : n % size);
    a.up = a.first_row > 0 ? rank - 1 : MPI_PROC_NULL;
    a.down = a.first_row + a.rows < n && rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    PERFCAST_REGION_BEGIN("setup");
    cg_assemble(&a);
    PERFCAST_REGION_END("setup");

    int local = a.rows * n;
    size_t extended = (size_t)local + 2 * (size_t)n;
    double *x = calloc((size_t)local, sizeof(double)), *r = malloc(sizeof(double) * (size_t)local);
    double *p = calloc(extended, sizeof(double)), *q = calloc(extended, sizeof(double));
    if (!x || !r || !p || !q) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int k = 0; k < local; k++) r[k] = p[n + k] = 1.0; /* b = 1, x0 = 0: r = p = b */

    PERFCAST_REGION_BEGIN("solve");
    PERFCAST_REGION_BEGIN("dot");
    double rr = cg_dot(local, r, r);
    PERFCAST_REGION_END("dot");
    double rr_initial = rr;
    for (int it = 0; it < iterations; it++) {
        PERFCAST_REGION_BEGIN("exchange");
        cg_exchange(&a, p);
        PERFCAST_REGION_END("exchange");

        PERFCAST_REGION_BEGIN("spmv");
        cg_spmv(&a, p, q);
        PERFCAST_REGION_END("spmv");

        PERFCAST_REGION_BEGIN("dot");
        double pq = cg_dot(local, p + n, q + n);
        double alpha = rr / pq;
        double local_rr = cg_residual_update(local, alpha, r, q + n), rr_new = 0.0;
        MPI_Allreduce(&local_rr, &rr_new, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        PERFCAST_REGION_END("dot");

        PERFCAST_REGION_BEGIN("axpy");
        cg_update(local, alpha, x, r, p + n, q + n, rr, rr_new);
        PERFCAST_REGION_END("axpy");
        rr = rr_new;
    }
    PERFCAST_REGION_END("solve");

    if (rank == 0)
        printf("cg n=%d p=%d iterations=%d relative_residual=%.6e\n", n, size, iterations,
               sqrt(rr / rr_initial));
    free(x), free(r), free(p), free(q);
    free(a.row_start), free(a.col), free(a.val);
    MPI_Finalize();
    return 0;
}
