#include <stdio.h>
#include <stdlib.h>

#include "halo.h"

int main(int argc, char **argv) {
    halo_count steps;
    long total;
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    steps = argc > 1 ? atol(argv[1]) : 4;
    total = halo_sum(steps);
    if (rank == 0)
        printf("%ld\n", total);
    MPI_Finalize();
    return 0;
}
