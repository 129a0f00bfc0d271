/* perfcast's machine probes (compiled at run time by `perfcast probe`).
 *
 *   perfcast_probe memory PATTERN ACCESS BYTES MIN_SECONDS REPETITIONS
 *       PATTERN: stride1 | stride8 | random; ACCESS: load | store. Prints one line per
 *       repetition: "<bytes moved> <seconds>", where bytes moved counts 8 bytes per access.
 *   perfcast_probe fp OP PRECISION SHAPE MIN_SECONDS REPETITIONS
 *       OP: add | mul | div | fma; PRECISION: f32 | f64; SHAPE: scalar | vector (16-byte
 *       vectors). Prints "<operations> <seconds>" per repetition, one operation per lane.
 *   perfcast_probe issue MIN_SECONDS REPETITIONS
 *       Integer instruction throughput: eight independent chains of adds. Prints
 *       "<instructions> <seconds>" per repetition (the adds; loop overhead not counted).
 *   perfcast_probe branch random|predictable MIN_SECONDS REPETITIONS
 *       A loop whose conditional branch follows random bits (half of them mispredicted) or
 *       always goes the same way. Prints "<branches> <seconds>" per repetition.
 *
 * Each measurement repeats its loop, doubling the count, until it runs MIN_SECONDS of CPU time. Built with
 * -O2 -fno-tree-vectorize -ffp-contract=off, so the scalar loops stay scalar and an add or a
 * multiply is not fused; the fma loops call __builtin_fma (vectors: fused by their own flag).
 */
#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef double v2d __attribute__((vector_size(16)));
typedef float v4f __attribute__((vector_size(16)));

static volatile double sink;

/* CPU time of this process: a probe preempted by other load on a shared machine is not
   charged for the time it waited (only for what sharing the caches costs it). */
static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* One pass over the buffer; returns the accesses made. */
static size_t pass(double *buffer, size_t count, const char *pattern, int store, uint64_t *seed) {
    size_t accesses = 0;
    if (strcmp(pattern, "random") == 0) {
        uint64_t state = *seed;
        size_t mask = count - 1; /* count is a power of two */
        double sum = 0.0;
        for (size_t i = 0; i < count; i++) {
            state = state * 6364136223846793005ULL + 1442695040888963407ULL;
            size_t at = (size_t)(state >> 20) & mask;
            if (store)
                buffer[at] = (double)i;
            else
                sum += buffer[at];
        }
        *seed = state;
        sink = sum;
        return count;
    }
    size_t stride = strcmp(pattern, "stride8") == 0 ? 8 : 1;
    /* eight independent sums: the loads, not the add latency, limit the loop */
    double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0, s4 = 0.0, s5 = 0.0, s6 = 0.0, s7 = 0.0;
    if (store) {
        for (size_t i = 0; i < count; i += stride) buffer[i] = (double)i;
        accesses = (count + stride - 1) / stride;
    } else {
        size_t i = 0;
        for (; i + 7 * stride < count; i += 8 * stride) {
            s0 += buffer[i];
            s1 += buffer[i + stride];
            s2 += buffer[i + 2 * stride];
            s3 += buffer[i + 3 * stride];
            s4 += buffer[i + 4 * stride];
            s5 += buffer[i + 5 * stride];
            s6 += buffer[i + 6 * stride];
            s7 += buffer[i + 7 * stride];
            accesses += 8;
        }
        for (; i < count; i += stride, accesses++) s0 += buffer[i];
        sink = s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7;
    }
    return accesses;
}

static int memory(int argc, char **argv) {
    if (argc != 7) return 2;
    const char *pattern = argv[2];
    int store = strcmp(argv[3], "store") == 0;
    size_t bytes = strtoull(argv[4], NULL, 10);
    double minimum = atof(argv[5]);
    int repetitions = atoi(argv[6]);
    size_t count = bytes / sizeof(double);
    double *buffer = aligned_alloc(64, count * sizeof(double));
    if (!buffer) return 1;
    for (size_t i = 0; i < count; i++) buffer[i] = 1.0;
    uint64_t seed = 12345;
    pass(buffer, count, pattern, store, &seed); /* warm the caches */
    for (int r = 0; r < repetitions; r++) {
        size_t passes = 1;
        for (;;) {
            size_t accesses = 0;
            double start = now();
            for (size_t k = 0; k < passes; k++) accesses += pass(buffer, count, pattern, store, &seed);
            double seconds = now() - start;
            if (seconds >= minimum) {
                printf("%.17g %.17g\n", 8.0 * (double)accesses, seconds);
                break;
            }
            passes *= 2;
        }
    }
    free(buffer);
    return 0;
}

