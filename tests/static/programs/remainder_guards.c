/* Remainder and division tests the static analysis counts (issue 20, J5 and J9 of the fifth
   round): PolyBench's dump guard `(i * m + j) % 20` with m a compile-time size passed down
   as an argument, its 3-D form over three loops, a bound computed by an unsigned (size_t)
   division as in md5, and a division of an argument that a call may pass negative.
   Usage: remainder_guards LEN NR NQ NP */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#ifndef M
#define M 17
#endif

long hits;
uint32_t h;

static void __attribute__ ((noinline)) dump_square (int m)
{
  int i, j;
  for (i = 0; i < m; i++)
    for (j = 0; j < m; j++)
      if ((i * m + j) % 20 == 0)
        hits++;
}

static void __attribute__ ((noinline)) dump_cube (int nr, int nq, int np)
{
  int i, j, k;
  for (i = 0; i < nr; i++)
    for (j = 0; j < nq; j++)
      for (k = 0; k < np; k++)
        if ((i * nq * np + j * np + k) % 20 == 0)
          hits++;
}

static void __attribute__ ((noinline)) blocks (const uint8_t *msg, size_t initial_len)
{
  int new_len = ((((initial_len + 8) / 64) + 1) * 64) - 8;
  int offset;
  for (offset = 0; offset < new_len; offset += 64)
    h = h * 31 + msg[offset];
}

static void __attribute__ ((noinline)) halves (int count)
{
  int i;
  for (i = 0; i < count / 2; i++)
    h = h * 31 + i;
}

int main (int argc, char **argv)
{
  int len = atoi (argv[1]), nr = atoi (argv[2]), nq = atoi (argv[3]), np = atoi (argv[4]);
  uint8_t *msg = calloc (len + 128, 1);
  dump_square (M);
  dump_cube (nr, nq, np);
  blocks (msg, len);
  halves (nr - 7);
  printf ("%ld %u\n", hits, h);
  free (msg);
  return 0;
}
