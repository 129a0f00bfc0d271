/*
 * perfcast region instrumentation: the library behind perfcast.h (read that header first for the
 * output format and the rules). Compile this file with the program's own compiler; with mpicc it
 * becomes MPI-aware by itself.
 *
 * Design: every thread owns a call tree stored in an array of nodes; node 0 is the root. A node
 * is identified by (parent node, key), where the key is the address of the region name (or of the
 * function, for -finstrument-functions), looked up in an open-addressing hash table. A region's
 * start time lives in its node: a call path is on the stack at most once (recursion makes a new,
 * deeper path), so no separate stack is needed. Nothing on the fast path takes a lock.
 */
#ifndef PERFCAST_DISABLE

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "perfcast.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if !defined(PERFCAST_NO_MPI) && defined(__has_include)
#if __has_include(<mpi.h>)
#include <mpi.h>
#define PERFCAST_WITH_MPI 1
#endif
#endif

#ifdef __cplusplus
#define PC_API extern "C" __attribute__((no_instrument_function))
#else
#define PC_API __attribute__((no_instrument_function))
#endif
#define PC_LOCAL static __attribute__((no_instrument_function))

/* ------------------------------------------------------------------------------------------ */
/* Per-thread call trees                                                                       */

typedef struct {
    const void *key; /* region name (char *) or function address */
    int parent;
    int is_function;
    uint64_t visits;
    uint64_t total_ns;
    uint64_t start_ns;
} pc_node;

typedef struct pc_thread {
    pc_node *nodes;
    int n_nodes, cap_nodes;
    int *table; /* node indices, -1 empty */
    unsigned table_mask;
    int current; /* innermost open node; 0 is the root */
    char **interned; /* names given to the _dynamic entry points, by content */
    unsigned interned_mask, n_interned;
    struct pc_thread *next;
} pc_thread;

static __thread pc_thread *pc_self;
static pc_thread *pc_threads, *pc_threads_last; /* in order of their first region */
static pthread_mutex_t pc_threads_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int pc_finalized;

/* Misuse (an END that matches no open region) is reported, but only the first few times: a
 * mistake inside a hot loop must not flood stderr. The total is reported at the end. */
#define PC_REPORTED_ERRORS 10
static unsigned long pc_errors;

__attribute__((format(printf, 1, 2))) PC_LOCAL void pc_misuse(const char *fmt, ...) {
    unsigned long count = __atomic_add_fetch(&pc_errors, 1, __ATOMIC_RELAXED);
    if (count > PC_REPORTED_ERRORS) return;
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    if (count == PC_REPORTED_ERRORS)
        fputs("perfcast: further region errors are counted, not shown\n", stderr);
}

PC_LOCAL void pc_die_oom(void) {
    fputs("perfcast: out of memory\n", stderr);
    abort();
}

PC_LOCAL void *pc_alloc(size_t size) {
    void *p = calloc(1, size);
    if (!p) pc_die_oom();
    return p;
}

PC_LOCAL uint64_t pc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

PC_LOCAL unsigned pc_hash(int parent, const void *key) {
    uint64_t h = (uint64_t)(uintptr_t)key * 0x9E3779B97F4A7C15ull;
    h ^= (uint64_t)(unsigned)parent * 0xC2B2AE3D27D4EB4Full;
    return (unsigned)(h >> 29);
}

PC_LOCAL pc_thread *pc_thread_init(void) {
    pc_thread *t = (pc_thread *)pc_alloc(sizeof *t);
    t->cap_nodes = 64; /* small: programs may start many short-lived threads */
    t->nodes = (pc_node *)pc_alloc(sizeof(pc_node) * (size_t)t->cap_nodes);
    t->n_nodes = 1; /* the root */
    t->table_mask = 127;
    t->table = (int *)malloc(sizeof(int) * (t->table_mask + 1));
    if (!t->table) pc_die_oom();
    memset(t->table, 0xff, sizeof(int) * (t->table_mask + 1));
    pthread_mutex_lock(&pc_threads_lock);
    if (!pc_threads) {
        pc_threads = t;
    } else {
        pc_threads_last->next = t;
    }
    pc_threads_last = t;
    pthread_mutex_unlock(&pc_threads_lock);
    pc_self = t;
    return t;
}

