/* Copies and zeroing that gcc turns into rep movs / rep stos (perfcast test program, issue 20 F23).
   copy_blocks copies a 50-double struct and zero_rows clears a 64-double array in every
   iteration (rcx is a constant); copy_run_time copies n doubles, a rep movsb with rcx = 8 n when
   built with -minline-all-stringops -mstringop-strategy=rep_byte. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct block {
  double values[50];
};

static struct block source_block;

__attribute__((noinline)) double copy_blocks(int reps) {
  struct block local;
  double total = 0.0;
  for (int r = 0; r < reps; r++) {
    local = source_block;
    local.values[r % 50] += 1.0;
    total += local.values[3];
  }
  return total;
}

__attribute__((noinline)) double zero_rows(int reps) {
  double row[64];
  double total = 0.0;
  for (int r = 0; r < reps; r++) {
    memset(row, 0, sizeof row);
    row[r % 64] = r;
    total += row[5] + row[r % 64];
  }
  return total;
}

__attribute__((noinline)) void copy_run_time(double *to, const double *from, int n) {
  memcpy(to, from, n * sizeof *to);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 10;
  int n = argc > 2 ? atoi(argv[2]) : 100;
  double *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b);
  for (int i = 0; i < 50; i++) source_block.values[i] = i;
  double total = copy_blocks(reps) + zero_rows(reps);
  for (int r = 0; r < reps; r++) copy_run_time(b, a, n);
  printf("%f %f\n", total, b[0]);
  free(a);
  free(b);
  return 0;
}
