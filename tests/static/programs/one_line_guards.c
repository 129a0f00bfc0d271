/* Conditions inside loops written on one line, as PolyBench's print_array and LINPACK's
   matgen do: an `if (c) stmt;` whose statement shares the condition's line, and a running
   maximum by `?:`. */
#include <stdio.h>
#include <stdlib.h>

static double grid[64][64];

static __attribute__((noinline)) void dump(int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if ((i * n + j) % 20 == 0) fputc('\n', stderr);
            fprintf(stderr, "%0.2f ", grid[i][j]);
        }
    fputc('\n', stderr);
}

static __attribute__((noinline)) double fill(double *a, int n)
{
    double largest = 0.0;
    int seed = 1325;
    for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) {
            seed = 3125 * seed % 65536;
            a[n * j + i] = (seed - 32768.0) / 16384.0;
            largest = (a[n * j + i] > largest) ? a[n * j + i] : largest;
        }
    return largest;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 40;
    double *a = malloc(sizeof(double) * n * n);
    dump(n);
    printf("%f\n", fill(a, n));
    free(a);
    return 0;
}
