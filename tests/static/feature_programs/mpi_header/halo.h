/* The project's own header brings in MPI, as multi-file MPI codes do: the sources that
 * include it never name mpi.h themselves. */
#ifndef HALO_H
#define HALO_H
#include "halo_types.h"
long halo_sum(long steps);
#endif