PC_LOCAL void pc_rehash(pc_thread *t) {
    unsigned mask = t->table_mask * 2 + 1;
    int *table = (int *)malloc(sizeof(int) * (mask + 1));
    if (!table) pc_die_oom();
    memset(table, 0xff, sizeof(int) * (mask + 1));
    int idx;
    for (idx = 1; idx < t->n_nodes; idx++) {
        unsigned i = pc_hash(t->nodes[idx].parent, t->nodes[idx].key) & mask;
        while (table[i] >= 0) i = (i + 1) & mask;
        table[i] = idx;
    }
    free(t->table);
    t->table = table;
    t->table_mask = mask;
}

PC_LOCAL int pc_add_node(pc_thread *t, int parent, const void *key, int is_function) {
    if (t->n_nodes == t->cap_nodes) {
        t->cap_nodes *= 2;
        t->nodes = (pc_node *)realloc(t->nodes, sizeof(pc_node) * (size_t)t->cap_nodes);
        if (!t->nodes) pc_die_oom();
    }
    int idx = t->n_nodes++;
    pc_node *node = &t->nodes[idx];
    memset(node, 0, sizeof *node);
    node->key = key;
    node->parent = parent;
    node->is_function = is_function;
    if ((unsigned)t->n_nodes * 2 > t->table_mask) {
        pc_rehash(t);
    } else {
        unsigned i = pc_hash(parent, key) & t->table_mask;
        while (t->table[i] >= 0) i = (i + 1) & t->table_mask;
        t->table[i] = idx;
    }
    return idx;
}

PC_LOCAL int pc_child(pc_thread *t, int parent, const void *key, int is_function) {
    unsigned i = pc_hash(parent, key) & t->table_mask;
    for (;;) {
        int idx = t->table[i];
        if (idx < 0) return pc_add_node(t, parent, key, is_function);
        if (t->nodes[idx].key == key && t->nodes[idx].parent == parent) return idx;
        i = (i + 1) & t->table_mask;
    }
}

PC_LOCAL void pc_enter(const void *key, int is_function) {
    if (pc_finalized) return;
    pc_thread *t = pc_self ? pc_self : pc_thread_init();
    int idx = pc_child(t, t->current, key, is_function);
    pc_node *node = &t->nodes[idx];
    node->visits++;
    t->current = idx;
    node->start_ns = pc_now();
}

/* Name of a node for messages and call paths. */
PC_LOCAL const char *pc_function_name(const void *address);

PC_LOCAL const char *pc_node_name(const pc_node *node) {
    return node->is_function ? pc_function_name(node->key) : (const char *)node->key;
}

PC_API void perfcast_region_begin(const char *name) { pc_enter(name, 0); }

PC_API void perfcast_region_end(const char *name) {
    uint64_t now = pc_now();
    if (pc_finalized) return;
    pc_thread *t = pc_self;
    if (!t || t->current == 0) {
        pc_misuse("perfcast: PERFCAST_REGION_END(\"%s\") without an open region; ignored\n", name);
        return;
    }
    pc_node *node = &t->nodes[t->current];
    if (node->key != name && (node->is_function || strcmp((const char *)node->key, name) != 0)) {
        pc_misuse("perfcast: PERFCAST_REGION_END(\"%s\") does not match the innermost open region "
                  "\"%s\"; ignored\n",
                  name, pc_node_name(node));
        return;
    }
    node->total_ns += now - node->start_ns;
    t->current = node->parent;
}

