/* Comments between a directive and its statement: the loop or the atomic update is still the
 * one the directive binds. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 50, i, total = 0;
    double *x = malloc((size_t)n * sizeof *x);
#pragma omp parallel for if (n > 10) \
    schedule(static)
    /* fill the vector */
    for (i = 0; i < n; i++) x[i] = 0.5 * i;
#pragma omp parallel for // every element once
    // a line comment too
    for (i = 0; i < n; i++) {
#pragma omp atomic /* one update at a time */
        /* the update itself */
        total += (long)x[i];
    }
    printf("%ld\n", total);
    free(x);
    return 0;
}
