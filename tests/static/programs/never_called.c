/* Functions the binary may never enter: one whose result the compiler folds into its callers
   (it returns an argument, after an empty loop), one inlined at its only call site, and two
   reached only through a table of function pointers, which do run.
   Usage: never_called n */
#include <stdio.h>
#include <stdlib.h>

long keep_last(long mask, long first, long last, long value)
{
    long j;
    for (j = first + 1; j <= last; j++) {
    }
    return value + 0 * mask;
}

long scaled_sum(const long *v, int count)
{
    long total = 0;
    for (int i = 0; i < count; i++)
        total += 3 * v[i];
    return total;
}

static long doubled(long x)
{
    return 2 * x + 1;
}

static long tripled(long x)
{
    return 3 * x - 1;
}

long (*operations[2])(long) = {doubled, tripled}; /* writable: the calls stay indirect */

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    long v[4] = {n, 2, 3, argc};
    long last = 0, total = 0;
    for (int i = 0; i < n; i++) {
        total += operations[i & 1](i);
        last = keep_last(total, 1, 17, total);
    }
    printf("%ld %ld %ld\n", last, total, scaled_sum(v, 4));
    return 0;
}
