/* Loops under a loop directive whose body is one statement that is not an expression: an
 * inner loop (the row loop of a matrix product), an if/else, a do and a while loop. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 20, i, j, k, big = 0;
    double *a = calloc((size_t)n * n, sizeof *a), *c = calloc((size_t)n * n, sizeof *c);
#pragma omp parallel for private(j)
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            a[i * n + j] = i + j;
#pragma omp parallel for private(j, k)
    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            for (k = 0; k < n; k++)
                c[i * n + j] += a[i * n + k] * a[k * n + j];
#pragma omp parallel for reduction(+ : big)
    for (i = 0; i < n; i++)
        if (c[i * n] > 10000.0)
            big++;
        else
            a[i] = -1.0;
#pragma omp parallel for
    for (i = 0; i < n; i++)
        do {
            a[i * n + 1] += 1.0;
        } while (a[i * n + 1] < 5.0);
#pragma omp parallel for
    for (i = 0; i < n; i++)
        while (c[i * n + 2] < 0.0) c[i * n + 2] += 1.0;
    printf("%.1f %d %.1f\n", c[n * n - 1], big, a[n + 1]);
    free(a);
    free(c);
    return 0;
}
