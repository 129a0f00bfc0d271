/* Tricky control flow for the feature rewriter: macros, nested loops, early return, goto,
   break/continue, comma expressions, do-while, for(;;), switch. Written for perfcast tests. */
#include <stdio.h>
#include <stdlib.h>

#define SQUARE(x) ((x) * (x))
#define LIMIT 4
#define REPEAT(n) for (int r_ = 0; r_ < (n); r_++)
#define SET(v) v = 7

static int early(int k) {
    int acc = 0;
    for (int i = 0; i < 10; i++) {
        if (i == k)
            return acc;
        acc += i;
    }
    return -1;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 5;
    long total = 0;
    int a, b;
    a = 1, b = 2;
    SET(a);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < LIMIT; j++) {
            if (j == 2)
                continue;
            if (i * j > 6)
                break;
            total += SQUARE(i + j);
        }
    }
    int k = 0;
    do {
        k++;
    } while (k < 3);
    for (;;) {
        if (++k > 6) break;
    }
    int g = 0;
again:
    g++;
    if (g < 3)
        goto again;
    REPEAT(2) total += 1;
    while (total > 1000) total /= 2;
    int e = early(3);
#pragma perfcast features_end
    switch (n) {
    case 5: b = 10; break;
    default: b = 20;
    }
    printf("%ld %d %d %d %d %d\n", total, a, b, k, g, e);
    return 0;
}
