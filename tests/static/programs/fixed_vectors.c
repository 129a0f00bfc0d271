/* Sizes fixed at compile time around loops the compiler vectorizes: an update y += a*x over
   N elements and a row sum over an N x M array. */
#include <stdio.h>
#ifndef N
#define N 37
#endif
#ifndef M
#define M 23
#endif
static double x[N], y[N], A[N][M], rows[N];

__attribute__((noinline)) void update(double a)
{
    for (int i = 0; i < N; i++)
        y[i] = a * x[i] + y[i];
}

__attribute__((noinline)) void row_sums(void)
{
    for (int i = 0; i < N; i++) {
        double s = 0.0;
        for (int j = 0; j < M; j++)
            s += A[i][j];
        rows[i] = s;
    }
}

__attribute__((noinline)) void scale(double a)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < M; j++)
            A[i][j] *= a;
}

int main(void)
{
    for (int i = 0; i < N; i++) {
        x[i] = i;
        y[i] = 1.0;
        for (int j = 0; j < M; j++)
            A[i][j] = i + j;
    }
    update(0.5);
    scale(1.5);
    row_sums();
    printf("%f %f\n", y[N - 1], rows[N - 1]);
    return 0;
}
