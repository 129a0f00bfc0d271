/* Loop bounds held in heap struct fields, as real codes keep their configuration: the sizes
 * are read into a struct in one function and bound loops in another, where the static
 * analysis no longer sees which parameter they hold. */
#include <stdlib.h>

struct config {
    int rows;
    int cols;
};

volatile double sink;

struct config *read_config(char **argv) {
    struct config *cfg = malloc(sizeof *cfg);
    cfg->rows = (int)strtol(argv[1], NULL, 10);
    cfg->cols = (int)strtol(argv[2], NULL, 10);
    return cfg;
}

void relax(const struct config *cfg) {
    for (int i = 0; i < cfg->rows; i++)
        for (int j = 0; j < cfg->cols; j++) sink += i * j;
}

void halve(const struct config *cfg) {
    for (int i = 0; i < cfg->rows; i++) sink *= 0.5;
}

void scale(int n) {
    for (int i = 0; i < n; i++) sink *= 0.5;
}

int main(int argc, char **argv) {
    struct config *cfg = read_config(argv);
    relax(cfg);
    halve(cfg);
    scale(cfg->rows);
    free(cfg);
    return argc > 0 ? 0 : 1;
}
