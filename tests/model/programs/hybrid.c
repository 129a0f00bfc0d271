/* A program for the hybrid-modeling tests: two kernels the static analysis counts exactly and one
 * whose trip count depends on data (undef), reached by n only. */
#include <stdlib.h>

volatile double sink;

void stencil(int n) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) sink += i * j;
}

void sweep(int m) {
    for (int i = 0; i < m; i++) sink += i;
}

void lookup(int n, const int *next) {
    int k = 0;
    while (next[k] >= 0 && next[k] < n) k = next[k];
    sink += k;
}

int main(int argc, char **argv) {
    int n = atoi(argv[1]);
    int m = atoi(argv[2]);
    int *next = calloc((size_t)n + 1, sizeof(int));
    stencil(n);
    sweep(m);
    lookup(n, next);
    free(next);
    return 0;
}