PC_LOCAL uint64_t pc_string_hash(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The canonical copy of a name given at run time, so that equal texts share one key. */
PC_LOCAL const char *pc_intern(pc_thread *t, const char *name) {
    if (!t->interned) {
        t->interned_mask = 63;
        t->interned = (char **)pc_alloc(sizeof(char *) * (t->interned_mask + 1));
    }
    unsigned i = (unsigned)pc_string_hash(name) & t->interned_mask;
    while (t->interned[i]) {
        if (strcmp(t->interned[i], name) == 0) return t->interned[i];
        i = (i + 1) & t->interned_mask;
    }
    char *copy = strdup(name);
    if (!copy) pc_die_oom();
    t->interned[i] = copy;
    if (++t->n_interned * 2 > t->interned_mask) {
        unsigned mask = t->interned_mask * 2 + 1;
        char **table = (char **)pc_alloc(sizeof(char *) * (mask + 1));
        unsigned k;
        for (k = 0; k <= t->interned_mask; k++) {
            if (!t->interned[k]) continue;
            unsigned j = (unsigned)pc_string_hash(t->interned[k]) & mask;
            while (table[j]) j = (j + 1) & mask;
            table[j] = t->interned[k];
        }
        free(t->interned);
        t->interned = table;
        t->interned_mask = mask;
    }
    return copy;
}

PC_API void perfcast_region_begin_dynamic(const char *name) {
    if (pc_finalized) return;
    pc_thread *t = pc_self ? pc_self : pc_thread_init();
    pc_enter(pc_intern(t, name), 0);
}

/* perfcast_region_end compares texts when the addresses differ, which is all this needs. */
PC_API void perfcast_region_end_dynamic(const char *name) { perfcast_region_end(name); }

/* ------------------------------------------------------------------------------------------ */
/* -finstrument-functions                                                                      */

PC_API void __cyg_profile_func_enter(void *function, void *call_site) {
    (void)call_site;
    pc_enter(function, 1);
}

PC_API void __cyg_profile_func_exit(void *function, void *call_site) {
    (void)call_site;
    uint64_t now = pc_now();
    pc_thread *t = pc_self;
    if (pc_finalized || !t || t->current == 0) return;
    pc_node *node = &t->nodes[t->current];
    if (node->key != function) {
        /* A user region opened in this function is still open, or a longjmp skipped exits. */
        pc_misuse("perfcast: function %s returns while region \"%s\" is open; ignored\n",
                  pc_function_name(function), pc_node_name(node));
        return;
    }
    node->total_ns += now - node->start_ns;
    t->current = node->parent;
}

/* Symbol names: dladdr finds exported symbols; other functions (static ones, executables not
 * linked with -rdynamic) are looked up in the object file's own ELF symbol table. */
typedef struct {
    char *path;
    const unsigned char *image;
    size_t size;
} pc_elf_file;

static pc_elf_file pc_elf_cache[8];

PC_LOCAL const pc_elf_file *pc_elf_open(const char *path) {
    int slot = 0;
    for (; slot < 8 && pc_elf_cache[slot].path; slot++)
        if (strcmp(pc_elf_cache[slot].path, path) == 0) return &pc_elf_cache[slot];
    if (slot == 8) return NULL;
    pc_elf_file *file = &pc_elf_cache[slot];
    file->path = strdup(path);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0 && (size_t)st.st_size >= sizeof(Elf64_Ehdr)) {
        void *image = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (image != MAP_FAILED) {
            file->image = (const unsigned char *)image;
            file->size = (size_t)st.st_size;
        }
    }
    if (fd >= 0) close(fd);
    return file;
}

PC_LOCAL const char *pc_elf_symbol(const pc_elf_file *file, uintptr_t value) {
    if (!file || !file->image) return NULL;
    const Elf64_Ehdr *ehdr = (const Elf64_Ehdr *)file->image;
    if (memcmp(ehdr->e_ident, ELFMAG, SELFMAG) != 0 || ehdr->e_ident[EI_CLASS] != ELFCLASS64 ||
        ehdr->e_shoff + (size_t)ehdr->e_shnum * sizeof(Elf64_Shdr) > file->size)
        return NULL;
    const Elf64_Shdr *sections = (const Elf64_Shdr *)(file->image + ehdr->e_shoff);
    int s;
    for (s = 0; s < ehdr->e_shnum; s++) {
        const Elf64_Shdr *sec = &sections[s];
        if (sec->sh_type != SHT_SYMTAB || sec->sh_link >= ehdr->e_shnum) continue;
        const Elf64_Shdr *strtab = &sections[sec->sh_link];
        if (sec->sh_offset + sec->sh_size > file->size ||
            strtab->sh_offset + strtab->sh_size > file->size)
            continue;
        const Elf64_Sym *symbols = (const Elf64_Sym *)(file->image + sec->sh_offset);
        size_t count = sec->sh_size / sizeof(Elf64_Sym);
        size_t k;
        for (k = 0; k < count; k++) {
            if (ELF64_ST_TYPE(symbols[k].st_info) == STT_FUNC && symbols[k].st_value == value &&
                symbols[k].st_name < strtab->sh_size)
                return (const char *)(file->image + strtab->sh_offset + symbols[k].st_name);
        }
    }
    return NULL;
}

