/* perfcast test program (issue 20, static34; verify20f K12, Rodinia backprop's drnd): `leaf`
   is called only by `middle`, which nothing calls: neither ever runs. `kept` is reached only
   through a function pointer held in data, so it is not taken for such code. */
#include <stdio.h>
#include <stdlib.h>

float leaf(void) { return ((float) rand() / (float) 0x7fffffff); }
float middle(void) { return ((leaf() * 2.0f) - 1.0f); }
static float kept(float x) { return x * 3.0f; }
float (*volatile table)(float) = kept;

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  float s = 0;
  for (int i = 0; i < n; i++)
    s += i * 0.5f;
  printf("%f %f\n", s, table(s));
  return 0;
}
