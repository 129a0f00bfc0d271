/* Loops of a compile-time length entered only under an if: the compilers read their trip
   count from the binary (constant start and bound), but each runs only when its block does.
   The first runs in reps - 3 of the reps passes; the second under a data guard that is never
   true (undefined statically unless annotated). */
#include <stdio.h>
#include <stdlib.h>

#define WIDTH 4000

static double left[WIDTH], right[WIDTH];

int main(int argc, char **argv) {
#pragma perfcast probability(1)
    int reps = argc > 1 ? atoi(argv[1]) : 10;
    double total = 0.0;
    for (int pass = 0; pass < reps; pass++) {
        if (pass >= 3) {
            for (int i = 0; i < WIDTH; i++)
                left[i] = right[i] + pass;
        }
    }
    for (int i = 0; i < WIDTH; i++)
        total += left[i];
    /* DATA GUARD */
    if (total < 0.0) {
        for (int i = 0; i < WIDTH; i++)
            right[i] = 2.0 * left[i];
    }
    printf("%f\n", total);
    return 0;
}
