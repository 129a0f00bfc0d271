/* Trapezoidal nests: inner ranges shift with the outer variable. */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  long sum = 0;
  for (int i = 0; i < n; i++) {
    for (int j = i; j < i + m; j++) {
      sum += j;
    }
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < m + i; j++) {
      sum += j;
    }
  }
  for (int i = 1; i <= n; i++) {
    for (int j = i; j <= n + m; j++) {
      sum -= 1;
    }
  }
  return (int)(sum & 1);
}
