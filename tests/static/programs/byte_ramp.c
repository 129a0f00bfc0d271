/* A byte loop over a run-time length, which clang -O2/-O3 vectorizes 16 bytes per pass with an
   8-byte epilogue loop and a scalar tail, sending short lengths past the vector loops straight
   to the scalar tail (issue 20, J10; written here). Usage: byte_ramp reps len */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned ramp(int reps, int len) {
  unsigned total = 0;
  for (int r = 0; r < reps; r++) {
    unsigned char *buf = malloc(len + 1);
    for (int i = 0; i < len; i++)
      buf[i] = (unsigned char)(3 * i);
    total += buf[len / 2];
    free(buf);
  }
  return total;
}

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  printf("%u\n", ramp(atoi(argv[1]), atoi(argv[2])));
  return 0;
}
