/* perfcast test program (issue 20, static34; verify20f K6/K10): null tests of an allocation's
   result, one that only reports to stderr (Rodinia nw's shape) and one that returns a failure
   constant (Rodinia lud's shape). */
#include <stdio.h>
#include <stdlib.h>

#define RET_FAILURE 1

static int __attribute__((noinline)) checked_sum(int n)
{
  int *v = malloc(n * sizeof(int));
  if (!v)
    fprintf(stderr, "error: cannot allocate memory\n");
  for (int i = 0; i < n; i++)
    v[i] = i;
  int s = v[n - 1];
  free(v);
  return s;
}

static int __attribute__((noinline)) make_matrix(double **out, int n)
{
  double *m;
  m = malloc(sizeof(double) * n * n);
  if (m == NULL)
    return RET_FAILURE;
  for (int i = 0; i < n * n; i++)
    m[i] = 0.5 * i;
  *out = m;
  return 0;
}

int main(int argc, char **argv)
{
  int n = atoi(argv[1]);
  double *matrix = NULL;
  int failed = make_matrix(&matrix, n);
  printf("%d %d %f\n", checked_sum(n), failed, matrix[n]);
  free(matrix);
  return 0;
}
