/*
 * Parallel sample sort of N 64-bit keys (N/p per rank, pseudo-random, reproducible).
 *
 * usage: samplesort N
 *
 * Regions, one function each:
 *   generate     ss_generate: N/p keys from a per-rank xorshift generator
 *   local_sort   ss_local_sort: qsort of the rank's keys, ~(N/p) log(N/p) comparisons
 *   splitters    ss_splitters: p-1 regular samples per rank, MPI_Allgather, sorted, p-1 chosen
 *   partition    ss_partition: binary search of each splitter in the sorted keys, ~p log(N/p)
 *   exchange     ss_exchange: MPI_Alltoall of counts and MPI_Alltoallv of the keys
 *   merge        ss_merge: qsort of the received keys (already sorted runs from each rank)
 *   verify       ss_verify: local order, order across neighbouring ranks, total key count
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfcast.h"

#define KERNEL __attribute__((noinline, noclone))

typedef struct {
    uint64_t *data;
    long count;
} keys;

static int compare_keys(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

KERNEL static keys ss_generate(long total, int rank, int size) {
    keys k = {.count = total / size + (rank < total % size)};
    k.data = malloc(sizeof(uint64_t) * (size_t)(k.count > 0 ? k.count : 1));
    if (!k.data) MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t state = 0x9E3779B97F4A7C15ull * (uint64_t)(rank + 1);
    for (long i = 0; i < k.count; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        k.data[i] = state;
    }
    return k;
}

KERNEL static void ss_local_sort(keys *k) {
    qsort(k->data, (size_t)k->count, sizeof(uint64_t), compare_keys);
}

/* p - 1 global splitters (into splitters[0 .. size-2]) from regular samples of every rank. */
KERNEL static void ss_splitters(const keys *k, int size, uint64_t *splitters) {
    uint64_t *samples = malloc(sizeof(uint64_t) * (size_t)size);
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)size * (size_t)size);
    if (!samples || !all) MPI_Abort(MPI_COMM_WORLD, 1);
    for (int s = 0; s < size; s++) /* an empty rank samples the largest key: a harmless bias */
        samples[s] = k->count > 0 ? k->data[(long)s * k->count / size] : UINT64_MAX;
    MPI_Allgather(samples, size, MPI_UINT64_T, all, size, MPI_UINT64_T, MPI_COMM_WORLD);
    qsort(all, (size_t)size * (size_t)size, sizeof(uint64_t), compare_keys);
    for (int s = 1; s < size; s++) splitters[s - 1] = all[(long)s * size + size / 2];
    free(samples);
    free(all);
}

/* counts[d]: number of keys k with splitters[d-1] < k <= splitters[d] (open-ended at the ends). */
KERNEL static void ss_partition(const keys *k, int size, const uint64_t *splitters, int *counts) {
    long begin = 0;
    for (int d = 0; d < size; d++) {
        long end = k->count;
        if (d < size - 1) { /* first index with key > splitters[d] */
            long lo = begin, hi = k->count;
            while (lo < hi) {
                long mid = lo + (hi - lo) / 2;
                if (k->data[mid] <= splitters[d]) lo = mid + 1;
                else hi = mid;
            }
            end = lo;
        }
        counts[d] = (int)(end - begin);
        begin = end;
    }
}

KERNEL static keys ss_exchange(const keys *k, int size, const int *send_counts) {
    int *recv_counts = malloc(sizeof(int) * (size_t)size);
    int *send_displs = malloc(sizeof(int) * (size_t)size);
    int *recv_displs = malloc(sizeof(int) * (size_t)size);
    if (!recv_counts || !send_displs || !recv_displs) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Alltoall(send_counts, 1, MPI_INT, recv_counts, 1, MPI_INT, MPI_COMM_WORLD);
    keys received = {0};
    for (int d = 0; d < size; d++) {
        send_displs[d] = d ? send_displs[d - 1] + send_counts[d - 1] : 0;
        recv_displs[d] = d ? recv_displs[d - 1] + recv_counts[d - 1] : 0;
        received.count += recv_counts[d];
    }
    received.data = malloc(sizeof(uint64_t) * (size_t)(received.count > 0 ? received.count : 1));
    if (!received.data) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Alltoallv(k->data, send_counts, send_displs, MPI_UINT64_T, received.data, recv_counts,
                  recv_displs, MPI_UINT64_T, MPI_COMM_WORLD);
    free(recv_counts);
    free(send_displs);
    free(recv_displs);
    return received;
}

KERNEL static void ss_merge(keys *k) {
    qsort(k->data, (size_t)k->count, sizeof(uint64_t), compare_keys);
}

/* 1 if the keys are sorted across all ranks and none got lost, on every rank. */
KERNEL static int ss_verify(const keys *k, long total, int rank, int size) {
    int ok = 1;
    for (long i = 1; i < k->count; i++) ok &= k->data[i - 1] <= k->data[i];
    /* every rank's smallest key must not be below the largest key of any rank before it */
    uint64_t mine[2] = {k->count ? k->data[0] : UINT64_MAX, k->count ? k->data[k->count - 1] : 0};
    uint64_t *all = malloc(sizeof(uint64_t) * 2 * (size_t)size);
    if (!all) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Allgather(mine, 2, MPI_UINT64_T, all, 2, MPI_UINT64_T, MPI_COMM_WORLD);
    uint64_t largest_before = 0;
    for (int r = 0; r < rank; r++)
        if (all[2 * r + 1] > largest_before) largest_before = all[2 * r + 1];
    ok &= k->count == 0 || largest_before <= mine[0];
    free(all);
    long count = k->count, sum = 0;
    int all_ok = 0;
    MPI_Allreduce(&count, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    return all_ok && sum == total;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = argc > 1 ? atol(argv[1]) : 0;
    if (total < 1) {
        if (rank == 0) fprintf(stderr, "usage: samplesort N (N >= 1 keys)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    PERFCAST_REGION_BEGIN("generate");
    keys k = ss_generate(total, rank, size);
    PERFCAST_REGION_END("generate");

    PERFCAST_REGION_BEGIN("local_sort");
    ss_local_sort(&k);
    PERFCAST_REGION_END("local_sort");

    uint64_t *splitters = malloc(sizeof(uint64_t) * (size_t)size);
    int *counts = malloc(sizeof(int) * (size_t)size);
    if (!splitters || !counts) MPI_Abort(MPI_COMM_WORLD, 1);
    PERFCAST_REGION_BEGIN("splitters");
    ss_splitters(&k, size, splitters);
    PERFCAST_REGION_END("splitters");

    PERFCAST_REGION_BEGIN("partition");
    ss_partition(&k, size, splitters, counts);
    PERFCAST_REGION_END("partition");

    PERFCAST_REGION_BEGIN("exchange");
    keys sorted = ss_exchange(&k, size, counts);
    PERFCAST_REGION_END("exchange");

    PERFCAST_REGION_BEGIN("merge");
    ss_merge(&sorted);
    PERFCAST_REGION_END("merge");

    PERFCAST_REGION_BEGIN("verify");
    int ok = ss_verify(&sorted, total, rank, size);
    PERFCAST_REGION_END("verify");

    if (rank == 0) printf("samplesort n=%ld p=%d sorted=%s\n", total, size, ok ? "yes" : "NO");
    free(k.data);
    free(sorted.data);
    free(splitters);
    free(counts);
    MPI_Finalize();
    return ok ? 0 : 1;
}
