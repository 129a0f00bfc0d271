/* Pairs (i, j) with j > i over n points, the inner loop empty in the last outer iteration
   (an n-body energy's shape): clang tests the inner loop's trip before its set-up. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static double pos[64][3], mass[64];

__attribute__((noinline)) double pair_energy(int n)
{
    double e = 0.0;
    for (int i = 0; i < n; i++) {
        e += 0.5 * mass[i] * mass[i];
        for (int j = i + 1; j < n; j++) {
            double dx = pos[i][0] - pos[j][0], dy = pos[i][1] - pos[j][1];
            double dz = pos[i][2] - pos[j][2];
            e -= mass[i] * mass[j] / (1.0 + dx * dx + dy * dy + dz * dz);
        }
    }
    return e;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    for (int i = 0; i < 64; i++) {
        mass[i] = 1.0 + i % 7;
        for (int k = 0; k < 3; k++)
            pos[i][k] = (i * 7 + k * 3) % 11;
    }
    printf("%f\n", pair_energy(n));
    return 0;
}
