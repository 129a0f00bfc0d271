/* A nested if/else in a triangular loop, in the shape of PolyBench nussinov's kernel: the
   inner if's range cannot be shown non-empty, so both arms are measured with --profile; the
   unbraced else arm starts on a line of its own. */
#include <stdio.h>
#include <stdlib.h>

int cells[64][64];

__attribute__((noinline)) void sweep(int n)
{
    for (int i = n - 1; i >= 0; i--)
        for (int j = i + 1; j < n; j++) {
            if (j - 1 >= 0 && i + 1 < n) {
                if (i < j - 1)
                    cells[i][j] = cells[i + 1][j - 1] + 1;
                else
                    cells[i][j] = cells[i + 1][j - 1] + 2;
            }
        }
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    sweep(n);
    printf("%d\n", cells[0][n - 1]);
    return 0;
}
