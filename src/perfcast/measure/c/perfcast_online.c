/*
 * perfcast online regions: the library behind perfcast_online.h (read that first). Each kernel
 * keeps a buffer of one batch; a full batch becomes one spool file and the kernel's control file
 * gives the next back-off delay. Nothing here blocks on the collector.
 */
#ifndef PERFCAST_DISABLE

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "perfcast_online.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PCO_CALLGRIND 1
#endif
#endif

#define PCO_KERNELS 256
#define PCO_SUFFIX ".pcob" /* perfcast online batch */
#if defined(__GNUC__)
#define PCO_COLD __attribute__((noinline, cold)) /* kept out of the per-execution path */
#else
#define PCO_COLD
#endif

typedef struct {
    const char *kernel; /* the literal's address is the key */
    char names[PERFCAST_ONLINE_MAX_PARAMS][64];
    int count;
    double *values;  /* batch x count */
    double *measured; /* batch: seconds, or instructions */
    uint64_t *skipped_before;
    int filled;
    uint64_t skip_left, skipped, judged;
    struct timespec start;
    int measuring;
} pco_kernel;

static pco_kernel pco_table[PCO_KERNELS];
static int pco_state; /* 0 unknown, 1 on, -1 off */
static char pco_spool[4096];
static int pco_batch = 512;
static unsigned pco_files;
static const char *pco_metric = "time";
static int pco_instructions; /* the metric is instructions, counted by callgrind */
static clockid_t pco_clock = CLOCK_MONOTONIC; /* time: wall; cputime: the thread's CPU time */
static unsigned pco_dumps;    /* callgrind numbers its dumps 1, 2, ... */

/* Instructions need callgrind's client requests: a region zeroes callgrind's counters where it
 * begins and dumps them where it ends, into SPOOL/callgrind.<pid>.<dump>, which it reads. */
static int pco_choose_metric(void) {
    const char *metric = getenv("PERFCAST_ONLINE_METRIC");
    if (!metric || !*metric || strcmp(metric, "time") == 0) return 1;
    if (strcmp(metric, "cputime") == 0) { /* not stretched by other processes on the core */
        pco_metric = "cputime";
        pco_clock = CLOCK_THREAD_CPUTIME_ID;
        return 1;
    }
    if (strcmp(metric, "instructions") == 0) {
#ifdef PCO_CALLGRIND
        if (RUNNING_ON_VALGRIND) {
            pco_metric = "instructions";
            pco_instructions = 1;
            return 1;
        }
#endif
        fprintf(stderr, "perfcast online: PERFCAST_ONLINE_METRIC=instructions needs the program "
                        "built with valgrind's headers and run under valgrind --tool=callgrind "
                        "--callgrind-out-file=$PERFCAST_ONLINE_SPOOL/callgrind.%%p; online "
                        "regions are off\n");
        return 0;
    }
    fprintf(stderr, "perfcast online: unknown PERFCAST_ONLINE_METRIC '%s' (time, cputime or "
                    "instructions); online regions are off\n", metric);
    return 0;
}

static void pco_at_exit(void) { perfcast_online_flush(); }

static int pco_enabled(void) {
    if (pco_state == 0) {
        const char *spool = getenv("PERFCAST_ONLINE_SPOOL");
        const char *batch = getenv("PERFCAST_ONLINE_BATCH");
        pco_state = -1;
        if (spool && *spool && strlen(spool) < sizeof pco_spool - 64 && pco_choose_metric()) {
            strcpy(pco_spool, spool);
            mkdir(pco_spool, 0777);
            if (batch && atoi(batch) > 0) pco_batch = atoi(batch);
            pco_state = 1;
            atexit(pco_at_exit);
        }
    }
    return pco_state > 0;
}

/* The kernel's slot: open addressing on the literal's address. The first probe, which finds
 * the kernel unless another one collided with it, is inlined into BEGIN and END (they run on
 * every execution, skipped or not); the search beyond it and the claiming of a slot are not. */
PCO_COLD static pco_kernel *pco_find_slow(const char *kernel) {
    size_t slot = ((uintptr_t)kernel >> 3) % PCO_KERNELS;
    int probe;
    for (probe = 0; probe < PCO_KERNELS; probe++) {
        pco_kernel *k = &pco_table[(slot + probe) % PCO_KERNELS];
        if (k->kernel == kernel) return k;
        if (k->kernel == NULL) {
            k->kernel = kernel;
            return k;
        }
    }
    return NULL;
}

