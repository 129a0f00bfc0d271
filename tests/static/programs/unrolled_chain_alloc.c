/* The allocator of unrolled_chain.c, in a file of its own so that the compiler cannot see
   that the two arrays do not overlap. */
#include <stdlib.h>

void *chain_alloc(size_t bytes)
{
  return malloc(bytes);
}
