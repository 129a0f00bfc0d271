/* Mixed forms: descending guards, derived bounds, formal conditions, flipped guards. */
#include <stdlib.h>

int total;
long sink;

void tail(int len) {
  if (len > 2) {
    for (int t = 0; t < len; t++) {
      sink += t;
    }
  }
}

void spread(void) {
  for (int s = 0; s < total; s++) {
    sink += s;
  }
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  int half = n / 2;
  int lim;
  lim = 2 * n + 1;
  total = n * m;
  for (int i = n; i > 0; i--) {
    if (i <= m) {
      sink += i;
      for (int j = 0; j < 2; j++) {
        sink += j;
      }
    }
  }
  for (int i = 0; half > i; i = i + 1) {
    for (int j = 0; j < n; j = 2 + j) {
      if (i < 3) {
        for (int k = 0; k < 2; k++) {
          sink += k;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) {
    int j = 0;
    do {
      j++;
    } while (j < i);
  }
  for (int i = 0; i < lim; i++) {
    tail(i);
  }
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < i; j++) {
      for (int k = 0; k < i; k++) {
        if (k < j) {
          spread();
        }
      }
    }
  }
  int w = n;
  while (w != 0) {
    w--;
  }
  for (int i = 0; i < n; i++) {
    if (!(i - 2) || i == m) {
      sink += i;
    }
  }
  return (int)(sink & 1);
}