PC_LOCAL const char *pc_function_name(const void *address) {
    Dl_info info;
    memset(&info, 0, sizeof info);
    if (dladdr(address, &info) && info.dli_sname && info.dli_saddr == address)
        return info.dli_sname;
    if (info.dli_fname) {
        const pc_elf_file *file = pc_elf_open(info.dli_fname);
        uintptr_t value = (uintptr_t)address;
        if (file && file->image && ((const Elf64_Ehdr *)file->image)->e_type == ET_DYN)
            value -= (uintptr_t)info.dli_fbase;
        const char *name = pc_elf_symbol(file, value);
        if (name) return name;
    }
    static __thread char unknown[32];
    snprintf(unknown, sizeof unknown, "0x%lx", (unsigned long)(uintptr_t)address);
    return unknown;
}

/* ------------------------------------------------------------------------------------------ */
/* Aggregation by call path text                                                               */

typedef struct {
    char *path;
    double time, time_sum, visits;
} pc_entry;

typedef struct {
    pc_entry *entries; /* in order of first appearance */
    int n, cap;
    int *table;
    unsigned mask;
} pc_map;

PC_LOCAL void pc_map_grow_table(pc_map *m) {
    m->mask = m->mask ? m->mask * 2 + 1 : 255;
    free(m->table);
    m->table = (int *)malloc(sizeof(int) * (m->mask + 1));
    if (!m->table) pc_die_oom();
    memset(m->table, 0xff, sizeof(int) * (m->mask + 1));
    int k;
    for (k = 0; k < m->n; k++) {
        unsigned i = (unsigned)pc_string_hash(m->entries[k].path) & m->mask;
        while (m->table[i] >= 0) i = (i + 1) & m->mask;
        m->table[i] = k;
    }
}

PC_LOCAL pc_entry *pc_map_get(pc_map *m, const char *path) {
    if ((unsigned)(m->n + 1) * 2 > m->mask) pc_map_grow_table(m);
    unsigned i = (unsigned)pc_string_hash(path) & m->mask;
    while (m->table[i] >= 0) {
        if (strcmp(m->entries[m->table[i]].path, path) == 0) return &m->entries[m->table[i]];
        i = (i + 1) & m->mask;
    }
    if (m->n == m->cap) {
        m->cap = m->cap ? m->cap * 2 : 64;
        m->entries = (pc_entry *)realloc(m->entries, sizeof(pc_entry) * (size_t)m->cap);
        if (!m->entries) pc_die_oom();
    }
    pc_entry *e = &m->entries[m->n];
    memset(e, 0, sizeof *e);
    e->path = strdup(path);
    if (!e->path) pc_die_oom();
    m->table[i] = m->n++;
    return e;
}

PC_LOCAL void pc_map_free(pc_map *m) {
    int k;
    for (k = 0; k < m->n; k++) free(m->entries[k].path);
    free(m->entries);
    free(m->table);
}

typedef struct {
    char *data;
    size_t len, cap;
} pc_buf;

PC_LOCAL void pc_buf_put(pc_buf *b, const void *data, size_t len) {
    if (b->len + len + 1 > b->cap) {
        while (b->len + len + 1 > b->cap) b->cap = b->cap ? b->cap * 2 : 4096;
        b->data = (char *)realloc(b->data, b->cap);
        if (!b->data) pc_die_oom();
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
}

__attribute__((format(printf, 2, 3))) PC_LOCAL void pc_buf_printf(pc_buf *b, const char *fmt,
                                                                 ...) {
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof small) {
        pc_buf_put(b, small, (size_t)n);
        return;
    }
    char *big = (char *)pc_alloc((size_t)n + 1);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    pc_buf_put(b, big, (size_t)n);
    free(big);
}

