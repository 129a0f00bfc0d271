/* A ring of ranks for the feature rewriter: MPI calls, sizes, reduction over ranks. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int n = argc > 1 ? atoi(argv[1]) : 100;
    double *buf = calloc(n, sizeof(double));
    double sum = 0, total = 0;
    for (int step = 0; step < 3; step++) {
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        MPI_Sendrecv_replace(buf, n, MPI_DOUBLE, next, 0, prev, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        sum += buf[0] + step;
        MPI_Allreduce(&sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Bcast(buf, n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%g\n", total);
    free(buf);
    MPI_Finalize();
    return 0;
}
