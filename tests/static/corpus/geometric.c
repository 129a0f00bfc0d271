/* Geometric updates giving logarithmic counts. */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  long sum = 0;
  for (int i = 1; i < n; i *= 2) {
    sum += i;
  }
  for (int i = 1; i <= n; i <<= 1) {
    sum += i;
  }
  for (int i = n; i > 0; i /= 2) {
    sum += i;
  }
  for (int i = n; i >= 1; i >>= 1) {
    sum += i;
  }
  for (int i = 3; i < n; i *= 3) {
    sum += i;
  }
  for (int j = 1; j < n; j = j * 2) {
    for (int k = j; k < n; k++) {
      sum += k;
    }
  }
  for (int i = 0; i < n; i++) {
    for (int s = 1; s < n; s *= 2) {
      sum += s;
    }
  }
  for (int s = 1; s < n; s *= 2) {
    if (s >= 5) {
      for (int k = 0; k < 3; k++) {
        sum += k;
      }
    }
    if (s <= n / 3 + 1) {
      for (int k = 0; k < s; k++) {
        sum += k;
      }
    }
  }
  return (int)(sum & 1);
}
