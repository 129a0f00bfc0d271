/* Error checks the counting takes as never run: calls of noreturn functions (declared so, or
   ending in abort), reports to stderr, and failure statuses returned from main.
   Usage: error_paths N */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noreturn)) void fail(const char *message) {
  fprintf(stderr, "%s\n", message);
  exit(3);
}

void die(const char *message) {
  fputs(message, stderr);
  abort();
}

double sum(const double *a, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] < 0)
      fail("negative");
    if (a[i] > 1e300)
      die("huge");
    s += a[i];
  }
  return s;
}

int main(int argc, char **argv) {
  if (argc != 2)
    return 2;
  int n = atoi(argv[1]);
  double *a = malloc(n * sizeof *a);
  if (!a) {
    perror("malloc");
    return EXIT_FAILURE;
  }
  for (int i = 0; i < n; i++)
    a[i] = i;
  printf("%f\n", sum(a, n));
  free(a);
  return 0;
}
