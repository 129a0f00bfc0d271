/* Run-time feature counters inserted by `perfcast features` (perfcast, BSD-3-Clause).
 *
 * The instrumented source defines PERFCAST_FEATURES_COUNT and PERFCAST_FEATURES_NAMES (the
 * features' names as JSON strings) and PERFCAST_FEATURES_KINDS and includes this header after its
 * own includes; names are JSON-escaped text without the quotes. Each
 * translation unit keeps its counters in static arrays and registers them, at start-up, in one
 * list shared by the program (a weak symbol); at exit the program appends one JSON line per
 * run to $PERFCAST_FEATURES_FILE (default perfcast-features.jsonl): "elapsed" and "cpu"
 * seconds (from MPI_Init's return under MPI), every feature's value and "cost:NAME", the
 * measured cost in seconds of its updates. Under MPI the instrumented
 * MPI_Finalize first sums counters over the ranks (values of variables: their maximum) and
 * rank 0 writes. `#pragma perfcast features_end` writes a line with "phase": "features_end"
 * (the sums go to separate arrays, so the counters run on unchanged to the exit record).
 * With $PERFCAST_FEATURES_RANK_MAX set (not "0"), every counter also gets "NAME:rank_max", its
 * largest value on one rank (the slowest rank's work, where the sum is all ranks' work), with
 * the counter's cost: the same updates give both.
 */
#ifndef PERFCAST_FEATURES_H
#define PERFCAST_FEATURES_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifndef CLOCK_MONOTONIC
/* <time.h> without POSIX clocks (a strict -std=c89/c99 build): the wall clock from
 * gettimeofday, CPU seconds from C's clock(). */
#include <sys/time.h>
#endif

/* Update counts: unsigned long long, which C89 lacks and GCC and Clang provide. */
__extension__ typedef unsigned long long perfcast_features_count;

/* Kinds: 0 = counter (summed over ranks), 1 = value of a variable (maximum over ranks). */
struct perfcast_features_unit {
    int count;
    double *values;
    perfcast_features_count *updates;
    /* Over the ranks: the values reduced (sum or maximum by kind), counters' maxima, updates. */
    double *reduced;
    double *rank_max;
    perfcast_features_count *reduced_updates;
    const char *const *names;
    const unsigned char *kinds;
    struct perfcast_features_unit *next;
    /* Under OpenMP: every thread's own counters of this unit (see perfcast_features_fold). */
    struct perfcast_features_shadow *shadows;
};

/* One thread's counters of one unit (OpenMP): updated without atomics or shared cache lines,
 * folded into the unit's at each record. Kept after the thread ends, so nothing is lost. */
struct perfcast_features_shadow {
    double *values;
    perfcast_features_count *updates;
    struct perfcast_features_shadow *next;
};

__attribute__((weak)) struct perfcast_features_unit *perfcast_features_units = 0;
__attribute__((weak)) int perfcast_features_written = 0;
__attribute__((weak)) int perfcast_features_handler = 0;
__attribute__((weak)) double perfcast_features_start = 0.0;
__attribute__((weak)) double perfcast_features_cpu_start = 0.0;

__attribute__((unused)) static double perfcast_features_now(void) {
#ifdef CLOCK_MONOTONIC
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#else
    struct timeval t;
    gettimeofday(&t, 0);
    return (double)t.tv_sec + 1e-6 * (double)t.tv_usec;
#endif
}

/* CPU seconds this process has used. */
__attribute__((unused)) static double perfcast_features_cpu(void) {
#ifdef CLOCK_PROCESS_CPUTIME_ID
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
#else
    return (double)clock() / CLOCKS_PER_SEC;
#endif
}

/* Adds every thread's own counters (OpenMP) into the units' and clears them: called before a
 * record is written, once the threads of the parallel regions have joined. A variable's value
 * is the largest any thread holds (as over the ranks). Without OpenMP there are none. */
__attribute__((unused)) static void perfcast_features_fold(void) {
    struct perfcast_features_unit *u;
    struct perfcast_features_shadow *s;
    int i;
    for (u = perfcast_features_units; u; u = u->next)
        for (s = __atomic_load_n(&u->shadows, __ATOMIC_ACQUIRE); s; s = s->next)
            for (i = 0; i < u->count; ++i) {
                if (!s->updates[i])
                    continue;
                if (!u->kinds[i])
                    u->values[i] += s->values[i];
                else if (!u->updates[i] || s->values[i] > u->values[i])
                    u->values[i] = s->values[i];
                u->updates[i] += s->updates[i];
                s->values[i] = 0.0;
                s->updates[i] = 0;
            }
}

/* Seconds one counter update takes here: a timed loop of updates like the inserted ones, run
 * once per process (an early-phase record and the exit record share it). A million rounds cost
 * 8 million instructions, more than many short runs' own work; 100000 still last far longer
 * than the clock's resolution. */
