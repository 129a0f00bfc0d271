/* Breadth-first searches on a generated graph, for perfcast's learned-model benchmark
 * (BSD-3-Clause). Usage: bfs SCALE EDGEFACTOR ROOTS SKEW SEED
 * 2^SCALE vertices, EDGEFACTOR * 2^SCALE edges drawn with a skew towards low vertex numbers
 * (SKEW in [0, 0.9]: 0 uniform), so how much of the graph a root reaches depends on the draw.
 * Each rank searches from its share of the ROOTS roots; traversed edges are summed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long long draw(unsigned long long *state) {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    return *state;
}

static long vertex(unsigned long long *state, long count, double skew) {
    double u = (double)(draw(state) >> 11) / 9007199254740992.0;
    double v = skew > 0 ? u * u * skew + u * (1 - skew) : u;
    long x = (long)(v * count);
    return x >= count ? count - 1 : x;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc < 6) {
        if (rank == 0) fprintf(stderr, "usage: bfs SCALE EDGEFACTOR ROOTS SKEW SEED\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int scale = atoi(argv[1]);
    int edgefactor = atoi(argv[2]);
    int roots = atoi(argv[3]);
    double skew = atof(argv[4]);
    unsigned long long state = strtoull(argv[5], 0, 10) * 2654435761ULL + 88172645463325252ULL;
    long vertices = 1L << scale;
    long edges = (long)edgefactor * vertices;
    long *degree = calloc((size_t)vertices + 1, sizeof(long));
    long *from = malloc(sizeof(long) * (size_t)edges), *to = malloc(sizeof(long) * (size_t)edges);
    for (long e = 0; e < edges; e++) {
        from[e] = vertex(&state, vertices, skew);
        to[e] = vertex(&state, vertices, skew);
        degree[from[e] + 1]++;
        degree[to[e] + 1]++;
    }
    for (long v = 0; v < vertices; v++) degree[v + 1] += degree[v];
    long *adjacent = malloc(sizeof(long) * 2 * (size_t)edges);
    long *fill = malloc(sizeof(long) * (size_t)vertices);
    for (long v = 0; v < vertices; v++) fill[v] = degree[v];
    for (long e = 0; e < edges; e++) {
        adjacent[fill[from[e]]++] = to[e];
        adjacent[fill[to[e]]++] = from[e];
    }
    long *level = malloc(sizeof(long) * (size_t)vertices);
    long *queue = malloc(sizeof(long) * (size_t)vertices);
    long traversed = 0, reached = 0;
    for (int r = rank; r < roots; r += size) {
        long root = (long)(draw(&state) % (unsigned long long)vertices);
        for (long v = 0; v < vertices; v++) level[v] = -1;
        long head = 0, tail = 0;
        queue[tail++] = root;
        level[root] = 0;
        while (head < tail) {
            long v = queue[head++];
            for (long k = degree[v]; k < degree[v + 1]; k++) {
                long w = adjacent[k];
                traversed++;
                if (level[w] < 0) {
                    level[w] = level[v] + 1;
                    queue[tail++] = w;
                }
            }
        }
        reached += tail;
    }
    long totals[2] = {traversed, reached}, sums[2] = {0, 0};
    MPI_Allreduce(totals, sums, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("traversed %ld reached %ld\n", sums[0], sums[1]);
    free(degree), free(from), free(to), free(adjacent), free(fill), free(level), free(queue);
    MPI_Finalize();
    return 0;
}
