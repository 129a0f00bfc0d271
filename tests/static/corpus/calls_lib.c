/* Second file of the call test. */
extern long total;

void axpy(int len) {
  for (int k = 0; k < len; k++) {
    total += k;
  }
}

void sweep(int rows, int cols) {
  for (int r = 0; r < rows; r++) {
    axpy(cols);
    for (int c = r; c < rows; c++) {
      axpy(2);
    }
  }
}
