/* perfcast test program (issue 20, static32): a loop of two passes with a long body, whose
   exit test gcc -O2 puts after the body, behind a flag set on the way back (the shape of
   Embench edn's jpegdct). */
#include <stdio.h>
#include <stdlib.h>

short d[4096];

__attribute__((noinline)) void two_passes(int n, const short *r)
{
  long t[8];
  short k, m, s;
  for (k = 1, m = 0, s = 13; k <= 8; k += 7, m += 3, s += 3) {
    for (int i = 0; i < n; i++) {
      short *row = d + 8 * i;
      t[0] = row[0] + row[7 * k % 8];
      t[1] = row[k % 8] - row[6];
      t[2] = row[2] * r[1] + t[0];
      t[3] = row[3] * r[2] - t[1];
      t[4] = (t[0] + t[3]) >> m;
      t[5] = (t[1] - t[2]) >> m;
      t[6] = (short) (t[4] + t[5]) * r[3];
      t[7] = (short) (t[4] - t[5]) * r[4];
      row[0] = (short) ((t[6] + t[2]) >> s);
      row[4 % k] = (short) ((t[7] - t[3]) >> s);
      row[2] = (short) ((t[6] * r[5] + t[1]) >> s);
      row[6] = (short) ((t[7] * r[6] - t[0]) >> s);
      row[1] = (short) (t[0] * r[7] + t[4] * r[8]);
      row[5] = (short) (t[1] * r[9] - t[5] * r[10]);
      row[3] = (short) (t[2] * r[11] + t[6] * r[12]);
      row[7] = (short) (t[3] * r[13] - t[7] * r[14]);
    }
  }
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  short r[16];
  for (int i = 0; i < 16; i++)
    r[i] = (short) (i + 1);
  for (int i = 0; i < 4096; i++)
    d[i] = (short) (i % 251);
  two_passes(n > 512 ? 512 : n, r);
  printf("%d\n", d[n]);
  return 0;
}
