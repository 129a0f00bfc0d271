/* Loops whose initialisation and step are comma expressions: the loop variable is assigned
   in one operand, other variables in the others (the shape of a DCT's row/column passes). */
#include <stdio.h>
#include <stdlib.h>

static short block[4096];

__attribute__((noinline)) void passes(short *v, int n)
{
    int k, m, p;
    for (k = 1, m = 0, p = 8; k <= 8; k += 7, m += 1, p -= 7, v += 16)
        for (int i = 0; i < n; i++, v += p % 4)
            v[0] = (short)((v[0] + v[k]) >> m);
}

__attribute__((noinline)) long walk_pairs(int n)
{
    long total = 0;
    int lo, hi;
    lo = 0, hi = n;
    while (lo < hi) {
        total += block[lo] - block[hi];
        lo += 2, total++;
    }
    return total;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    for (int i = 0; i < 4096; i++)
        block[i] = (short)(i % 97);
    passes(block, n);
    printf("%ld\n", walk_pairs(n));
    return 0;
}
