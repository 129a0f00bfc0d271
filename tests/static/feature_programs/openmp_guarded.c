/* Directives guarded for builds without OpenMP: #endif (or #else) lines stand between a
 * directive and the loop or statement it binds. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 40, i;
    double sum = 0.0, *x = malloc((size_t)n * sizeof *x);
#ifdef _OPENMP
#pragma omp parallel for
#endif
    for (i = 0; i < n; i++) x[i] = (double)i;
#if defined(_OPENMP)
#pragma omp parallel for reduction(+ : sum)
#else
#define SERIAL_BUILD 1
#endif
    for (i = 0; i < n; i++)
        if (i % 2 == 0)
            sum += x[i];
#ifdef _OPENMP
#pragma omp atomic
#endif
    sum += 1.0;
    printf("%.1f\n", sum);
    free(x);
    return 0;
}
