/* N-body steps with an algorithm choice, for perfcast's learned-model benchmark (BSD-3-Clause).
 * Usage: nbody N STEPS ALGORITHM CUTOFF SEED
 *   ALGORITHM 0: all pairs; 1: cell list with interactions inside CUTOFF only.
 * Bodies are split over the ranks; positions are exchanged with MPI_Allgather each step.
 * The features at the end of the first step (`#pragma perfcast features_end`) are the early phase. */
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double uniform(unsigned long long *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*state >> 11) / 9007199254740992.0;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6) {
        if (rank == 0) fprintf(stderr, "usage: nbody N STEPS ALGORITHM CUTOFF SEED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int n = atoi(argv[1]);
    int steps = atoi(argv[2]);
    int algorithm = atoi(argv[3]);
    double cutoff = atof(argv[4]);
    unsigned long long state = strtoull(argv[5], 0, 10) + 1;
    int local = (n + size - 1) / size;
    int padded = local * size;
    double *pos = calloc(3 * (size_t)padded, sizeof(double));
    double *vel = calloc(3 * (size_t)local, sizeof(double));
    double *mine = calloc(3 * (size_t)local, sizeof(double));
    /* clustered bodies: a share of them in a dense ball, so cell occupancy varies */
    double clustered = uniform(&state);
    for (int i = 0; i < padded; i++) {
        double spread = (uniform(&state) < clustered) ? 0.1 : 1.0;
        for (int d = 0; d < 3; d++) pos[3 * i + d] = 0.5 + spread * (uniform(&state) - 0.5);
    }
    int cells = algorithm == 1 ? (int)(1.0 / cutoff) : 1;
    if (cells < 1) cells = 1;
    int *head = malloc(sizeof(int) * (size_t)cells * cells * cells);
    int *next = malloc(sizeof(int) * (size_t)padded);
    double energy = 0.0;
    for (int step = 0; step < steps; step++) {
        if (algorithm == 1) {
            for (int c = 0; c < cells * cells * cells; c++) head[c] = -1;
            for (int j = 0; j < n; j++) {
                int cx = (int)(pos[3 * j] * cells), cy = (int)(pos[3 * j + 1] * cells),
                    cz = (int)(pos[3 * j + 2] * cells);
                cx = cx < 0 ? 0 : cx >= cells ? cells - 1 : cx;
                cy = cy < 0 ? 0 : cy >= cells ? cells - 1 : cy;
                cz = cz < 0 ? 0 : cz >= cells ? cells - 1 : cz;
                int c = (cx * cells + cy) * cells + cz;
                next[j] = head[c];
                head[c] = j;
            }
        }
        for (int a = 0; a < local; a++) {
            int i = rank * local + a;
            double f[3] = {0, 0, 0};
            if (i >= n) continue;
            if (algorithm == 0) {
                for (int j = 0; j < n; j++) {
                    if (j == i) continue;
                    double dx = pos[3 * j] - pos[3 * i], dy = pos[3 * j + 1] - pos[3 * i + 1],
                           dz = pos[3 * j + 2] - pos[3 * i + 2];
                    double r2 = dx * dx + dy * dy + dz * dz + 1e-4;
                    double inv = 1.0 / (r2 * sqrt(r2));
                    f[0] += dx * inv, f[1] += dy * inv, f[2] += dz * inv;
                }
            } else {
                int cx = (int)(pos[3 * i] * cells), cy = (int)(pos[3 * i + 1] * cells),
                    cz = (int)(pos[3 * i + 2] * cells);
                for (int ox = -1; ox <= 1; ox++)
                    for (int oy = -1; oy <= 1; oy++)
                        for (int oz = -1; oz <= 1; oz++) {
                            int x = cx + ox, y = cy + oy, z = cz + oz;
                            if (x < 0 || y < 0 || z < 0 || x >= cells || y >= cells || z >= cells)
                                continue;
                            for (int j = head[(x * cells + y) * cells + z]; j >= 0; j = next[j]) {
                                if (j == i) continue;
                                double dx = pos[3 * j] - pos[3 * i],
                                       dy = pos[3 * j + 1] - pos[3 * i + 1],
                                       dz = pos[3 * j + 2] - pos[3 * i + 2];
                                double r2 = dx * dx + dy * dy + dz * dz + 1e-4;
                                if (r2 > cutoff * cutoff) continue;
                                double inv = 1.0 / (r2 * sqrt(r2));
                                f[0] += dx * inv, f[1] += dy * inv, f[2] += dz * inv;
                            }
                        }
            }
            for (int d = 0; d < 3; d++) {
                vel[3 * a + d] += 1e-9 * f[d];
                mine[3 * a + d] = pos[3 * i + d] + 1e-3 * vel[3 * a + d];
                energy += vel[3 * a + d] * vel[3 * a + d];
            }
        }
        MPI_Allgather(mine, 3 * local, MPI_DOUBLE, pos, 3 * local, MPI_DOUBLE, MPI_COMM_WORLD);
        if (step == 0) {
            /* the first step is the early phase that predicts the whole run */
#pragma perfcast features_end
        }
    }
    double total = 0.0;
    MPI_Reduce(&energy, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("energy %.6e\n", total);
    free(pos), free(vel), free(mine), free(head), free(next);
    MPI_Finalize();
    return 0;
}
