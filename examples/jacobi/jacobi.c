/*
 * 2-D Jacobi stencil on an n x n grid, rows distributed over the MPI ranks, periodic in the row
 * direction (so every rank exchanges two halo rows of n values per iteration, also with p = 1)
 * and with fixed zero boundary columns.
 *
 * usage: jacobi N [ITERATIONS]      (default 100 iterations)
 *
 * Regions, one function each so that per-function instruction counts (valgrind) line up with them:
 *   compute   jacobi_compute: the 5-point update of the rank's rows x n points, per iteration
 *             (p = 1: exactly ITERATIONS * (a*n^2 + b*n + c) instructions)
 *   halo      jacobi_halo: exchange of the first and last row with the neighbours, n values each
 *             (p = 1: a local copy, exactly ITERATIONS * (a*n + c) instructions)
 *   residual  jacobi_residual: squared change, summed with MPI_Allreduce, every 10th iteration
 * The iteration count is fixed (no convergence test), so the work depends on n and p only.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfcast.h"

#define KERNEL __attribute__((noinline, noclone))
#define RESIDUAL_EVERY 10

typedef struct {
    int n;          /* columns (global grid is n x n) */
    int rows;       /* rows owned by this rank */
    int self;       /* this rank */
    int up, down;   /* neighbour ranks (periodic) */
    double *u, *v;  /* (rows + 2) x (n + 2), ghost rows 0 and rows + 1, ghost columns 0, n + 1 */
} grid;

#define AT(g, a, i, j) ((a)[(size_t)(i) * (size_t)((g)->n + 2) + (size_t)(j)])

/* The row count depends on the rank, which the static analysis cannot see: the annotation gives
 * it (exact when size divides n). */
KERNEL static void jacobi_compute(const grid *g, const double *u, double *v) {
#pragma perfcast count(n / size)
    for (int i = 1; i <= g->rows; i++)
        for (int j = 1; j <= g->n; j++)
            AT(g, v, i, j) = 0.25 * (AT(g, u, i - 1, j) + AT(g, u, i + 1, j) +
                                     AT(g, u, i, j - 1) + AT(g, u, i, j + 1));
}

KERNEL static void jacobi_halo(const grid *g, double *u) {
    double *first = &AT(g, u, 1, 0), *last = &AT(g, u, g->rows, 0);
    double *above = &AT(g, u, 0, 0), *below = &AT(g, u, g->rows + 1, 0);
    int count = g->n + 2;
    if (g->up == g->self) { /* p = 1: the periodic neighbour is this rank itself */
        for (int j = 0; j < count; j++) {
            above[j] = last[j];
            below[j] = first[j];
        }
        return;
    }
    MPI_Sendrecv(first, count, MPI_DOUBLE, g->up, 0, below, count, MPI_DOUBLE, g->down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(last, count, MPI_DOUBLE, g->down, 1, above, count, MPI_DOUBLE, g->up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

KERNEL static double jacobi_residual(const grid *g, const double *u, const double *v) {
    double local = 0.0, global = 0.0;
#pragma perfcast count(n / size)
    for (int i = 1; i <= g->rows; i++)
        for (int j = 1; j <= g->n; j++) {
            double d = AT(g, v, i, j) - AT(g, u, i, j);
            local += d * d;
        }
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 0;
    int iterations = argc > 2 ? atoi(argv[2]) : 100;
    if (n < 1 || iterations < 1) {
        if (rank == 0) fprintf(stderr, "usage: jacobi N [ITERATIONS] (N, ITERATIONS >= 1)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    grid g = {.n = n, .rows = n / size + (rank < n % size), .self = rank};
    g.up = (rank + size - 1) % size;
    g.down = (rank + 1) % size;
    int first_row = rank * (n / size) + (rank < n % size ? rank : n % size);
    size_t cells = (size_t)(g.rows + 2) * (size_t)(n + 2);
    g.u = calloc(cells, sizeof(double));
    g.v = calloc(cells, sizeof(double));
    if (!g.u || !g.v) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 1; i <= g.rows; i++)
        for (int j = 1; j <= n; j++) AT(&g, g.u, i, j) = (double)((first_row + i + 3 * j) % 17);

    double residual = 0.0;
    for (int it = 1; it <= iterations; it++) {
        PERFCAST_REGION_BEGIN("halo");
        jacobi_halo(&g, g.u);
        PERFCAST_REGION_END("halo");

        PERFCAST_REGION_BEGIN("compute");
        jacobi_compute(&g, g.u, g.v);
        PERFCAST_REGION_END("compute");

#pragma perfcast probability(1 / 10)
        if (it % RESIDUAL_EVERY == 0) {
            PERFCAST_REGION_BEGIN("residual");
            residual = jacobi_residual(&g, g.u, g.v);
            PERFCAST_REGION_END("residual");
        }
        double *swap = g.u;
        g.u = g.v;
        g.v = swap;
    }
    if (rank == 0) printf("jacobi n=%d p=%d iterations=%d residual=%.6e\n", n, size, iterations,
                          residual);
    free(g.u);
    free(g.v);
    MPI_Finalize();
    return 0;
}
