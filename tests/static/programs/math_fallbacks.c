/* sqrt, sqrtf and sqrtl in loops and at a function's end: without -fno-math-errno, gcc and
   clang compute them inline and call the library only for an argument below 0 (to set errno).
   Every argument here is in the domain, so those calls never run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double norms(const double *v, int n)
{
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += sqrt(v[i]);
    return total;
}

__attribute__((noinline)) float norms_float(const float *v, int n)
{
    float total = 0.0f;
    for (int i = 0; i < n; i++)
        total += sqrtf(v[i]) * 0.5f;
    return total;
}

__attribute__((noinline)) long double root_long(long double x)
{
    return sqrtl(x) + 1.0L;
}

__attribute__((noinline)) double scaled_root(double x)
{
    return sqrt(x) * 2.0;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    double *v = malloc(n * sizeof(double));
    float *w = malloc(n * sizeof(float));
    for (int i = 0; i < n; i++) {
        v[i] = i + 0.5;
        w[i] = (float)i;
    }
    double sum = norms(v, n) + norms_float(w, n);
    for (int i = 0; i < n; i++)
        sum += scaled_root(v[i]) + (double)root_long((long double)i);
    printf("%f\n", sum);
    free(v);
    free(w);
    return 0;
}
