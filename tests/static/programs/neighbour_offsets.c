/* Neighbour offsets set up in main, as stencil codes do (Rodinia srad), over lengths read at run
   time: gcc -O3 vectorizes each loop 4 ints per pass and finishes it with up to 3 straight-line
   copies (issue 20, K11; written here). Usage: neighbour_offsets rows cols */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  if (argc != 3)
    return 2;
  int rows = atoi(argv[1]), cols = atoi(argv[2]);
  int *up = malloc(sizeof(int) * rows), *down = malloc(sizeof(int) * rows);
  int *left = malloc(sizeof(int) * cols);
  for (int i = 0; i < rows; i++) {
    up[i] = i - 1;
    down[i] = i + 1;
  }
  for (int j = 0; j < cols; j++)
    left[j] = 2 * j - 1;
  up[0] = 0;
  down[rows - 1] = rows - 1;
  left[0] = 0;
  printf("%d %d %d\n", up[rows / 2], down[rows / 3], left[cols / 2]);
  free(up);
  free(down);
  free(left);
  return 0;
}
