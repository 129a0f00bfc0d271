/* #pragma perfcast annotations for what the analysis cannot derive. */
#include <stdlib.h>

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int len = atoi(argv[2]);
  int *data = malloc(sizeof(int) * n);
  long sum = 0;
  for (int i = 0; i < n; i++) {
    data[i] = len;
  }
  for (int i = 0; i < n; i++) {
#pragma perfcast symbol(len)
    for (int j = 0; j < data[i]; j++) {
      sum += j;
    }
  }
  int v = 1;
#pragma perfcast count(len)
  while (sum >= 0 && v <= len) {
    v++;
  }
  for (int i = 0; i < n; i++) {
#pragma perfcast probability(1/2)
    if (i % 2 == 0) {
      for (int k = 0; k < 3; k++) {
        sum += k;
      }
    }
  }
  free(data);
  return (int)(sum & 1);
}
