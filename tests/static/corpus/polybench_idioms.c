/* Idioms of benchmark kernels around their loops: statement macros wrapped in
   do { ... } while (0), an induction variable set before its for, a bound behind a macro
   that keeps its second argument, loops written by a FOR macro, and kernels called through
   function pointers. */
#include <stdlib.h>

#define POLYBENCH_LOOP_BOUND(x, y) y
#define _PB_N POLYBENCH_LOOP_BOUND(N, n)
#define BOUND(a, b) b
#define FOR(i, n) for ((i) = 0; (i) < (n); (i)++)
#define SWAP(a, b)       \
  do {                   \
    double swap_ = (a);  \
    (a) = (b);           \
    (b) = swap_;         \
  } while (0)
#define CLAMP(v, lo)     \
  do {                   \
    if ((v) < (lo)) {    \
      (v) = (lo);        \
    }                    \
  } while (0)

static void reverse(int n, double *x) {
  int i;
  for (i = 0; i < _PB_N / 2; i++) {
    SWAP(x[i], x[n - 1 - i]);
    CLAMP(x[i], 0.0);
  }
}

static void pre_initialised(int n, double *x) {
  int i, j;
  i = 0;
  for (; i < BOUND(N, n); i++) {
    j = i;
    for (; j < _PB_N; j += 3) {
      x[i] += x[j];
    }
  }
  do {
    for (i = 0; i <= _PB_N; i++) {
      x[0] += 1.0;
    }
  } while (0);
}

static void fill(int n, double *x) {
  int i, j;
  FOR(i, _PB_N) {
    FOR(j, i) {
      x[i] += 1.0;
    }
  }
}

static void scale(int n, double *x) {
  int i;
  for (i = 0; i < _PB_N; i++) {
    x[i] *= 2.0;
  }
}

static void shift(int n, double *x) {
  int i;
  for (i = 1; i < _PB_N; i++) {
    x[i] += x[i - 1];
  }
}

static void (*stage)(int, double *) = scale;

int main(int argc, char **argv) {
  int n = atoi(argv[1]);
  int sweeps = atoi(argv[2]);
  int s;
  void (*step)(int, double *);
  double *x = calloc((size_t)n + 1, sizeof(double));
  step = &shift;
  reverse(n, x);
  fill(n, x);
  pre_initialised(n, x);
  for (s = 0; s < sweeps; s++) {
    stage(n, x);
    (*step)(n, x);
  }
  step(n, x);
  free(x);
  return 0;
}