/* The call path of a node, "a->b->c", into path (grown as needed). */
PC_LOCAL void pc_node_path(const pc_thread *t, int idx, pc_buf *path) {
    if (t->nodes[idx].parent != 0) {
        pc_node_path(t, t->nodes[idx].parent, path);
        pc_buf_put(path, "->", 2);
    }
    const char *name = pc_node_name(&t->nodes[idx]);
    pc_buf_put(path, name, strlen(name));
}

/* Closes what is still open (counting its time up to now) and merges all threads by path. */
PC_LOCAL void pc_collect(pc_map *map) {
    uint64_t now = pc_now();
    pc_buf path = {NULL, 0, 0};
    pthread_mutex_lock(&pc_threads_lock);
    pc_thread *t;
    for (t = pc_threads; t; t = t->next) {
        int idx;
        for (idx = t->current; idx != 0; idx = t->nodes[idx].parent) {
            pc_node *node = &t->nodes[idx];
            node->total_ns += now - node->start_ns;
            if (!node->is_function)
                fprintf(stderr,
                        "perfcast: region \"%s\" still open at the end of measurement; its time "
                        "is counted up to here\n",
                        pc_node_name(node));
        }
        /* one thread: nodes with the same path text (one name at several addresses) add up */
        pc_map mine = {NULL, 0, 0, NULL, 0};
        for (idx = 1; idx < t->n_nodes; idx++) {
            path.len = 0;
            pc_node_path(t, idx, &path);
            pc_entry *e = pc_map_get(&mine, path.data);
            e->time += (double)t->nodes[idx].total_ns * 1e-9;
            e->visits += (double)t->nodes[idx].visits;
        }
        /* across threads: time is the maximum, visits add up */
        int k;
        for (k = 0; k < mine.n; k++) {
            pc_entry *e = pc_map_get(map, mine.entries[k].path);
            if (mine.entries[k].time > e->time) e->time = mine.entries[k].time;
            e->visits += mine.entries[k].visits;
        }
        pc_map_free(&mine);
    }
    pthread_mutex_unlock(&pc_threads_lock);
    free(path.data);
}

PC_LOCAL void pc_json_string(pc_buf *out, const char *s) {
    pc_buf_put(out, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            pc_buf_put(out, esc, 2);
        } else if (c < 0x20) {
            pc_buf_printf(out, "\\u%04x", c);
        } else {
            pc_buf_put(out, s, 1);
        }
    }
    pc_buf_put(out, "\"", 1);
}

PC_LOCAL void pc_record(pc_buf *out, const char *kernel, const char *metric, double value) {
    pc_buf_put(out, "{\"kernel\": ", 11);
    pc_json_string(out, kernel);
    /* counts print exactly; times to the nanosecond */
    const char *format = value == (double)(int64_t)value && value < 9e15
                             ? ", \"metric\": \"%s\", \"value\": %.0f}\n"
                             : ", \"metric\": \"%s\", \"value\": %.9g}\n";
    pc_buf_printf(out, format, metric, value);
}

/* Writes all records with one write(2), appending to $PERFCAST_OUTPUT ("-": stderr). */
PC_LOCAL void pc_write(const pc_map *map, int ranks, int over_ranks) {
    const char *target = getenv("PERFCAST_OUTPUT");
    if (!target || !*target || (map->n == 0 && !over_ranks)) return;
    pc_buf out = {NULL, 0, 0};
    int k;
    for (k = 0; k < map->n; k++) {
        const pc_entry *e = &map->entries[k];
        pc_record(&out, e->path, "time", e->time);
        if (over_ranks) pc_record(&out, e->path, "time.mean", e->time_sum / ranks);
        pc_record(&out, e->path, "visits", e->visits);
    }
    pc_record(&out, program_invocation_short_name, "ranks", ranks);
    int fd = strcmp(target, "-") == 0
                 ? 2
                 : open(target, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "perfcast: cannot open PERFCAST_OUTPUT \"%s\": %s\n", target,
                strerror(errno));
    } else {
        size_t done = 0;
        while (done < out.len) {
            ssize_t n = write(fd, out.data + done, out.len - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) {
                fprintf(stderr, "perfcast: cannot write PERFCAST_OUTPUT \"%s\": %s\n", target,
                        strerror(errno));
                break;
            }
            done += (size_t)n;
        }
        if (fd != 2) close(fd);
    }
    free(out.data);
}

/* ------------------------------------------------------------------------------------------ */
/* End of run                                                                                  */

