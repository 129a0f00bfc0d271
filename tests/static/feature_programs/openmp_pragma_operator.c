/* Directives written with the _Pragma operator, directly or through a macro (as portable
 * codes spell them), before a loop and an atomic update. */
#include <stdio.h>
#include <stdlib.h>

#define PARALLEL_FOR _Pragma("omp parallel for")
#define ATOMIC_UPDATE _Pragma("omp atomic")

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 30, i, odd = 0;
    double *x = malloc((size_t)n * sizeof *x);
    _Pragma("omp parallel for")
    for (i = 0; i < n; i++) x[i] = (double)i;
    PARALLEL_FOR
    for (i = 0; i < n; i++) {
        if (i % 2 == 1) {
            ATOMIC_UPDATE
            odd += 1;
        }
    }
    printf("%ld %.1f\n", odd, x[n - 1]);
    free(x);
    return 0;
}
