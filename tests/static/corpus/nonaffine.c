/* Loops whose counts cannot be derived statically: undef, but for the i % 3 == 0 guard. */
#include <stdlib.h>

int limit(int n) {
  return n / 3;
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int *rowstr = malloc(sizeof(int) * (n + 1));
  long sum = 0;
  for (int i = 0; i <= n; i++) {
    rowstr[i] = i * 2;
  }
  for (int j = 0; j < n; j++) {
    for (int k = rowstr[j]; k < rowstr[j + 1]; k++) {
      sum += k;
    }
  }
  for (int i = 0; i < limit(n); i++) {
    sum += i;
  }
  for (int i = 2; i < n; i = i * i) {
    sum += i;
  }
  for (int i = 0; i < n; i++) {
    if (i * i > n) {
      break;
    }
  }
  for (int i = 0; i < n; i++) {
    if (rowstr[i] == 4) {
      i++;
    }
  }
  int v = n;
  while (v != 1) {
    v = (v % 2 == 0) ? v / 2 : 3 * v + 1;
  }
  for (int i = 0; i < n; i++) {
    if (i % 3 == 0) {
      for (int k = 0; k < 2; k++) {
        sum += k;
      }
    }
  }
  free(rowstr);
  return (int)(sum & 1);
}