#ifdef PERFCAST_WITH_MPI
/* Gathers every rank's records on rank 0: time max and sum, visits max. Returns the rank. */
PC_LOCAL int pc_mpi_aggregate(const pc_map *local, pc_map *global, int *ranks) {
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    *ranks = size;
    pc_buf packed = {NULL, 0, 0};
    int k;
    for (k = 0; k < local->n; k++) {
        const pc_entry *e = &local->entries[k];
        uint32_t len = (uint32_t)strlen(e->path);
        pc_buf_put(&packed, &e->time, sizeof e->time);
        pc_buf_put(&packed, &e->visits, sizeof e->visits);
        pc_buf_put(&packed, &len, sizeof len);
        pc_buf_put(&packed, e->path, len);
    }
    int len = (int)packed.len, *lens = NULL, *displs = NULL;
    char *all = NULL, empty = 0;
    if (rank == 0) {
        lens = (int *)pc_alloc(sizeof(int) * (size_t)size);
        displs = (int *)pc_alloc(sizeof(int) * (size_t)size);
    }
    MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    size_t total = 0;
    if (rank == 0) {
        int r;
        for (r = 0; r < size; r++) {
            displs[r] = (int)total;
            total += (size_t)lens[r];
        }
        all = (char *)pc_alloc(total + 1);
    }
    MPI_Gatherv(packed.data ? packed.data : &empty, len, MPI_BYTE, all, lens, displs, MPI_BYTE, 0,
                MPI_COMM_WORLD);
    size_t pos;
    for (pos = 0; rank == 0 && pos < total;) {
        double time, visits;
        uint32_t path_len;
        memcpy(&time, all + pos, sizeof time);
        memcpy(&visits, all + pos + sizeof time, sizeof visits);
        memcpy(&path_len, all + pos + 2 * sizeof time, sizeof path_len);
        pos += 2 * sizeof time + sizeof path_len;
        char *path = (char *)pc_alloc(path_len + 1);
        memcpy(path, all + pos, path_len);
        pos += path_len;
        pc_entry *e = pc_map_get(global, path);
        free(path);
        if (time > e->time) e->time = time;
        if (visits > e->visits) e->visits = visits;
        e->time_sum += time;
    }
    free(packed.data);
    free(lens);
    free(displs);
    free(all);
    return rank;
}
#endif

PC_API void perfcast_finalize(void) {
    if (pc_finalized) return;
    pc_finalized = 1;
    pc_map local = {NULL, 0, 0, NULL, 0};
    pc_collect(&local);
    if (pc_errors > PC_REPORTED_ERRORS)
        fprintf(stderr, "perfcast: %lu region errors in total\n", pc_errors);
#ifdef PERFCAST_WITH_MPI
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (initialized && !finalized) {
        pc_map global = {NULL, 0, 0, NULL, 0};
        int ranks;
        if (pc_mpi_aggregate(&local, &global, &ranks) == 0) pc_write(&global, ranks, 1);
        return;
    }
    if (initialized) {
        fputs("perfcast: MPI was finalized before perfcast could aggregate over ranks; nothing "
              "written (call PERFCAST_FINALIZE() before MPI_Finalize)\n",
              stderr);
        return;
    }
#endif
    pc_write(&local, 1, 0);
}

PC_LOCAL void pc_atexit(void) { perfcast_finalize(); }

/* Registered at load time, so it runs after every exit handler the program registers later. */
__attribute__((constructor)) PC_LOCAL void pc_register_atexit(void) { atexit(pc_atexit); }

#ifdef PERFCAST_WITH_MPI
/* PMPI wrapper: aggregate over ranks while MPI still works. */
PC_API int MPI_Finalize(void) {
    perfcast_finalize();
    return PMPI_Finalize();
}

/* Fortran's MPI_Finalize (the mpif.h and `use mpi` bindings, gfortran symbol names) calls
 * PMPI_Finalize directly, so it gets a wrapper of its own. */
PC_API void mpi_finalize_(int *ierror) {
    perfcast_finalize();
    *ierror = PMPI_Finalize();
}
#endif

#else
typedef int perfcast_disabled; /* ISO C wants a translation unit to declare something */
#endif /* PERFCAST_DISABLE */
