/* Strided steps, descending loops and != guards. */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  long sum = 0;
  for (int i = 0; i < n; i += 3) {
    sum += i;
  }
  for (int i = 1; i <= n; i += 4) {
    sum += i;
  }
  for (int i = n; i > 0; i -= 2) {
    sum += i;
  }
  for (int i = n; i >= 0; i -= 5) {
    sum += i;
  }
  for (int i = 0; i != n; i++) {
    sum += i;
  }
  for (int i = n; i != 0; --i) {
    sum += i;
  }
  for (int i = 0; i < n; i += 2) {
    for (int j = i; j < n; j++) {
      sum += j;
    }
  }
  for (int i = 0; i < n; i = i + 7) {
    for (int j = 0; j < n; j += 2) {
      sum += j;
    }
  }
  for (int i = 0; i < n; i++) {
    for (int j = i; j < n; j += 2) {
      sum += j;
    }
  }
  for (int i = 0; i < n; i += 3) {
    for (int j = 0; j <= i; j += 4) {
      sum += j;
    }
  }
  return (int)(sum & 1);
}
