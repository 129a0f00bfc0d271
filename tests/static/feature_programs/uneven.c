/* Uneven work over the ranks, for the feature rewriter (perfcast, BSD-3-Clause): rank r
 * runs (r + 1) * n trips of each phase; the early phase ends after the first loop. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int n = argc > 1 ? atoi(argv[1]) : 10;
    long sum = 0, total = 0;
    for (int i = 0; i < (rank + 1) * n; i++) sum += i;
#pragma perfcast features_end
    for (int i = 0; i < (rank + 1) * n; i++) sum -= i / 2;
    MPI_Reduce(&sum, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) printf("%ld\n", total);
    MPI_Finalize();
    return 0;
}