static __inline__ pco_kernel *pco_find(const char *kernel) {
    pco_kernel *k = &pco_table[((uintptr_t)kernel >> 3) % PCO_KERNELS];
    return k->kernel == kernel ? k : pco_find_slow(kernel);
}

static uint64_t pco_fnv1a(const char *kernel, const char *metric) {
    uint64_t h = 0xcbf29ce484222325ULL;
    const unsigned char *c;
    for (c = (const unsigned char *)kernel; *c; c++) h = (h ^ *c) * 0x100000001b3ULL;
    h = (h ^ 0) * 0x100000001b3ULL;
    for (c = (const unsigned char *)metric; *c; c++) h = (h ^ *c) * 0x100000001b3ULL;
    return h;
}

static void pco_read_control(pco_kernel *k) {
    char path[4200];
    snprintf(path, sizeof path, "%s/control/%016llx", pco_spool,
             (unsigned long long)pco_fnv1a(k->kernel, pco_metric));
    FILE *f = fopen(path, "r");
    if (!f) return;
    unsigned long long judged, skip;
    if (fscanf(f, "%llu %llu", &judged, &skip) == 2 && judged > k->judged) {
        k->judged = judged;
        k->skip_left = skip;
    }
    fclose(f);
}

/* One batch file in the binary format of perfcast/io/online_batch.py (version 1): a JSON header
 * line, then the records' parameter values, measured values and skip counts as three arrays of
 * 8-byte numbers in this machine's byte order, written with one writev from the buffers the
 * records already sit in. Nothing is formatted per record (formatting was 95 % of a measured
 * execution's cost under callgrind). */
static void pco_hand_over(pco_kernel *k, int trailing_skips) {
    char temporary[4200], final[4200], header[1024];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    unsigned long long stamp = (unsigned long long)now.tv_sec * 1000000000ULL + now.tv_nsec;
    snprintf(temporary, sizeof temporary, "%s/.%020llu-%d-%06u.tmp", pco_spool, stamp,
             (int)getpid(), pco_files);
    snprintf(final, sizeof final, "%s/%020llu-%d-%06u" PCO_SUFFIX, pco_spool, stamp,
             (int)getpid(), pco_files++);
    const unsigned one = 1;
    int used = snprintf(header, sizeof header,
                        "{\"format\": \"perfcast-online-batch\", \"version\": 1, \"byteorder\": "
                        "\"%s\", \"kernel\": \"%s\", \"metric\": \"%s\", \"records\": %d, "
                        "\"skipped\": %llu, \"params\": [",
                        *(const unsigned char *)&one ? "little" : "big", k->kernel, pco_metric,
                        k->filled, (unsigned long long)(trailing_skips ? k->skipped : 0));
    int j;
    for (j = 0; j < k->count && used < (int)sizeof header; j++)
        used += snprintf(header + used, sizeof header - (size_t)used, "%s\"%s\"", j ? ", " : "",
                         k->names[j]);
    if (used < (int)sizeof header) used += snprintf(header + used, sizeof header - (size_t)used, "]}\n");
    if (used >= (int)sizeof header) return; /* names too long for a header: cannot happen */
    struct iovec parts[4] = {
        {header, (size_t)used},
        {k->values, sizeof(double) * (size_t)k->filled * (size_t)k->count},
        {k->measured, sizeof(double) * (size_t)k->filled},
        {k->skipped_before, sizeof(uint64_t) * (size_t)k->filled},
    };
    size_t total = 0;
    int i;
    for (i = 0; i < 4; i++) total += parts[i].iov_len;
    int fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (fd < 0) return; /* the spool is gone: drop the batch rather than stop the program */
    ssize_t written = writev(fd, parts, 4);
    close(fd);
    if (written != (ssize_t)total) { /* a full disk: drop the batch, never hand over half */
        unlink(temporary);
    } else {
        rename(temporary, final);
    }
    k->filled = 0;
    pco_read_control(k);
}

/* A kernel's first execution in this process: its parameter names, its batch buffers and the
 * back-off delay the collector set last (kept out of BEGIN, which runs on every execution). */
