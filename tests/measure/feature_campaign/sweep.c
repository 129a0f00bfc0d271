/* A small program for the features campaign test (perfcast, BSD-3-Clause): the work depends
 * on a size, an algorithm chosen by name and a real-valued number of rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double sweep(int n, int quick) {
    double sum = 0.0;
    int steps = quick ? n : n * (n / 8) + 1;
    for (int i = 0; i < steps; i++) {
        if (i % 3 == 0)
            sum += i * 0.5;
        else
            sum -= 1.0;
    }
    return sum;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: sweep N ALGORITHM ROUNDS\n");
        return 2;
    }
    int n = atoi(argv[1]);
    int quick = strcmp(argv[2], "quick") == 0;
    int rounds = (int)(atof(argv[3]) * 4);
    double total = 0.0;
    for (int r = 0; r < rounds; r++)
        total += sweep(n, quick);
    printf("%g\n", total);
    return 0;
}
