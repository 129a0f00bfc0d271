/* Unoptimized loop nests that repeat code within one pass: a call first in a 2-D body, loop
   counters declared register, a 3-D array walk, rows of an array parameter (each row index
   multiplied by a constant with shifts and adds). */
#include <stdio.h>
#include <stdlib.h>

#define R 12
#define C 20
static long grid[R][C];
static double cube[5][7][9];
static int state = 3;

static int draw(void)
{
    state = (state * 97 + 13) % 1021;
    return state;
}

void fill_grid(int rows)
{
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < C; j++)
            grid[i][j] = draw();
}

long trace_products(int rows)
{
    register int i, j;
    long total = 0;
    for (i = 0; i < rows; i++)
        for (j = 0; j < C; j++)
            total += grid[i][j] * grid[i % R][C - 1 - j];
    return total;
}

void spread(int a, int b, int c, const double *line)
{
    for (int x = 0; x < a; x++)
        for (int y = 0; y < b; y++)
            for (int z = 0; z < c; z++)
                cube[x][y][z] = line[z];
}

void column_means(int rows, long data[R][C], double mean[C])
{
    for (int j = 0; j < C; j++) {
        mean[j] = 0.0;
        for (int i = 0; i < rows; i++)
            mean[j] += data[i][j];
        mean[j] /= rows;
    }
}

int main(int argc, char **argv)
{
    int rows = atoi(argv[1]);
    double line[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, mean[C];
    fill_grid(rows);
    spread(5, 7, 9, line);
    column_means(rows, grid, mean);
    printf("%ld %f %f\n", trace_products(rows), cube[4][6][8], mean[3]);
    return 0;
}
