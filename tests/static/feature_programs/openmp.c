/* OpenMP loops: a directive needs its loop's header as written (canonical form), collapse(2)
 * binds two loops, and the threads of a team update the counters at the same time. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 1000;
    long i, j, hits = 0, pairs = 0;
    double s = 0.0;
#pragma omp parallel for reduction(+ : hits)
    for (i = 0; i < n; i++) {
        long k = i % 3;
        if (k == 0)
            hits++;
    }
#pragma omp parallel for collapse(2) \
    reduction(+ : pairs)
    for (i = 0; i < 100; i++)
        for (j = 0; j < 30; j++) {
            if ((i + j) % 2 == 0)
                pairs++;
        }
#pragma omp parallel
    {
#pragma omp for reduction(+ : s)
        for (i = 0; i < n; i++)
            s += 1.0;
    }
    for (i = 0; i < 10; i++)
        s += 1;
    printf("%ld %ld %.1f\n", hits, pairs, s);
    return 0;
}
