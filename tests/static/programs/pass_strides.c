/* A row pass and a column pass over an 8x8 block in one outer loop of two passes, the pass's
   strides held in variables (the shape of a separable DCT): gcc -O3 versions the inner loop
   for a unit stride, one copy per pass. */
#include <stdio.h>
#include <stdlib.h>

static short block[256];

__attribute__((noinline)) void two_pass(short *v, const short *w)
{
    long t[8];
    int pass, step, next, shift;
    for (pass = 1, step = 1, next = 8, shift = 0; pass <= 8; pass += 7, step += 7, next -= 7, shift += 2, v -= 64)
        for (int i = 0; i < 8; i++, v += next) {
            for (int j = 0; j < 4; j++) {
                t[j] = v[step * j] + v[step * (7 - j)];
                t[7 - j] = v[step * j] - v[step * (7 - j)];
            }
            long even = t[0] + t[3], odd = t[1] + t[2];
            v[0] = (short)((even + odd) >> shift);
            v[4 * step] = (short)((even - odd) >> shift);
            v[2 * step] = (short)(((t[0] - t[3]) * w[0] + (t[1] - t[2]) * w[1]) >> (shift + 8));
            v[6 * step] = (short)(((t[0] - t[3]) * w[2] - (t[1] - t[2]) * w[3]) >> (shift + 8));
            v[1 * step] = (short)((t[4] * w[4] + t[7] * w[5]) >> (shift + 8));
            v[3 * step] = (short)((t[5] * w[6] + t[6] * w[7]) >> (shift + 8));
            v[5 * step] = (short)((t[5] * w[7] - t[6] * w[6]) >> (shift + 8));
            v[7 * step] = (short)((t[4] * w[5] - t[7] * w[4]) >> (shift + 8));
        }
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 3;
    short w[8] = {181, 139, 57, 98, 251, 50, 213, 142};
    long sum = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < 256; i++)
            block[i] = (short)((i * 7 + r) % 97);
        two_pass(block, w);
        sum += block[r % 64];
    }
    printf("%ld\n", sum);
    return 0;
}
