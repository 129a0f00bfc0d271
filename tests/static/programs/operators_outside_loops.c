/* Conditional operators and && outside loops (verify20d H9): a run-time choice nobody can
   count, a choice on the parameter n, one annotated with a probability, and a test of two
   tolerances whose false exits the compiler keeps as separate returns.
   Usage: operators_outside_loops n [count] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int within(double x, double y, double tolerance)
{
    return (fabs(x) < tolerance) && (fabs(y) < tolerance) && (fabs(x - y) < tolerance);
}

__attribute__((noinline)) double scaled(double x, int n)
{
    double y = n > 100 ? (x * 2.0 + 1.0) / (x + 3.0) : (x + 5.0) / (x + 0.25);
    return y * n;
}

__attribute__((noinline)) double weighted(double x, int flag)
{
#pragma perfcast probability(p)
    double y = flag ? (x * 3.0 + 1.0) / (x + 7.0) : x;
    return y + 1.0;
}

int main(int argc, char **argv)
{
    int n = atoi(argv[1]);
    int count = argc > 2 ? atoi(argv[2]) : 41;
    double total = 0.0;
    for (int i = 0; i < n; i++)
        total += scaled(i * 0.5, n) + weighted(i * 0.25, i % 3 == 0);
    printf("%f %d %d\n", total, count, within(total, total * 0.5, 1e-3));
    return 0;
}
