/*
 * Names for JIT-compiled code: /tmp/perf-<pid>.map, the format perf reads
 * and JIT runtimes write (hookit's JVMTI agent for the JVM, V8, LuaJIT...):
 * one "START SIZE NAME" line per piece of code, START and SIZE in hex.
 *
 * Consulted only for addresses in anonymous mappings.  Read on first need
 * and again whenever the file has grown (the runtime appends as it
 * compiles); a later line for the same address wins, as in perf.  Only a
 * regular file owned by our own user is believed: /tmp is shared.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "a2n/a2n_internal.h"

struct jit_sym {
    uint64_t start, end;
    size_t seq;                 /* line number: later lines win */
    const char *name;           /* interned */
};

struct a2n_perfmap {
    char path[64];
    off_t size_read;
    struct jit_sym *syms;
    size_t n;
};

static int by_start(const void *x, const void *y)
{
    const struct jit_sym *a = x, *b = y;
    if (a->start != b->start)
        return a->start < b->start ? -1 : 1;
    return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int parse_line(struct a2n *a, char *line, size_t seq, struct jit_sym *out)
{
    char *end;
    errno = 0;
    unsigned long long start = strtoull(line, &end, 16);
    if (end == line || *end != ' ' || errno)
        return -1;
    char *p = end + 1;
    unsigned long long size = strtoull(p, &end, 16);
    if (end == p || *end != ' ' || errno || size == 0 || start + size < start)
        return -1;
    char *name = end + 1;
    name[strcspn(name, "\n")] = 0;
    if (!*name)
        return -1;
    *out = (struct jit_sym){ start, start + size, seq, a2n_intern(&a->strings, name) };
    return out->name ? 0 : -1;
}

/* (Re)read the whole file when it changed size. */
static void refresh(struct a2n *a, struct a2n_perfmap *m)
{
    int fd = open(m->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    struct stat st;
    FILE *f = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
        st.st_size == m->size_read || !(f = fdopen(fd, "r"))) {
        close(fd);
        return;
    }
    struct jit_sym *syms = NULL;
    size_t n = 0, cap = 0, seq = 0;
    char *line = NULL;
    size_t linecap = 0;
    while (getline(&line, &linecap, f) > 0) {
        struct jit_sym s;
        if (parse_line(a, line, seq++, &s) != 0)
            continue;
        if (n == cap) {
            size_t c = cap ? cap * 2 : 256;
            struct jit_sym *bigger = realloc(syms, c * sizeof *bigger);
            if (!bigger)
                break;
            syms = bigger;
            cap = c;
        }
        syms[n++] = s;
    }
    free(line);
    fclose(f);
    qsort(syms, n, sizeof *syms, by_start);
    free(m->syms);
    m->syms = syms;
    m->n = n;
    m->size_read = st.st_size;
}

static const struct jit_sym *find(const struct a2n_perfmap *m, uint64_t addr)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {           /* first entry starting after addr */
        size_t mid = lo + (hi - lo) / 2;
        if (m->syms[mid].start <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    const struct jit_sym *best = NULL;
    for (size_t i = lo, looked = 0; i > 0 && looked < 64; i--, looked++) {
        const struct jit_sym *s = &m->syms[i - 1];
        if (addr < s->end && (!best || s->seq > best->seq))
            best = s;
    }
    return best;
}

int a2n_perfmap_lookup(struct a2n *a, uint64_t addr, struct a2n_result *out)
{
    if (a->pid < 0)
        return -1;              /* a saved maps copy: no live map to read */
    if (!a->perfmap) {
        a->perfmap = calloc(1, sizeof *a->perfmap);
        if (!a->perfmap)
            return -1;
        snprintf(a->perfmap->path, sizeof a->perfmap->path, "/tmp/perf-%d.map",
                 (int)(a->pid ? a->pid : getpid()));
    }
    struct a2n_perfmap *m = a->perfmap;
    const struct jit_sym *s = find(m, addr);
    if (!s) {
        refresh(a, m);
        s = find(m, addr);
    }
    if (!s)
        return -1;
    out->flags = A2N_FOUND_SYMBOL;
    out->module = "[jit]";
    out->module_path = a2n_intern(&a->strings, m->path);
    if (!out->module_path)
        out->module_path = "[jit]";
    out->function = s->name;
    out->symbol_addr = s->start;
    out->module_offset = addr - s->start;
    return 0;
}

void a2n_perfmap_free(struct a2n *a)
{
    if (a->perfmap) {
        free(a->perfmap->syms);
        free(a->perfmap);
        a->perfmap = NULL;
    }
}