__attribute__((weak)) double perfcast_features_seconds_per_update = 0.0;
__attribute__((unused)) static double perfcast_features_update_cost(void) {
#ifdef _OPENMP
    static __thread volatile double sink[1];
    static __thread volatile perfcast_features_count ticks[1];
#else
    static volatile double sink[1];
    static volatile perfcast_features_count ticks[1];
#endif
    const int rounds = 100000;
    double begin;
    int i;
    if (perfcast_features_seconds_per_update > 0.0)
        return perfcast_features_seconds_per_update;
    begin = perfcast_features_now();
    for (i = 0; i < rounds; ++i) {
        sink[0] += 1.0;
        ticks[0] += 1;
    }
    perfcast_features_seconds_per_update = (perfcast_features_now() - begin) / rounds;
    return perfcast_features_seconds_per_update;
}

/* Whether each counter's maximum over the ranks is written too ($PERFCAST_FEATURES_RANK_MAX). */
__attribute__((unused)) static int perfcast_features_rank_max_wanted(void) {
    const char *wanted = getenv("PERFCAST_FEATURES_RANK_MAX");
    return wanted && *wanted && !(wanted[0] == '0' && wanted[1] == 0);
}

/* One record: the phase, wall and CPU seconds since the start (under MPI: the slowest rank's),
 * every feature's value and cost (reduced: the values reduced over the ranks). */
__attribute__((unused)) static void perfcast_features_write(const char *phase, int reduced, double elapsed, double cpu) {
    const char *path = getenv("PERFCAST_FEATURES_FILE");
    FILE *out = fopen(path && *path ? path : "perfcast-features.jsonl", "a");
    double cost;
    int rank_max, i;
    struct perfcast_features_unit *u;
    if (!out) {
        perror("perfcast features: cannot open the output file");
        return;
    }
    if (!reduced)
        perfcast_features_fold();
    cost = perfcast_features_update_cost();
    fprintf(out, "{\"phase\": \"%s\", \"elapsed\": %.9g, \"cpu\": %.9g, \"ranks_reduced\": %d",
            phase, elapsed, cpu, reduced);
    rank_max = perfcast_features_rank_max_wanted();
    for (u = perfcast_features_units; u; u = u->next)
        for (i = 0; i < u->count; ++i) {
            double value = reduced ? u->reduced[i] : u->values[i];
            double spent = cost * (double)(reduced ? u->reduced_updates[i] : u->updates[i]);
            fprintf(out, ", \"%s\": %.17g, \"cost:%s\": %.9g", u->names[i], value, u->names[i],
                    spent);
            if (rank_max && !u->kinds[i])
                fprintf(out, ", \"%s:rank_max\": %.17g, \"cost:%s:rank_max\": %.9g", u->names[i],
                        reduced ? u->rank_max[i] : u->values[i], u->names[i], spent);
        }
    fprintf(out, "}\n");
    fclose(out);
}

/* MPI_Init's status, passed through; the run's elapsed time counts from here. */
__attribute__((unused)) static int perfcast_features_after_init(int status) {
    perfcast_features_start = perfcast_features_now();
    perfcast_features_cpu_start = perfcast_features_cpu();
    return status;
}

__attribute__((unused)) static void perfcast_features_at_exit(void) {
    if (!perfcast_features_written) {
        perfcast_features_written = 1;
        perfcast_features_write("exit", 0, perfcast_features_now() - perfcast_features_start,
                                perfcast_features_cpu() - perfcast_features_cpu_start);
    }
}

#endif /* PERFCAST_FEATURES_H */

/* Per translation unit (this part is read once per instrumented source). */
static double perfcast_features_value[PERFCAST_FEATURES_COUNT];
static perfcast_features_count perfcast_features_updates[PERFCAST_FEATURES_COUNT];
static double perfcast_features_reduced[PERFCAST_FEATURES_COUNT];
static double perfcast_features_rank_max[PERFCAST_FEATURES_COUNT];
static perfcast_features_count perfcast_features_reduced_updates[PERFCAST_FEATURES_COUNT];
static const char *const perfcast_features_names[PERFCAST_FEATURES_COUNT] = PERFCAST_FEATURES_NAMES;
static const unsigned char perfcast_features_kinds[PERFCAST_FEATURES_COUNT] = PERFCAST_FEATURES_KINDS;
static struct perfcast_features_unit perfcast_features_this_unit = {
    PERFCAST_FEATURES_COUNT, perfcast_features_value, perfcast_features_updates,
    perfcast_features_reduced, perfcast_features_rank_max, perfcast_features_reduced_updates,
    perfcast_features_names, perfcast_features_kinds, 0};

__attribute__((constructor)) static void perfcast_features_register(void) {
    perfcast_features_this_unit.next = perfcast_features_units;
    perfcast_features_units = &perfcast_features_this_unit;
    if (!perfcast_features_handler) {
        perfcast_features_handler = 1;
        perfcast_features_start = perfcast_features_now();
        perfcast_features_cpu_start = perfcast_features_cpu();
        atexit(perfcast_features_at_exit);
    }
}

