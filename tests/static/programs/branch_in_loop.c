/* Code under an if inside a loop runs in some iterations only: in the first ten (a guard the
   analysis counts), in filter() where the data says so (a guard it cannot count), and in
   folded() as the arm of a conditional operator (no if block of the report). */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) double filter(const double *v, int n)
{
    double kept = 0.0;
    for (int i = 0; i < n; i++) {
        if (v[i] > 0.75) {
            kept = kept * 0.5 + v[i];
            kept = kept / (1.0 + v[i]);
        }
    }
    return kept;
}

static __attribute__((noinline)) double folded(const double *v, int n)
{
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += v[i] > 0.9 ? v[i] * v[i] / (1.0 + v[i]) : 0.5;
    return total;
}

int main(int argc, char **argv) {
#pragma perfcast probability(1)
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    double s = 0.0, t = 1.0;
    for (int i = 0; i < n; i++) {
        s += i * 0.5;
        if (i < 10) {
            t = t * 1.5 + s;
            s = s / t + 3.0;
            t = t - s * 0.25;
        }
    }
    double *v = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++)
        v[i] = (double) rand() / RAND_MAX;
    printf("%f %f %f %f\n", s, t, filter(v, n), folded(v, n));
    free(v);
    return 0;
}
