/* Guards that test a remainder of loop variables, in the style of PolyBench's dump loops
   (`if ((i * n + j) % 20 == 0) fprintf(...)`): over one loop, over the flattened index of a
   full nest, as `!=` from a non-zero start, and as a plain value over a loop of step 2. */
#include <stdio.h>
#include <stdlib.h>

double table[256][256];
double total;

void dump_flat(int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            if ((i * n + j) % 20 == 0)
                total += 1.0;
            total += table[i][j];
        }
}

void dump_rows(int n)
{
    for (int i = 0; i < n; i++) {
        if (i % 20 == 0)
            total += 2.0;
        total += table[i][0];
    }
}

void skip_some(int n)
{
    for (int i = 3; i < n; i++) {
        if (i % 7 != 2)
            total += table[i][1];
    }
}

void odd_offsets(int n)
{
    for (int i = 0; i < n; i += 2) {
        if ((i + 1) % 3)
            total += table[i][2];
    }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    for (int r = 0; r < 3; r++) {
        dump_flat(n);
        dump_rows(n);
        skip_some(n);
        odd_offsets(n);
    }
    printf("%f\n", total);
    return 0;
}
