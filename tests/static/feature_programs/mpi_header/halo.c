#include "halo.h"

long halo_sum(long steps) {
    long total = 0, step, mine;
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (step = 0; step < steps; step++) {
        mine = rank + step;
        MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    }
    return total;
}