#define CHAINS(T, STEP)                                                                   \
    static double chains_##T##_##STEP(T seed, T factor, size_t iterations) {               \
        T a0 = seed, a1 = seed + factor, a2 = seed - factor, a3 = seed * factor;           \
        T a4 = seed + 2 * factor, a5 = seed - 2 * factor, a6 = seed * 2, a7 = seed * 3;    \
        for (size_t i = 0; i < iterations; i++) {                                          \
            STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5); STEP(a6); STEP(a7); \
        }                                                                                  \
        T total = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;                                   \
        double out = 0.0;                                                                  \
        for (size_t k = 0; k < sizeof(T) / sizeof(total[0]); k++) out += (double)total[k];  \
        return out;                                                                        \
    }
#define SCALAR_CHAINS(T, STEP)                                                            \
    static double chains_##T##_##STEP(T seed, T factor, size_t iterations) {               \
        T a0 = seed, a1 = seed + factor, a2 = seed - factor, a3 = seed * factor;           \
        T a4 = seed + 2 * factor, a5 = seed - 2 * factor, a6 = seed * 2, a7 = seed * 3;    \
        for (size_t i = 0; i < iterations; i++) {                                          \
            STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5); STEP(a6); STEP(a7); \
        }                                                                                  \
        return (double)(a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7);                            \
    }
#define ADD(x) x = x + factor
#define MUL(x) x = x * factor
#define DIV(x) x = x / factor
#define FMA(x) x = __builtin_fma(x, factor, seed)
#define FMAF(x) x = __builtin_fmaf(x, factor, seed)
#define VFMA(x) x = x * factor + seed

SCALAR_CHAINS(double, ADD)
SCALAR_CHAINS(double, MUL)
SCALAR_CHAINS(double, DIV)
SCALAR_CHAINS(double, FMA)
SCALAR_CHAINS(float, ADD)
SCALAR_CHAINS(float, MUL)
SCALAR_CHAINS(float, DIV)
SCALAR_CHAINS(float, FMAF)
CHAINS(v2d, ADD)
CHAINS(v2d, MUL)
CHAINS(v2d, DIV)
__attribute__((optimize("fp-contract=fast"))) CHAINS(v2d, VFMA)
CHAINS(v4f, ADD)
CHAINS(v4f, MUL)
CHAINS(v4f, DIV)
__attribute__((optimize("fp-contract=fast"))) CHAINS(v4f, VFMA)

static double run_fp(const char *op, int single, int vector, size_t iterations, double *lanes) {
    /* factors close to 1 keep the chains finite and away from subnormal numbers (which are
       slow) for the tens of millions of steps one measurement takes */
    volatile double seed_source = 0.5, factor_source = 0.999999;
    double s = seed_source, f = factor_source;
    int which = strcmp(op, "add") == 0 ? 0 : strcmp(op, "mul") == 0 ? 1 : strcmp(op, "div") == 0 ? 2 : 3;
    if (which == 0) f = 1e-9;
    if (which == 2) f = 1.0 / f;
    if (!vector && !single) {
        *lanes = 1;
        double (*k[])(double, double, size_t) = {chains_double_ADD, chains_double_MUL,
                                                  chains_double_DIV, chains_double_FMA};
        return k[which](s, f, iterations);
    }
    if (!vector) {
        *lanes = 1;
        double (*k[])(float, float, size_t) = {chains_float_ADD, chains_float_MUL,
                                               chains_float_DIV, chains_float_FMAF};
        return k[which]((float)s, (float)f, iterations);
    }
    if (!single) {
        *lanes = 2;
        v2d vs = {s, s}, vf = {f, f};
        double (*k[])(v2d, v2d, size_t) = {chains_v2d_ADD, chains_v2d_MUL, chains_v2d_DIV,
                                           chains_v2d_VFMA};
        return k[which](vs, vf, iterations);
    }
    *lanes = 4;
    v4f vs = {(float)s, (float)s, (float)s, (float)s}, vf = {(float)f, (float)f, (float)f, (float)f};
    double (*k[])(v4f, v4f, size_t) = {chains_v4f_ADD, chains_v4f_MUL, chains_v4f_DIV,
                                       chains_v4f_VFMA};
    return k[which](vs, vf, iterations);
}

