/* Affine if conditions inside loops, their else branches, and parameter-only guards. */
#include <stdlib.h>

static long sink;

void visit(int v) {
  sink += v;
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) {
      if (j <= i) {
        visit(j);
      } else {
        for (int k = 0; k < m; k++) {
          sink += k;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (i < m) {
      for (int j = 0; j < i; j++) {
        sink += j;
      }
    }
  }
  for (int i = 0; i < n; i++) {
    if (i >= 2 && i < n - 1) {
      visit(i);
    }
    if (i != 3) {
      for (int j = 0; j < 2; j++) {
        sink += j;
      }
    }
  }
  if (n > 10) {
    for (int i = 0; i < m; i++) {
      sink += i;
    }
  }
  for (int i = 0; i < n - 5; i++) {
    sink += i;
  }
  return (int)(sink & 1);
}