/* A counter: a branch outcome, a loop trip, an MPI call. */
#ifdef _OPENMP
/* This thread's counters of this unit, made at its first update (OpenMP). */
static __thread struct perfcast_features_shadow *perfcast_features_mine = 0;
__attribute__((unused)) static struct perfcast_features_shadow *perfcast_features_own(void) {
    struct perfcast_features_shadow *made = calloc(1, sizeof *made);
    if (made) {
        made->values = calloc(PERFCAST_FEATURES_COUNT, sizeof *made->values);
        made->updates = calloc(PERFCAST_FEATURES_COUNT, sizeof *made->updates);
    }
    if (!made || !made->values || !made->updates) {
        perror("perfcast features: no memory for a thread's counters");
        abort();
    }
    made->next = __atomic_load_n(&perfcast_features_this_unit.shadows, __ATOMIC_RELAXED);
    while (!__atomic_compare_exchange_n(&perfcast_features_this_unit.shadows, &made->next, made,
                                        0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
        ;
    perfcast_features_mine = made;
    return made;
}
#define PERFCAST_MINE() (perfcast_features_mine ? perfcast_features_mine : perfcast_features_own())
#define PERFCAST_VALUES(i) (PERFCAST_MINE()->values[i])
#define PERFCAST_UPDATES(i) (perfcast_features_mine->updates[i])
#else
#define PERFCAST_VALUES(i) (perfcast_features_value[i])
#define PERFCAST_UPDATES(i) (perfcast_features_updates[i])
#endif
/* PERFCAST_VALUES comes first in each update: under OpenMP it makes the thread's counters. */
#define PERFCAST_HIT(i) (PERFCAST_VALUES(i) += 1.0, PERFCAST_UPDATES(i)++)
/* A branch: counts the outcome, keeps the condition's truth. */
#define PERFCAST_BRANCH(i, c) ((c) ? (PERFCAST_HIT(i), 1) : (PERFCAST_HIT((i) + 1), 0))
/* A for or while loop: counts the trips (the condition's true outcomes). */
#define PERFCAST_LOOP(i, c) ((c) ? (PERFCAST_HIT(i), 1) : 0)
/* A do-while loop: counts the evaluations of its condition (the trips completed). */
#define PERFCAST_DO(i, c) (PERFCAST_HIT(i), (c))
/* The value of a scalar variable after an assignment. */
#define PERFCAST_VALUE(i, v) (PERFCAST_VALUES(i) = (double)(v), PERFCAST_UPDATES(i)++)

#ifdef MPI_VERSION
#ifndef PERFCAST_FEATURES_MPI_H
#define PERFCAST_FEATURES_MPI_H
/* Counters summed over the ranks (and their maxima kept), values their maximum, into the
 * reduced arrays (the counters themselves run on); rank 0 writes. Collective. */
__attribute__((unused)) static void perfcast_features_reduce_and_write(const char *phase) {
    int initialized = 0, finalized = 0, rank = 0, i;
    double times[2];
    double slowest[2] = {0.0, 0.0};
    struct perfcast_features_unit *u;
    times[0] = perfcast_features_now() - perfcast_features_start;
    times[1] = perfcast_features_cpu() - perfcast_features_cpu_start;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) {
        perfcast_features_write(phase, 0, times[0], times[1]);
        return;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Allreduce(times, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    perfcast_features_fold();
    for (u = perfcast_features_units; u; u = u->next) {
        for (i = 0; i < u->count; ++i) {
            MPI_Allreduce(&u->values[i], &u->reduced[i], 1, MPI_DOUBLE,
                          u->kinds[i] ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(&u->values[i], &u->rank_max[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(&u->updates[i], &u->reduced_updates[i], 1, MPI_UNSIGNED_LONG_LONG,
                          MPI_MAX, MPI_COMM_WORLD);
        }
    }
    if (rank == 0)
        perfcast_features_write(phase, 1, slowest[0], slowest[1]);
}

__attribute__((unused)) static void perfcast_features_finalize(void) {
    if (!perfcast_features_written) {
        perfcast_features_reduce_and_write("exit");
        perfcast_features_written = 1;
    }
}
#endif /* PERFCAST_FEATURES_MPI_H */

/* An MPI call: its count (feature i) and its bytes (feature i + 1). */
#define PERFCAST_MPI(i, n, t, call)                                                              \
    (PERFCAST_HIT(i), perfcast_features_mpi_bytes((i) + 1, (double)(n), (t)), (call))
__attribute__((unused)) static void perfcast_features_mpi_bytes(int i, double n, MPI_Datatype t) {
    int size = 0;
    MPI_Type_size(t, &size);
    PERFCAST_VALUES(i) += n * size;
    PERFCAST_UPDATES(i)++;
}
#define PERFCAST_SNAPSHOT() perfcast_features_reduce_and_write("features_end")
#else
#define PERFCAST_SNAPSHOT()                                                                      \
    perfcast_features_write("features_end", 0,                                                   \
                            perfcast_features_now() - perfcast_features_start,                   \
                            perfcast_features_cpu() - perfcast_features_cpu_start)
#endif
/* An MPI call whose size is not counted (its arguments have side effects). */
#define PERFCAST_MPI_CALL(i, call) (PERFCAST_HIT(i), (call))
