/* An inner loop whose length is a remainder, `5 + i % 94` with i >= 0 (issue 20, verify20f K1;
   Embench tarfind's file names): C's % of a non-negative value is non-negative, so every
   entry runs at least 5 iterations. */
#include <stdio.h>
#include <stdlib.h>

char names[100][100];

static void __attribute__ ((noinline)) fill (void)
{
  for (int i = 0; i < 100; i++) {
    int flen = 5 + i % 94;
    for (int p = 0; p < flen; p++)
      names[i][p] = 'A' + (p * 7 + i) % 26;
  }
}

static int __attribute__ ((noinline)) tail (int n)
{
  int s = 0;
  for (int i = 0; i < n; i++)
    for (int p = 0; p < 9 - i % 4; p++)
      s += names[i % 100][p];
  return s;
}

int main (int argc, char **argv)
{
  int n = atoi (argv[1]);
  fill ();
  printf ("%d\n", tail (n) + names[n - 1][3]);
  return 0;
}
