/*
 * Turns a program's existing PERFCAST_REGION_BEGIN/END regions into online regions
 * (perfcast_online.h) without editing its source: compile with
 *
 *   -include perfcast_online_regions.h -DPERFCAST_ONLINE_NAMES='"n,p"' \
 *   -DPERFCAST_ONLINE_VALUES='n, size'
 *
 * and perfcast_online.c instead of perfcast.c. PERFCAST_ONLINE_VALUES is evaluated where each
 * region begins, so the variables it names must be in scope at every region of the program
 * (the predictor values of the kernel: problem size, ranks, ...). The header takes the place
 * of perfcast.h (it defines its include guard), so the program's own #include "perfcast.h"
 * adds nothing; PERFCAST_FINALIZE and the _DYNAMIC variants are not online regions and
 * compile to nothing.
 */
#ifndef PERFCAST_ONLINE_REGIONS_H
#define PERFCAST_ONLINE_REGIONS_H
#define PERFCAST_H /* perfcast.h must not redefine the region macros */

#include "perfcast_online.h"

#if !defined(PERFCAST_ONLINE_NAMES) || !defined(PERFCAST_ONLINE_VALUES)
#error "define PERFCAST_ONLINE_NAMES (\"n,p\") and PERFCAST_ONLINE_VALUES (n, p)"
#endif

#define PERFCAST_REGION_BEGIN(name)                                                              \
    PERFCAST_ONLINE_BEGIN(name, PERFCAST_ONLINE_NAMES, PERFCAST_ONLINE_VALUES)
#define PERFCAST_REGION_END(name) PERFCAST_ONLINE_END(name)
#define PERFCAST_REGION_BEGIN_DYNAMIC(name) ((void)0)
#define PERFCAST_REGION_END_DYNAMIC(name) ((void)0)
#define PERFCAST_FINALIZE() ((void)0)

#endif /* PERFCAST_ONLINE_REGIONS_H */
