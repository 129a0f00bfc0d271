/* A loop whose count is a run-time argument, with the code after it a return: gcc -O1 tests
   the count once before the loop and gives the jump past it a copy of the return. */
#include <stdio.h>
#include <stdlib.h>

static unsigned state = 1;

__attribute__((noinline)) unsigned step(void)
{
    state = state * 1103515245u + 12345u;
    return state >> 16;
}

__attribute__((noinline)) int repeat(int rounds)
{
    unsigned r;
    for (int i = 0; i < rounds; i++) {
        state = 1;
        r = step();
    }
    return (int)(r % 32768);
}

__attribute__((noinline)) long sum_twice(const int *v, int n)
{
    long s = 0;
    for (int i = 0; i < 2 * n; i++)
        s += v[i % n];
    return s;
}

int main(int argc, char **argv)
{
    int rounds = atoi(argv[1]);
    int v[64];
    for (int i = 0; i < 64; i++)
        v[i] = i * 3;
    printf("%d %ld\n", repeat(rounds), sum_twice(v, rounds));
    return 0;
}
