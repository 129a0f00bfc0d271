/* Two outputs of a filter per pass over the taps, reading the signal one element ahead
   (Embench edn's fir_no_red_ld). clang -O1 starts the tap counter at -2
   (0xfffffffffffffffe) and leaves on an unsigned `jb`: its first update wraps it to 0.
   Usage: paired_taps OUTPUTS (even) */
#include <stdio.h>
#include <stdlib.h>

#define TAPS 32

static short signal_[1100], taps[TAPS + 2];
static long out[1100];

__attribute__((noinline)) void paired_filter(long outputs)
{
  for (long j = 0; j < outputs; j += 2) {
    long even = 0, odd = 0;
    short ahead = signal_[j], next;
    for (long t = 0; t < TAPS; t += 2) {
      next = signal_[j + t + 1];
      even += ahead * taps[t];
      odd += next * taps[t];
      ahead = signal_[j + t + 2];
      even += next * taps[t + 1];
      odd += ahead * taps[t + 1];
    }
    out[j] = even >> 15;
    out[j + 1] = odd >> 15;
  }
}

int main(int argc, char **argv)
{
  long outputs = argc > 1 ? atol(argv[1]) : 100; /* at most 1000 */
  for (int i = 0; i < 1100; i++)
    signal_[i] = (short) (i * 7);
  for (int i = 0; i < TAPS + 2; i++)
    taps[i] = (short) (i - 3);
  paired_filter(outputs);
  printf("%ld %ld\n", out[0], out[outputs - 1]);
  return 0;
}
