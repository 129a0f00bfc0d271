/* while and do loops of the supported forms. */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  long sum = 0;
  int i = 0;
  while (i < n) {
    sum += i;
    i += 2;
  }
  int j = n;
  while (j > 1) {
    j = j / 2;
    for (int k = 0; k < j; k++) {
      sum += k;
    }
  }
  int d = 0;
  do {
    sum += d;
    d++;
  } while (d < n);
  int e = 1;
  do {
    e *= 2;
  } while (e <= n);
  int t = 0;
  while (t < n) {
    t++;
    for (int k = 0; k < t; k++) {
      sum += k;
    }
  }
  return (int)(sum & 1);
}
