/*
 * perfcast's stand-in for Caliper's annotation header: Caliper-annotated code builds unchanged
 * with `perfcast instrument --cflags` (which puts this directory first on the include path) and
 * records its regions with perfcast. Only the annotation macros and the begin/end region calls
 * are mapped; Caliper's attributes, services and configuration do nothing here.
 */
#ifndef PERFCAST_CALI_H
#define PERFCAST_CALI_H

#include "../perfcast.h"

#define CALI_MARK_BEGIN(name) perfcast_region_begin_dynamic(name)
#define CALI_MARK_END(name) perfcast_region_end_dynamic(name)
#define CALI_MARK_FUNCTION_BEGIN perfcast_region_begin(__func__)
#define CALI_MARK_FUNCTION_END perfcast_region_end(__func__)
#define CALI_MARK_LOOP_BEGIN(loop_id, name)                                                     \
    const char *perfcast_loop_##loop_id = (name);                                               \
    perfcast_region_begin_dynamic(perfcast_loop_##loop_id)
#define CALI_MARK_LOOP_END(loop_id) perfcast_region_end_dynamic(perfcast_loop_##loop_id)
#define CALI_MARK_PHASE_BEGIN(name) perfcast_region_begin_dynamic(name)
#define CALI_MARK_PHASE_END(name) perfcast_region_end_dynamic(name)
/* not a block: the statement may declare a variable used after it, as with Caliper */
#define CALI_WRAP_STATEMENT(name, statement)                                                    \
    perfcast_region_begin_dynamic(name);                                                        \
    statement;                                                                                  \
    perfcast_region_end_dynamic(name)
#define CALI_MARK_ITERATION_BEGIN(loop_id, iter) ((void)0)
#define CALI_MARK_ITERATION_END(loop_id) ((void)0)

static __inline__ void cali_begin_region(const char *name) { perfcast_region_begin_dynamic(name); }
static __inline__ void cali_end_region(const char *name) { perfcast_region_end_dynamic(name); }
static __inline__ void cali_init(void) {}

#ifdef __cplusplus
struct perfcast_scoped_region {
    const char *name;
    explicit perfcast_scoped_region(const char *region) : name(region) {
        perfcast_region_begin_dynamic(name);
    }
    ~perfcast_scoped_region() { perfcast_region_end_dynamic(name); }
    perfcast_scoped_region(const perfcast_scoped_region &) = delete;
    perfcast_scoped_region &operator=(const perfcast_scoped_region &) = delete;
};
#define PERFCAST_CALI_CONCAT2(a, b) a##b
#define PERFCAST_CALI_CONCAT(a, b) PERFCAST_CALI_CONCAT2(a, b)
#define CALI_CXX_MARK_FUNCTION perfcast_scoped_region perfcast_function_region_(__func__)
#define CALI_CXX_MARK_SCOPE(name)                                                               \
    perfcast_scoped_region PERFCAST_CALI_CONCAT(perfcast_scope_region_, __LINE__)(name)
#define CALI_CXX_MARK_LOOP_BEGIN(loop_id, name) CALI_MARK_LOOP_BEGIN(loop_id, name)
#define CALI_CXX_MARK_LOOP_END(loop_id) CALI_MARK_LOOP_END(loop_id)
#define CALI_CXX_MARK_LOOP_ITERATION(loop_id, iter) ((void)0)
#endif

#endif /* PERFCAST_CALI_H */