PCO_COLD static int pco_first_execution(pco_kernel *k, const char *names, int count) {
    k->count = count;
    const char *at = names;
    int j;
    for (j = 0; j < count; j++) {
        size_t length = strcspn(at, ",");
        if (length >= sizeof k->names[j]) length = sizeof k->names[j] - 1;
        memcpy(k->names[j], at, length);
        k->names[j][length] = 0;
        at += length + (at[length] == ',');
    }
    k->values = malloc(sizeof(double) * (size_t)pco_batch * (size_t)(count ? count : 1));
    k->measured = malloc(sizeof(double) * (size_t)pco_batch);
    k->skipped_before = malloc(sizeof(uint64_t) * (size_t)pco_batch);
    if (!k->values || !k->measured || !k->skipped_before) { /* no memory: stay unmeasured */
        free(k->values), free(k->measured), free(k->skipped_before);
        k->values = NULL, k->measured = NULL, k->skipped_before = NULL;
        return 0;
    }
    pco_read_control(k); /* a new run goes on with the back-off delay of the runs before */
    return 1;
}

/* BEGIN of an execution that is measured, or of a kernel's first one (kept apart from the
 * skipping path of BEGIN, which then needs no registers saved). */
PCO_COLD static int pco_begin_measured(pco_kernel *k, const char *names, int count,
                                       const double *values) {
    if (!k || count > PERFCAST_ONLINE_MAX_PARAMS) return 0;
    if (!k->values && !pco_first_execution(k, names, count)) return 0;
    if (k->skip_left > 0) { /* the delay read at the first execution */
        k->skip_left--;
        k->skipped++;
        k->measuring = 0;
        return 0;
    }
    memcpy(&k->values[k->filled * k->count], values, sizeof(double) * (size_t)k->count);
    k->measuring = 1;
#ifdef PCO_CALLGRIND
    if (pco_instructions) {
        CALLGRIND_ZERO_STATS;
        return 1;
    }
#endif
    clock_gettime(pco_clock, &k->start);
    return 1;
}

int perfcast_online_begin(const char *kernel, const char *names, int count, const double *values) {
    if (pco_state <= 0 && !pco_enabled()) return 0;
    pco_kernel *k = pco_find(kernel);
    if (k && k->skip_left > 0) { /* skipped: one decrement, no clock */
        k->skip_left--;
        k->skipped++;
        k->measuring = 0;
        return 0;
    }
    return pco_begin_measured(k, names, count, values);
}

#ifdef PCO_CALLGRIND
/* The instructions callgrind counted since the region began (its dump's totals line); -1 when
 * the dump cannot be read (callgrind writes it somewhere else). */
static double pco_dumped_instructions(void) {
    CALLGRIND_DUMP_STATS;
    char path[4200], line[256];
    snprintf(path, sizeof path, "%s/callgrind.%d.%u", pco_spool, (int)getpid(), ++pco_dumps);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    double count = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "totals:", 7) == 0) count = strtod(line + 7, NULL);
    fclose(f);
    unlink(path);
    return count;
}
#endif

void perfcast_online_end(const char *kernel) {
    if (pco_state <= 0) return;
    /* a skipped execution reads no clock here either (for cputime that is a system call); the
     * lookup, a few instructions, falls inside a measured one */
    pco_kernel *k = pco_find(kernel);
    if (!k || !k->measuring) return;
    struct timespec now = {0, 0};
    if (!pco_instructions) clock_gettime(pco_clock, &now);
    k->measuring = 0;
    double value = (double)(now.tv_sec - k->start.tv_sec) + 1e-9 * (double)(now.tv_nsec - k->start.tv_nsec);
#ifdef PCO_CALLGRIND
    if (pco_instructions && (value = pco_dumped_instructions()) < 0) {
        fprintf(stderr, "perfcast online: cannot read callgrind's dump in %s (run under "
                        "--callgrind-out-file=$PERFCAST_ONLINE_SPOOL/callgrind.%%p); online "
                        "regions are off\n", pco_spool);
        pco_state = -1;
        return;
    }
#endif
    k->measured[k->filled] = value;
    k->skipped_before[k->filled] = k->skipped;
    k->skipped = 0;
    if (++k->filled >= pco_batch) pco_hand_over(k, 0);
}

void perfcast_online_flush(void) {
    if (pco_state <= 0) return;
    int i;
    for (i = 0; i < PCO_KERNELS; i++) {
        pco_kernel *k = &pco_table[i];
        if (k->kernel && (k->filled || k->skipped)) {
            pco_hand_over(k, 1);
            k->skipped = 0;
        }
    }
}

#endif /* PERFCAST_DISABLE */
