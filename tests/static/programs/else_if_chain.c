/* An else-if chain in a loop (md5's round selection, Embench md5sum): the condition of each
   `} else if (c) {` runs whenever the else block it opens does (static33).
   Usage: else_if_chain N */
#include <stdio.h>
#include <stdlib.h>
unsigned h;

void chain (int n)
{
  int o;
  for (o = 0; o < n; o++)
    {
      unsigned i;
      for (i = 0; i < 64; i++)
        {
          unsigned f;
          if (i < 16) {
              f = i * 3;
          } else if (i < 32) {
              f = i * 5;
          } else if (i < 48) {
              f = i ^ 7;
          } else {
              f = i + 9;
          }
          h = h * 31 + f;
        }
    }
}
int main (int argc, char **argv)
{
  chain (atoi (argv[1]));
  printf ("%u\n", h);
  return 0;
}
