/* Calls across files: counts multiply through call sites and arguments. */
#include <stdlib.h>

void axpy(int len);
void sweep(int rows, int cols);
long total;

void unused(int len) {
  for (int i = 0; i < len; i++) {
    total += i;
  }
}

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int m = atoi(argv[2]);
  for (int i = 0; i < n; i++) {
    axpy(i);
  }
  sweep(n, m);
  axpy(m);
  return (int)(total & 1);
}
