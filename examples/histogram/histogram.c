/*
 * Histogram of N samples with a DELIBERATE SCALABILITY BUG, for the diagnosis work: the global
 * histogram is assembled by rank 0 alone, one rank after the other ("serial_reduce"), so its cost
 * grows linearly with the number of ranks p, while everything else shrinks like N/p. The scalable
 * version is one MPI_Allreduce (cost ~ B log p).
 *
 * usage: histogram N [BINS]      (default 1048576 bins)
 *
 * Regions, one function each:
 *   sample          hist_sample: N/p pseudo-random samples of a bell-shaped distribution
 *   local_histogram hist_local: binning the rank's samples into BINS bins
 *   wait            MPI_Barrier: load imbalance of the steps above, kept out of serial_reduce
 *   serial_reduce   hist_serial_reduce: THE BUG. Rank 0 receives the p-1 other histograms one by
 *                   one, adds each and refreshes a running cumulative distribution after each,
 *                   then broadcasts the sum: ~ (p-1) * BINS on rank 0
 *   statistics      hist_statistics: mean and median from the global histogram, ~ BINS
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "perfcast.h"

#define KERNEL __attribute__((noinline, noclone))

KERNEL static double *hist_sample(long count, int rank) {
    double *samples = malloc(sizeof(double) * (size_t)(count > 0 ? count : 1));
    if (!samples) MPI_Abort(MPI_COMM_WORLD, 1);
    uint64_t state = 0x2545F4914F6CDD1Dull * (uint64_t)(rank + 1);
    for (long i = 0; i < count; i++) {
        double sum = 0.0; /* sum of four uniforms in [0, 1): bell-shaped on [0, 4) */
        for (int u = 0; u < 4; u++) {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            sum += (double)(state >> 11) * 0x1.0p-53;
        }
        samples[i] = sum;
    }
    return samples;
}

KERNEL static void hist_local(const double *samples, long count, int bins, long *histogram) {
    for (int b = 0; b < bins; b++) histogram[b] = 0;
    for (long i = 0; i < count; i++) {
        int b = (int)(samples[i] / 4.0 * bins);
        histogram[b < bins ? b : bins - 1]++;
    }
}

KERNEL static void hist_serial_reduce(long *histogram, int bins, int rank, int size) {
    if (rank == 0) {
        long *incoming = malloc(sizeof(long) * (size_t)bins);
        long *cumulative = malloc(sizeof(long) * (size_t)bins);
        if (!incoming || !cumulative) MPI_Abort(MPI_COMM_WORLD, 1);
        for (int source = 1; source < size; source++) {
            MPI_Recv(incoming, bins, MPI_LONG, source, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            long running = 0;
            for (int b = 0; b < bins; b++) {
                histogram[b] += incoming[b];
                cumulative[b] = running += histogram[b];
            }
        }
        if (size > 1 && cumulative[bins - 1] <= 0) MPI_Abort(MPI_COMM_WORLD, 3);
        free(incoming);
        free(cumulative);
    } else {
        MPI_Send(histogram, bins, MPI_LONG, 0, 0, MPI_COMM_WORLD);
    }
    MPI_Bcast(histogram, bins, MPI_LONG, 0, MPI_COMM_WORLD);
}

KERNEL static void hist_statistics(const long *histogram, int bins, double *mean,
                                   double *median) {
    long total = 0;
    double weighted = 0.0;
    for (int b = 0; b < bins; b++) {
        total += histogram[b];
        weighted += (double)histogram[b] * (b + 0.5) * 4.0 / bins;
    }
    *mean = weighted / (double)total;
    long seen = 0;
    int b = 0;
    while (b < bins - 1 && 2 * (seen + histogram[b]) < total) seen += histogram[b++];
    *median = (b + 0.5) * 4.0 / bins;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long total = argc > 1 ? atol(argv[1]) : 0;
    int bins = argc > 2 ? atoi(argv[2]) : 1048576;
    if (total < 1 || bins < 1) {
        if (rank == 0) fprintf(stderr, "usage: histogram N [BINS] (N, BINS >= 1)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    long count = total / size + (rank < total % size);
    long *histogram = malloc(sizeof(long) * (size_t)bins);
    if (!histogram) MPI_Abort(MPI_COMM_WORLD, 1);

    PERFCAST_REGION_BEGIN("sample");
    double *samples = hist_sample(count, rank);
    PERFCAST_REGION_END("sample");

    PERFCAST_REGION_BEGIN("local_histogram");
    hist_local(samples, count, bins, histogram);
    PERFCAST_REGION_END("local_histogram");

    PERFCAST_REGION_BEGIN("wait");
    MPI_Barrier(MPI_COMM_WORLD);
    PERFCAST_REGION_END("wait");

    PERFCAST_REGION_BEGIN("serial_reduce");
    hist_serial_reduce(histogram, bins, rank, size);
    PERFCAST_REGION_END("serial_reduce");

    double mean, median;
    PERFCAST_REGION_BEGIN("statistics");
    hist_statistics(histogram, bins, &mean, &median);
    PERFCAST_REGION_END("statistics");

    if (rank == 0)
        printf("histogram n=%ld p=%d bins=%d mean=%.4f median=%.4f\n", total, size, bins, mean,
               median);
    free(samples);
    free(histogram);
    MPI_Finalize();
    return 0;
}