static int fp(int argc, char **argv) {
    if (argc != 7) return 2;
    int single = strcmp(argv[3], "f32") == 0;
    int vector = strcmp(argv[4], "vector") == 0;
    double minimum = atof(argv[5]);
    int repetitions = atoi(argv[6]);
    double lanes = 1;
    sink = run_fp(argv[2], single, vector, 1000, &lanes); /* warm up */
    for (int r = 0; r < repetitions; r++) {
        size_t iterations = 1000;
        for (;;) {
            double start = now();
            sink = run_fp(argv[2], single, vector, iterations, &lanes);
            double seconds = now() - start;
            if (seconds >= minimum) {
                printf("%.17g %.17g\n", 8.0 * lanes * (double)iterations, seconds);
                break;
            }
            iterations *= 2;
        }
    }
    return 0;
}

/* The empty asm keeps each add a separate instruction (no folding of the chain). */
#define STEP(x) x += 3; __asm__ volatile("" : "+r"(x))
#define STEP8 STEP(a0); STEP(a1); STEP(a2); STEP(a3); STEP(a4); STEP(a5); STEP(a6); STEP(a7)

static uint64_t adds(size_t iterations) {
    uint64_t a0 = 1, a1 = 2, a2 = 3, a3 = 4, a4 = 5, a5 = 6, a6 = 7, a7 = 8;
    for (size_t i = 0; i < iterations; i++) {
        STEP8; STEP8; STEP8; STEP8;
    }
    return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

#define BITS 16384 /* fits the first-level cache; too long a pattern for a predictor */

static uint64_t branches(const unsigned char *bits, size_t iterations) {
    uint64_t taken = 0, other = 0;
    for (size_t i = 0; i < iterations; i++) {
        if (bits[i & (BITS - 1)]) {
            __asm__ volatile(""); /* keeps the branch a branch (no conditional move) */
            taken += i;
        } else {
            other ^= i;
        }
    }
    return taken + other;
}

static int core(int argc, char **argv) {
    int issue = strcmp(argv[1], "issue") == 0;
    if (argc != (issue ? 4 : 5)) return 2;
    double minimum = atof(argv[issue ? 2 : 3]);
    int repetitions = atoi(argv[issue ? 3 : 4]);
    static unsigned char bits[BITS];
    uint64_t state = 12345;
    for (size_t i = 0; i < BITS; i++) {
        state = state * 6364136223846793005ULL + 1442695040888963407ULL;
        bits[i] = strcmp(argv[2], "random") == 0 ? (unsigned char)((state >> 40) & 1) : 1;
    }
    for (int r = 0; r < repetitions; r++) {
        size_t iterations = 1000;
        for (;;) {
            double start = now();
            sink = (double)(issue ? adds(iterations) : branches(bits, iterations));
            double seconds = now() - start;
            if (seconds >= minimum) {
                printf("%.17g %.17g\n", (issue ? 32.0 : 1.0) * (double)iterations, seconds);
                break;
            }
            iterations *= 2;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "memory") == 0) return memory(argc, argv);
    if (argc > 1 && strcmp(argv[1], "fp") == 0) return fp(argc, argv);
    if (argc > 1 && (strcmp(argv[1], "issue") == 0 || strcmp(argv[1], "branch") == 0))
        return core(argc, argv);
    fprintf(stderr, "usage: perfcast_probe memory|fp|issue|branch ...\n");
    return 2;
}
