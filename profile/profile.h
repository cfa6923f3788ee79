/*
 * The profile: hookit's in-memory model of one profile file, shared by the
 * writer (profiler plugins, at process end) and the readers (the `hookit`
 * command).  The on-disk format is documented in docs/profile-format.md.
 *
 * A profile holds one process's metadata, a function table, and one
 * calling-context tree per thread.  Trees are stored as node arrays in
 * preorder: a node's parent always has a smaller index, roots have
 * parent == PROF_NONE.  Extra per-node numbers (I/O bytes, allocations,
 * min/max over merged inputs, ...) are named metric columns, so new
 * metrics need no format change.
 *
 * All strings live in the profile's own arena (profile_intern) and are freed
 * with it.
 */
#ifndef HOOKIT_PROFILE_H
#define HOOKIT_PROFILE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#define PROF_NONE UINT32_MAX

struct prof_func {
    uint64_t addr;              /* run-time address in the profiled process, 0 if synthetic */
    const char *name;           /* demangled function name ("MPI:MPI_Send", "J:Main.main", ...) */
    const char *module;         /* object file base name, "" if none */
    const char *file;           /* source file or NULL */
    uint32_t line;              /* source line or 0 */
};

struct prof_node {
    uint32_t func;              /* index into profile.funcs */
    uint32_t parent;            /* index into the thread's nodes, PROF_NONE for a root */
    uint64_t calls;
    uint64_t incl_ns;           /* inclusive time */
    uint64_t excl_ns;           /* exclusive time */
};

/* A named column of numbers, one per node of a thread. */
struct prof_metric {
    const char *name;           /* "io_bytes_read", "alloc_bytes", "min_incl_ns", ... */
    uint64_t *values;           /* nnodes values */
};

struct prof_thread {
    int32_t tid;                /* kernel thread id */
    uint32_t index;             /* 0 = main thread, then in order of creation */
    const char *name;           /* thread name ("main", pthread name, JVM name) or "" */
    uint32_t nnodes;
    struct prof_node *nodes;
    uint32_t nmetrics;
    struct prof_metric *metrics;
};

/* A key/value pair of process metadata ("hostname", "clock", "end", ...). */
struct prof_meta {
    const char *key;
    const char *value;
};

struct prof_process {
    int32_t pid, ppid;
    int32_t rank, size;         /* MPI rank and size, -1 when not an MPI process */
    const char *exe;            /* executable path */
    uint32_t argc;
    const char **argv;
    uint64_t start_ns;          /* wall clock at start, ns since the epoch */
    uint64_t duration_ns;       /* wall time from start to the profile's end */
    uint32_t nmeta;
    struct prof_meta *meta;
};

struct profile {
    struct prof_process process;
    uint32_t nfuncs;
    struct prof_func *funcs;
    uint32_t nthreads;
    struct prof_thread *threads;
    struct prof_arena *arena;   /* owns strings and arrays */
};

/* An empty profile (process.rank = size = -1).  NULL if out of memory. */
struct profile *profile_new(void);
void profile_free(struct profile *p);

/* Memory owned by the profile, freed by profile_free.  NULL if out of memory.
 * Blocks are zeroed and 16-byte aligned; a large block (a thread's node
 * array) gets a chunk of its own, so preallocating big arrays is cheap.
 * profile_intern returns the same pointer for equal strings. */
void *profile_alloc(struct profile *p, size_t size);
const char *profile_intern(struct profile *p, const char *s);
/* f's name, module (NULL: "?" and ""), source file and line, interned
 * into p.  0, or -1 when out of memory. */
int profile_name_func(struct profile *p, struct prof_func *f, const char *name, const char *module,
                      const char *file, unsigned line);

/* Append a metadata pair (both strings copied; a key set again has its
 * value replaced).  Returns 0 or -1. */
int profile_set_meta(struct profile *p, const char *key, const char *value);
/* The value of key, or NULL. */
const char *profile_get_meta(const struct profile *p, const char *key);
/* The value of key as a whole decimal number into *v: 0, or -1 (*v left
 * as it was) when the key is absent or its value is not such a number. */
int profile_meta_u64(const struct profile *p, const char *key, uint64_t *v);
/* The same, def when there is no such number. */
static inline uint64_t profile_meta_u64_or(const struct profile *p, const char *key, uint64_t def)
{
    profile_meta_u64(p, key, &def);
    return def;
}

/* The metric column called name in thread t, or NULL. */
const struct prof_metric *profile_find_metric(const struct prof_thread *t, const char *name);
/* A new zeroed column of n values appended to th's metrics (memory of p),
 * or NULL when out of memory. */
uint64_t *profile_new_column(struct profile *p, struct prof_thread *th, const char *name, uint32_t n);

/*
 * Write p to DIR/NAME atomically: written to a temporary file in DIR
 * (O_CREAT|O_EXCL|O_NOFOLLOW, the user's umask), then linked to NAME; an
 * existing NAME (file or symlink) is never replaced.  Returns 0, or -1 with
 * a message in err naming what failed.
 */
int profile_write_file(const struct profile *p, const char *dir, const char *name,
                       char *err, size_t errlen);
/* The same, but NAME is replaced: only for a file this process wrote
 * itself (a profile written at exit() and completed after the destructors). */
int profile_replace_file(const struct profile *p, const char *dir, const char *name,
                         char *err, size_t errlen);
/* Around a file write inside the profiled process: SIGXFSZ blocked, and
 * the one a write past RLIMIT_FSIZE raised taken back, so the write fails
 * with EFBIG instead of killing the program (profile_write_file does it). */
struct profile_xfsz_guard {
    sigset_t old;
    int was_pending;
};
void profile_xfsz_block(struct profile_xfsz_guard *g);
void profile_xfsz_restore(struct profile_xfsz_guard *g);

/* Serialise p to an open descriptor.  Returns 0 or -1 (errno set). */
int profile_write_fd(const struct profile *p, int fd);
/* Serialise p into a new buffer (*buf, *len; the caller frees *buf), the
 * bytes profile_read_mem reads.  Returns 0 or -1 (errno set). */
int profile_write_mem(const struct profile *p, unsigned char **buf, size_t *len);

/*
 * Read a profile.  On failure returns NULL and puts in err one line naming
 * the file (name) and the byte offset where it went wrong, e.g.
 * "x.prof: truncated at offset 1234 (thread section needs 4096 bytes)".
 */
struct profile *profile_read_file(const char *path, char *err, size_t errlen);
struct profile *profile_read_mem(const void *buf, size_t len, const char *name,
                                 char *err, size_t errlen);

/* profile_read_mem with flags.  PROFILE_READ_NO_CRC skips the checksum so a
 * fuzzer's mutations reach the section parsers (every other check stays). */
#define PROFILE_READ_NO_CRC 0x1
struct profile *profile_read_mem_flags(const void *buf, size_t len, const char *name,
                                       int flags, char *err, size_t errlen);

#endif
