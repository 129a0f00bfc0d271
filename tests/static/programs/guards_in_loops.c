/* Guards inside loops that the static report has to name: an unbraced if in an unbraced for
   (the then statement starts on the line after the condition), and an inlined function whose
   one-time set-up runs under a run-time flag in every call (as NAS IS's randlc). */
#include <stdio.h>
#include <stdlib.h>

int values[8192];

static __attribute__((noinline)) int descents(int n)
{
    int count = 0;
    for (int i = 1; i < n; i++)
        if (values[i - 1] > values[i])
            count++;
    return count;
}

static inline double scaled(double *state, double factor)
{
    static int ready = 0;
    static double half, whole;
    /* SETUP GUARD */
    if (ready == 0) {
        half = 1.0;
        whole = 1.0;
        for (int i = 1; i <= 23; i++) {
            half = 0.5 * half;
            whole = 2.0 * whole;
        }
        ready = 1;
    }
    double next = *state * factor * half + whole;
    *state = next - (int) next;
    return *state;
}

static __attribute__((noinline)) double series(int n)
{
    double state = 0.25, total = 0.0;
    for (int i = 0; i < n; i++)
        total += scaled(&state, 3.0);
    return total;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4096;
    for (int i = 0; i < n; i++)
        values[i] = (i * 7919) % 1000;
    printf("%d %f\n", descents(n), series(n));
    return 0;
}
