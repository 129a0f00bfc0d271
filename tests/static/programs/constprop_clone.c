/* A static function called with a constant argument at its only call site: gcc -O2 and -O3
   emit only a specialized copy, scale.constprop.0, and no code named scale. */
#include <stdio.h>
#include <stdlib.h>

static double data[1000];

static __attribute__((noinline)) void scale(double *v, int count, double factor)
{
    for (int i = 0; i < count; i++)
        v[i] = v[i] * factor + 1.0;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int reps = argc > 2 ? atoi(argv[2]) : 50;
    for (int r = 0; r < reps; r++)
        scale(data, n, 0.5);
    printf("%f\n", data[0]);
    return 0;
}
