/* Parameters as macros, struct members and globals, followed through arithmetic. */
#include <stdlib.h>

#ifndef TOTAL_KEYS
#define TOTAL_KEYS 1024
#endif
#ifndef NUM_PROCS
#define NUM_PROCS 4
#endif
#define NUM_KEYS (TOTAL_KEYS / NUM_PROCS)

struct config {
  int steps;
  int width;
};

int niter;
long acc;

void relax(struct config *cfg) {
  for (int s = 0; s < cfg->steps; s++) {
    for (int x = 1; x < cfg->width - 1; x++) {
      acc += x;
    }
  }
}

int main(int argc, char **argv) {
  struct config cfg;
  cfg.steps = atoi(argv[1]);
  cfg.width = atoi(argv[2]);
  niter = atoi(argv[3]);
  int half = niter / 2;
  for (int i = 0; i < NUM_KEYS; i++) {
    acc += i;
  }
  for (int it = 0; it < half; it++) {
    relax(&cfg);
  }
  return (int)(acc & 1);
}
