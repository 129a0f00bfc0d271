/* Code inside loops that runs under a condition with no if statement: the arms of ?: and the
   right operands of && and ||. Each function holds one kind; main prints how often the data
   condition of annotated() held, so that a test can put the measured share into p. */
#include <stdio.h>
#include <stdlib.h>

/* a ?: whose condition the analysis counts: the then arm runs in the first ten iterations */
static __attribute__((noinline)) double early(const double *v, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += i < 10 ? v[i] * v[i] / (1.0 + v[i]) : v[i] * 0.5;
    return s;
}

/* && and || of integer comparisons the analysis counts (compilers may drop the branches) */
static __attribute__((noinline)) int window(int n, int m)
{
    int hits = 0;
    for (int i = 0; i < n; i++) {
        hits += i > 3 && i < m;
        hits += i < 2 || i >= m;
    }
    return hits;
}

/* && whose right operand reads the data: it runs in the first m iterations */
static __attribute__((noinline)) int prefix(const double *v, int n, int m)
{
    int hits = 0;
    for (int i = 0; i < n; i++)
        hits += i < m && v[i] * v[i] > 0.3;
    return hits;
}

/* a ?: of the data, annotated: p is the share of iterations taking the then arm */
static __attribute__((noinline)) double annotated(const double *v, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) {
#pragma perfcast probability(p)
        s += v[i] > 0.9 ? v[i] * v[i] / (1.0 + v[i]) : 0.5;
    }
    return s;
}

/* a ?: of the data without annotation: its count is undefined (measured with --profile) */
static __attribute__((noinline)) double unannotated(const double *v, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++)
        s += v[i] > 0.8 ? v[i] / (2.0 + v[i]) : v[i];
    return s;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    int m = argc > 2 ? atoi(argv[2]) : 100;
    double *v = malloc(sizeof(double) * n);
    int high = 0;
    for (int i = 0; i < n; i++) {
        v[i] = (double) rand() / RAND_MAX;
        high += v[i] > 0.9;
    }
    printf("%d\n", high);
    printf("%f %d %d %f %f\n", early(v, n), window(n, m), prefix(v, n, m), annotated(v, n),
           unannotated(v, n));
    free(v);
    return 0;
}
