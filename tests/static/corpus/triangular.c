/* Triangular and tetrahedral nests over n (read from argv). */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  long sum = 0;
  for (int i = 0; i < n; i++) {
    for (int j = i + 1; j < n; j++) {
      sum += i * j;
    }
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j <= i; j++) {
      for (int k = j; k < i; k++) {
        sum += k;
      }
    }
  }
  for (int i = n; i > 0; i--) {
    for (int j = 1; j <= i; j++) {
      sum -= j;
    }
  }
  return (int)(sum & 1);
}
