/*
 * perfcast online regions for C: self-modeling kernels that feed `perfcast online serve`.
 *
 *   PERFCAST_ONLINE_BEGIN("sweep", "n,p", n, nprocs);   kernel, predictor names, their values
 *   ... the kernel ...
 *   PERFCAST_ONLINE_END("sweep");
 *
 * Build: compile perfcast_online.c with the program (it needs nothing but libc). The kernel name
 * must be a string literal (kernels are keyed by its address) without quotes or backslashes; the
 * names list the predictors in the order of the values (at most PERFCAST_ONLINE_MAX_PARAMS).
 *
 * When PERFCAST_ONLINE_SPOOL names a directory, a region's wall time is recorded unless back-off
 * says to skip it; PERFCAST_ONLINE_BATCH (default 512) records of a kernel are handed over as one
 * binary batch file, *.pcob (format version 1, perfcast/io/online_batch.py: a JSON header line,
 * then the buffered numbers as they are in memory; written under a temporary name, then renamed;
 * collectors before this format read only *.jsonl and leave these waiting), and the program then reads the
 * kernel's control file, in which the collector publishes how many executions to skip (see
 * perfcast/measure/online_spool.py for the protocol). Partial batches and the count of skipped
 * executions are handed over at exit. A kernel's control file is also read where the kernel
 * first runs in a process, so that a new run goes on with the delay the collector set last
 * (back-off is life-long, not per run). The decision on a skipped execution is one decrement: no
 * clock is read. Without the variable BEGIN returns at once. Under MPI every rank hands over its
 * own batches. Limits: one thread at a time per kernel; at most 256 kernels.
 *
 * PERFCAST_ONLINE_METRIC=cputime records the calling thread's CPU time instead of wall time
 * (CLOCK_THREAD_CPUTIME_ID, metric "cputime"): on a node shared with other processes it is not
 * stretched by the time they hold the core, so batches are judged on the kernel's own cost.
 *
 * PERFCAST_ONLINE_METRIC=instructions records each region's instructions instead of its wall
 * time (deterministic, so models do not depend on the machine's load): the program must be built
 * where valgrind's headers are (<valgrind/callgrind.h>) and run under
 *   valgrind --tool=callgrind --callgrind-out-file=$PERFCAST_ONLINE_SPOOL/callgrind.%p PROGRAM
 * (the spool directory must exist before the run; a region zeroes callgrind's counters where it
 * begins and dumps them where it ends; the library reads and deletes each dump). Otherwise the regions are off and one message says why.
 */
#ifndef PERFCAST_ONLINE_H
#define PERFCAST_ONLINE_H

#define PERFCAST_ONLINE_MAX_PARAMS 8

#ifdef __cplusplus
extern "C" {
#endif

int perfcast_online_begin(const char *kernel, const char *names, int count, const double *values);
void perfcast_online_end(const char *kernel);
void perfcast_online_flush(void);

#ifdef __cplusplus
}
#endif

#define PERFCAST_ONLINE_COUNT_(...) (int)(sizeof((double[]){__VA_ARGS__}) / sizeof(double))
#ifdef PERFCAST_DISABLE
#define PERFCAST_ONLINE_BEGIN(kernel, names, ...) ((void)0)
#define PERFCAST_ONLINE_END(kernel) ((void)0)
#else
#define PERFCAST_ONLINE_BEGIN(kernel, names, ...)                                                \
    perfcast_online_begin(kernel, names, PERFCAST_ONLINE_COUNT_(__VA_ARGS__),                    \
                          (const double[]){__VA_ARGS__})
#define PERFCAST_ONLINE_END(kernel) perfcast_online_end(kernel)
#endif

#endif /* PERFCAST_ONLINE_H */
