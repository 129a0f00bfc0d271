/* A second-order recurrence along each row, inlined into main, sizes from the command line:
   gcc -O1 moves the loop-carried copy (older = old) to the top of the row loop and enters
   the loop below it. */
#include <stdio.h>
#include <stdlib.h>

static double signal[40][40], smooth[40][40];

static void rows(int w, int h, double gain, double echo)
{
    for (int r = 0; r < w; r++) {
        double old = 0.0, older = 0.0;
        for (int c = 0; c < h; c++) {
            smooth[r][c] = gain * signal[r][c] + echo * old - 0.25 * older;
            older = old;
            old = smooth[r][c];
        }
    }
}

int main(int argc, char **argv)
{
    int w = atoi(argv[1]), h = atoi(argv[2]);
    for (int r = 0; r < 40; r++)
        for (int c = 0; c < 40; c++)
            signal[r][c] = (r * 13 + c * 7) % 17;
    rows(w, h, 0.5, 0.3);
    printf("%f\n", smooth[w - 1][h - 1]);
    return 0;
}
