/*
 * perfcast region instrumentation for C, C++ and (through ISO_C_BINDING) Fortran.
 *
 * Build: compile perfcast.c together with the program, using the program's own compiler
 * (`perfcast instrument --cflags` and `--libs` print the flags). Compiled with mpicc, the library
 * is MPI-aware automatically (it sees <mpi.h>); -DPERFCAST_NO_MPI turns that off, and
 * -DPERFCAST_DISABLE compiles every macro and the library itself to nothing.
 *
 *   PERFCAST_REGION_BEGIN("solve");      regions nest: "solve" then "spmv" gives "solve->spmv"
 *   PERFCAST_REGION_BEGIN("spmv"); ...; PERFCAST_REGION_END("spmv");
 *   PERFCAST_REGION_END("solve");
 *
 * PERFCAST_REGION_BEGIN/END key regions by the address of the name, so the name must be a string
 * literal (or otherwise never change its text). For names built at run time use
 * PERFCAST_REGION_BEGIN_DYNAMIC/END_DYNAMIC, which intern the text (a little slower).
 * An END whose name is not the innermost open region is reported on stderr and ignored (the
 * first ten such errors are shown, the rest counted and the total reported at the end).
 *
 * OUTPUT. When the environment variable PERFCAST_OUTPUT names a file, the program appends to it,
 * once at the end, one JSON object per line: {"kernel": "<call path>", "metric": "<m>",
 * "value": <v>} ("-" writes to stderr instead; unset writes nothing). All lines of a run are
 * written by one write(2), so a killed run leaves no partial record. Metrics per region:
 *   time       inclusive seconds; threads of a process: max over threads;
 *              under MPI: max over ranks (ranks that never entered the region count as 0)
 *   time.mean  MPI only: mean over all ranks (ranks that never entered count as 0)
 *   visits     number of entries; threads of a process: summed; under MPI: max over ranks
 * and once per run the record {"kernel": "<program>", "metric": "ranks", "value": <p>} where
 * <program> is the executable's base name and p the MPI world size (1 without MPI). A process
 * that recorded no region at all writes nothing (under MPI, rank 0 still writes "ranks").
 *
 * END OF RUN. Without MPI an atexit handler writes. Under MPI the library wraps MPI_Finalize
 * (through the PMPI interface; also Fortran's mpi_finalize_) and aggregates over MPI_COMM_WORLD
 * there. Where the wrappers cannot see the call (Fortran's mpi_f08, MPI loaded some other way) call
 * PERFCAST_FINALIZE() on every rank just before MPI_Finalize; it is collective. Regions still open
 * at the end have their time counted up to there, and user regions among them are reported.
 *
 * THREADS. Each thread records its own call tree (no locks on the fast path); the trees are
 * merged by call path at the end. Threads must have stopped recording by then.
 */
#ifndef PERFCAST_H
#define PERFCAST_H

#ifdef __cplusplus
extern "C" {
#endif

void perfcast_region_begin(const char *name);
void perfcast_region_end(const char *name);
void perfcast_region_begin_dynamic(const char *name);
void perfcast_region_end_dynamic(const char *name);
void perfcast_finalize(void);

#ifdef __cplusplus
}
#endif

#ifdef PERFCAST_DISABLE
#define PERFCAST_REGION_BEGIN(name) ((void)0)
#define PERFCAST_REGION_END(name) ((void)0)
#define PERFCAST_REGION_BEGIN_DYNAMIC(name) ((void)0)
#define PERFCAST_REGION_END_DYNAMIC(name) ((void)0)
#define PERFCAST_FINALIZE() ((void)0)
#else
#define PERFCAST_REGION_BEGIN(name) perfcast_region_begin(name)
#define PERFCAST_REGION_END(name) perfcast_region_end(name)
#define PERFCAST_REGION_BEGIN_DYNAMIC(name) perfcast_region_begin_dynamic(name)
#define PERFCAST_REGION_END_DYNAMIC(name) perfcast_region_end_dynamic(name)
#define PERFCAST_FINALIZE() perfcast_finalize()
#endif

#endif /* PERFCAST_H */
