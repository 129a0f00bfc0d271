/* OpenMP's omp.h and statements whose form an atomic directive fixes: a counter added to
 * `x += e;` or to the if of `atomic compare` would no longer compile. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100, i, hits = 0;
    double total = 0.0, seen = 0.0;
    int team = 0;
#pragma omp parallel for
    for (i = 0; i < n; i++) {
        if (i % 4 == 0) {
#pragma omp atomic
            hits++;
        }
#pragma omp atomic update
        total = total + 1.0;
#pragma omp atomic
        total += 0.5;
    }
#pragma omp parallel
    {
#pragma omp single
        team = omp_get_num_threads() > 0;
#pragma omp critical
        seen += 1.0;
    }
#pragma omp atomic write
    total = total * 2.0;
#pragma omp atomic read
    n = hits;
    printf("%ld %.1f %d %d\n", hits, total, team, seen > 0.0);
    return 0;
}
