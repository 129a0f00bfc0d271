/* Conjugate gradients on the 2-D Poisson problem to a tolerance, for perfcast's learned-model
 * benchmark (BSD-3-Clause). Usage: solver N TOLERANCE RHS SEED
 * N x N interior grid split in rows over the ranks (halo rows by MPI_Sendrecv); RHS 0 is a
 * smooth right-hand side (few iterations), 1 a random one (many). Iterates until the residual
 * norm falls below TOLERANCE times the initial one (or 5000 iterations). */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double dot(const double *a, const double *b, int count) {
    double local = 0.0, global = 0.0;
    for (int i = 0; i < count; i++) local += a[i] * b[i];
    MPI_Allreduce(&local, &global, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return global;
}

static void apply(double *x, double *y, int rows, int n, int rank, int size) {
    int up = rank > 0 ? rank - 1 : MPI_PROC_NULL, down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
    MPI_Sendrecv(x + n, n, MPI_DOUBLE, up, 0, x + (size_t)(rows + 1) * n, n, MPI_DOUBLE, down, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(x + (size_t)rows * n, n, MPI_DOUBLE, down, 1, x, n, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (int r = 1; r <= rows; r++)
        for (int c = 0; c < n; c++) {
            double left = c > 0 ? x[r * n + c - 1] : 0.0, right = c < n - 1 ? x[r * n + c + 1] : 0.0;
            y[(r - 1) * n + c] = 4.0 * x[r * n + c] - left - right - x[(r - 1) * n + c] -
                                 x[(r + 1) * n + c];
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 5) {
        if (rank == 0) fprintf(stderr, "usage: solver N TOLERANCE RHS SEED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[1]);
    double tolerance = atof(argv[2]);
    int rhs = atoi(argv[3]);
    unsigned long long state = strtoull(argv[4], 0, 10) + 7;
    int rows = n / size + (rank < n % size ? 1 : 0);
    int first = rank * (n / size) + (rank < n % size ? rank : n % size);
    size_t cells = (size_t)rows * n;
    double *x = calloc(cells, sizeof(double)), *r = malloc(cells * sizeof(double));
    double *p = calloc(cells + 2 * (size_t)n, sizeof(double)), *q = malloc(cells * sizeof(double));
    for (int i = 0; i < rows; i++)
        for (int c = 0; c < n; c++) {
            if (rhs == 0) {
                r[i * n + c] = sin(3.14159 * (first + i + 1) / (n + 1)) * sin(3.14159 * (c + 1) / (n + 1));
            } else {
                state = state * 6364136223846793005ULL + 1442695040888963407ULL;
                r[i * n + c] = (double)(state >> 11) / 9007199254740992.0 - 0.5;
            }
        }
    for (size_t i = 0; i < cells; i++) p[n + i] = r[i];
    double rr = dot(r, r, (int)cells), start = sqrt(rr);
    int iterations = 0;
    while (sqrt(rr) > tolerance * start && iterations < 5000) {
        apply(p, q, rows, n, rank, size);
        double alpha = rr / dot(p + n, q, (int)cells);
        for (size_t i = 0; i < cells; i++) {
            x[i] += alpha * p[n + i];
            r[i] -= alpha * q[i];
        }
        double next = dot(r, r, (int)cells);
        for (size_t i = 0; i < cells; i++) p[n + i] = r[i] + next / rr * p[n + i];
        rr = next;
        iterations++;
    }
    if (rank == 0) printf("iterations %d residual %.3e\n", iterations, sqrt(rr) / start);
    free(x), free(r), free(p), free(q);
    MPI_Finalize();
    return 0;
}
