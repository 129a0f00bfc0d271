/* Statements that come from macros: glibc's assert expands to an `if` spelled in <assert.h>,
 * CHECK to a do-while spelled further up this file. The instrumentor must leave both alone
 * (their tokens are not at the use) and still count the loop and branch written here. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                               \
    do {                                                                                       \
        if ((x) < 0)                                                                           \
            return -1;                                                                         \
    } while (0)

static int work(int n) {
    int sum = 0, i;
    assert(n >= 0);
    CHECK(n);
    for (i = 0; i < n; i++)
        if (i % 3 == 0)
            sum += i;
    return sum;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 10;
    printf("%d\n", work(n));
    return 0;
}
