/* C89 as older scientific codes write it: declarations first, K&R-style local prototypes,
 * no // comments; built with -std=c89 -pedantic-errors. */
#include <stdio.h>
#include <stdlib.h>

#define N_MAX 64

static double grid[N_MAX];

int main(argc, argv)
int argc;
char **argv;
{
    void relax(), report();
    int n, steps, k;
    double total;

    n = argc > 1 ? atoi(argv[1]) : 16;
    if (n > N_MAX)
        n = N_MAX;
    steps = n / 4;
    total = 0.0;
    for (k = 0; k < n; k++)
        grid[k] = (double)k;
    for (k = 0; k < steps; k++)
        relax(n, grid);
    for (k = 0; k < n; k++)
        total += grid[k];
    report(total);
    return 0;
}

void relax(n, g)
int n;
double *g;
{
    int i;
    for (i = 1; i < n - 1; i++)
        g[i] = 0.5 * g[i] + 0.25 * (g[i - 1] + g[i + 1]);
}

void report(total)
double total;
{
    printf("total %.6f\n", total);
}
