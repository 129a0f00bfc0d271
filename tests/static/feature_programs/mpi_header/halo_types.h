/* Two levels down: mpi.h reached through a header of a header. */
#ifndef HALO_TYPES_H
#define HALO_TYPES_H
#include <mpi.h>
typedef long halo_count;
#endif
