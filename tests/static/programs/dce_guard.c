/* A benchmark-suite idiom: the results are printed only under a run-time condition that never
   holds, so that the compiler keeps the computation; the printing function is inlined under
   it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void dump(const double *v, int n)
{
    for (int i = 0; i < n; i++)
        fprintf(stderr, "%f\n", v[i]);
}

int main(int argc, char **argv) {
#pragma perfcast probability(1)
    int n = argc > 1 ? atoi(argv[1]) : 500;
    double *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        v[i] = i * 0.5 + 1.0;
    if (argc > 42 && !strcmp(argv[0], ""))
        dump(v, n);
    free(v);
    return 0;
}
