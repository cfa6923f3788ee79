/*
 * The trace reader: validates a whole .trace file when it is opened (so it
 * never crashes on any input: it is fuzzed), iterates a thread's events,
 * and turns the trace into calling-context trees (a struct profile) so
 * every report and export works on traces too.  Format: docs/trace-format.md.
 */
#include "profile/procinfo.h"
#include "profile/trace.h"
#include "profile/u64map.h"
#include "profile/codec.h"
#include "profile/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PUBLIC __attribute__((visibility("default")))

struct tr_reader {
    const char *name;
    char *err;
    size_t errlen;
    int failed;
};

__attribute__((format(printf, 3, 4)))
static void fail(struct tr_reader *r, uint64_t off, const char *fmt, ...)
{
    if (r->failed)
        return;
    r->failed = 1;
    if (!r->err || !r->errlen)
        return;
    int n = snprintf(r->err, r->errlen, "%s: corrupt trace at offset %llu: ", r->name,
                     (unsigned long long)off);
    if (n < 0 || (size_t)n >= r->errlen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
    va_end(ap);
}

PUBLIC int trace_is_trace(const void *buf, size_t len)
{
    return len >= TR_MAGIC_LEN && memcmp(buf, TR_MAGIC, TR_MAGIC_LEN) == 0;
}

PUBLIC int trace_file_is_trace(const char *path)
{
    unsigned char magic[TR_MAGIC_LEN];
    FILE *f = fopen(path, "rbe");
    if (!f)
        return 0;
    size_t n = fread(magic, 1, sizeof magic, f);
    fclose(f);
    return trace_is_trace(magic, n);
}

PUBLIC void trace_free(struct trace *tr)
{
    if (!tr)
        return;
    free(tr->path);
    free(tr->buf);
    free(tr->threads);
    free(tr->id_to_func);
    u64map_free(&tr->id_sparse);
    profile_free(tr->meta);
    free(tr);
}

static int read_header(struct trace *tr, struct tr_reader *r)
{
    const unsigned char *h = tr->buf;
    if (tr->len < TR_HEADER_SIZE) {
        fail(r, tr->len, "truncated: %zu bytes, a header needs %d", tr->len, TR_HEADER_SIZE);
        return -1;
    }
    if (!trace_is_trace(h, tr->len)) {
        fail(r, 0, "not a hookit trace (bad magic)");
        return -1;
    }
    uint16_t major = pf_get_u16(h + TR_OFF_MAJOR);
    if (major != TR_MAJOR) {
        fail(r, TR_OFF_MAJOR, "format version %u.%u, this hookit reads %d.x", major,
             pf_get_u16(h + TR_OFF_MINOR), TR_MAJOR);
        return -1;
    }
    uint32_t hsize = pf_get_u32(h + TR_OFF_HDRSIZE);
    if (hsize < TR_HEADER_SIZE || hsize > tr->len) {
        fail(r, TR_OFF_HDRSIZE, "header size %u out of range", hsize);
        return -1;
    }
    uint64_t fsize = pf_get_u64(h + TR_OFF_FILESIZE);
    if (fsize != tr->len) {
        fail(r, fsize < tr->len ? fsize : tr->len, "%s: file is %zu bytes, header says %llu",
             fsize > tr->len ? "truncated" : "trailing bytes", tr->len, (unsigned long long)fsize);
        return -1;
    }
    uint64_t bits = pf_get_u64(h + TR_OFF_TICKS_PER_NS);
    memcpy(&tr->ticks_per_ns, &bits, sizeof bits);
    if (!isfinite(tr->ticks_per_ns) || tr->ticks_per_ns <= 1e-6 || tr->ticks_per_ns > 1e6) {
        fail(r, TR_OFF_TICKS_PER_NS, "clock rate out of range");
        return -1;
    }
    tr->tick0 = pf_get_u64(h + TR_OFF_TICK0);
    tr->tick_end = pf_get_u64(h + TR_OFF_TICK_END);
    tr->flags = pf_get_u32(h + TR_OFF_FLAGS);
    tr->nthreads = pf_get_u32(h + TR_OFF_NTHREADS);
    if (tr->nthreads > (tr->len - hsize) / (TR_SECTION_HDR + TR_THREAD_HDR)) {
        fail(r, TR_OFF_NTHREADS, "%u threads cannot fit in the file", tr->nthreads);
        return -1;
    }
    tr->threads = calloc(tr->nthreads ? tr->nthreads : 1, sizeof *tr->threads);
    if (!tr->threads) {
        fail(r, TR_OFF_NTHREADS, "out of memory");
        return -1;
    }
    return (int)hsize;
}

static int read_thread(struct trace *tr, struct tr_reader *r, uint32_t k, size_t off, uint64_t len)
{
    const unsigned char *b = tr->buf + off;
    if (len < TR_THREAD_HDR) {
        fail(r, off, "thread section of %llu bytes, needs at least %d", (unsigned long long)len,
             TR_THREAD_HDR);
        return -1;
    }
    if (k >= tr->nthreads) {
        fail(r, off - TR_SECTION_HDR, "more thread sections than the header's %u", tr->nthreads);
        return -1;
    }
    struct trace_thread *t = &tr->threads[k];
    t->tid = (int32_t)pf_get_u32(b + TR_TH_TID);
    t->index = pf_get_u32(b + TR_TH_INDEX);
    t->name = NULL;             /* interned once the embedded profile is read */
    t->nrecords = pf_get_u64(b + TR_TH_NRECORDS);
    t->short_dropped = pf_get_u64(b + TR_TH_SHORT);
    t->lost = pf_get_u64(b + TR_TH_LOST);
    t->unmatched = pf_get_u64(b + TR_TH_UNMATCHED);
    t->flags = pf_get_u32(b + TR_TH_FLAGS);
    if (t->nrecords != (len - TR_THREAD_HDR) / 8 || (len - TR_THREAD_HDR) % 8) {
        fail(r, off + TR_TH_NRECORDS, "thread %u: %llu records do not match a section of %llu bytes",
             k, (unsigned long long)t->nrecords, (unsigned long long)len);
        return -1;
    }
    t->records = b + TR_THREAD_HDR;
    t->records_offset = off + TR_THREAD_HDR;
    return 0;
}

static int idmap_dense(struct trace *tr, struct tr_reader *r, size_t off, const unsigned char *b,
                       uint32_t n)
{
    tr->id_to_func = malloc(((size_t)tr->nids + 1) * sizeof *tr->id_to_func);
    if (!tr->id_to_func) {
        fail(r, off, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < tr->nids; i++)
        tr->id_to_func[i] = PROF_NONE;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = pf_get_u32(b + 4 + 4 * (size_t)i);
        if (tr->id_to_func[id] != PROF_NONE) {
            fail(r, off + 4 + 4 * (uint64_t)i, "function id %u listed twice", id);
            return -1;
        }
        tr->id_to_func[id] = i;
    }
    return (int)n;
}

static int idmap_sparse(struct trace *tr, struct tr_reader *r, size_t off, const unsigned char *b,
                        uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = pf_get_u32(b + 4 + 4 * (size_t)i);
        if (u64map_room(&tr->id_sparse) != 0) {
            fail(r, off, "out of memory");
            return -1;
        }
        size_t j = u64map_slot(&tr->id_sparse, (uint64_t)id + 1);
        if (tr->id_sparse.keys[j]) {
            fail(r, off + 4 + 4 * (uint64_t)i, "function id %u listed twice", id);
            return -1;
        }
        u64map_put(&tr->id_sparse, j, (uint64_t)id + 1, i);
    }
    return (int)n;
}

/* The function (index into meta->funcs) of a record's id, PROF_NONE if the
 * function table does not list it. */
static uint32_t func_of_id(const struct trace *tr, uint32_t id)
{
    if (tr->id_to_func)
        return id < tr->nids ? tr->id_to_func[id] : PROF_NONE;
    if (!tr->id_sparse.keys)
        return PROF_NONE;
    size_t j = u64map_slot(&tr->id_sparse, (uint64_t)id + 1);
    return tr->id_sparse.keys[j] ? tr->id_sparse.vals[j] : PROF_NONE;
}

static int read_idmap(struct trace *tr, struct tr_reader *r, size_t off, uint64_t len)
{
    const unsigned char *b = tr->buf + off;
    if (len < 4 || (len - 4) % 4 || pf_get_u32(b) != (len - 4) / 4) {
        fail(r, off, "function id map of %llu bytes is inconsistent", (unsigned long long)len);
        return -1;
    }
    uint32_t n = pf_get_u32(b);
    uint32_t max = 0;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t id = pf_get_u32(b + 4 + 4 * (size_t)i);
        if (id > TR_MAX_ID) {
            fail(r, off + 4 + 4 * (uint64_t)i, "function id %u out of range", id);
            return -1;
        }
        if (id + 1 > max)
            max = id + 1;
    }
    tr->nids = max;
    /* A table indexed by id while that stays proportional to the map itself;
     * else (ids are hash slots, one function may have id 4 million) a hash
     * map of the n ids: memory follows the input, not its largest id. */
    if (max <= 2 * (uint64_t)n + 1024)
        return idmap_dense(tr, r, off, b, n);
    return idmap_sparse(tr, r, off, b, n);
}

static int read_meta(struct trace *tr, struct tr_reader *r, size_t off, uint64_t len, int flags)
{
    char name[512], err[1024];
    snprintf(name, sizeof name, "%s (embedded profile at offset %zu)", r->name, off);
    tr->meta = profile_read_mem_flags(tr->buf + off, (size_t)len, name, flags, err, sizeof err);
    if (!tr->meta) {
        if (!r->failed && r->err && r->errlen)
            snprintf(r->err, r->errlen, "%s", err);
        r->failed = 1;
        return -1;
    }
    tr->meta_off = off;
    tr->meta_len = (size_t)len;
    return 0;
}

/* Every record of every thread decoded once: ids known, kinds valid. */
static int check_records(struct trace *tr, struct tr_reader *r)
{
    for (uint32_t k = 0; k < tr->nthreads; k++) {
        const struct trace_thread *t = &tr->threads[k];
        for (uint64_t i = 0; i < t->nrecords; i++) {
            uint64_t rec = pf_get_u64(t->records + 8 * i);
            unsigned kind = rec & 3;
            uint32_t id = (uint32_t)(rec >> 2) & TR_MAX_ID;
            uint64_t at = t->records_offset + 8 * i;
            if (kind == 3) {
                fail(r, at, "thread %u: unknown record kind 3", k);
                return -1;
            }
            if (kind != TR_REC_TIME && func_of_id(tr, id) == PROF_NONE) {
                fail(r, at, "thread %u: function id %u is not in the function table", k, id);
                return -1;
            }
        }
    }
    return 0;
}

static int parse(struct trace *tr, struct tr_reader *r, int flags)
{
    int hsize = read_header(tr, r);
    if (hsize < 0)
        return -1;
    size_t off = (size_t)hsize;
    uint32_t nthreads = 0;
    int have_idmap = 0;
    /* Thread names are interned later (the embedded profile comes last). */
    struct { size_t off; uint64_t len; } idmap = { 0, 0 };
    while (off < tr->len) {
        if (tr->len - off < TR_SECTION_HDR) {
            fail(r, off, "truncated section header (%zu bytes left, needs %d)", tr->len - off,
                 TR_SECTION_HDR);
            return -1;
        }
        uint32_t type = pf_get_u32(tr->buf + off);
        uint64_t len = pf_get_u64(tr->buf + off + 4);
        size_t body = off + TR_SECTION_HDR;
        if (len > tr->len - body) {
            fail(r, off + 4, "section of %llu bytes runs past the end of the file (%zu bytes left)",
                 (unsigned long long)len, tr->len - body);
            return -1;
        }
        int rc = 0;
        if (type == TR_SEC_THREAD) {
            rc = read_thread(tr, r, nthreads++, body, len);
        } else if (type == TR_SEC_PROFILE) {
            if (tr->meta) {
                fail(r, off, "a second embedded profile");
                return -1;
            }
            rc = read_meta(tr, r, body, len, flags);
        } else if (type == TR_SEC_IDMAP) {
            if (have_idmap++) {
                fail(r, off, "a second function id map");
                return -1;
            }
            idmap.off = body;
            idmap.len = len;
        }                       /* other types: from a newer minor version, skipped */
        if (rc < 0)
            return -1;
        off = body + (size_t)len;
    }
    if (nthreads != tr->nthreads) {
        fail(r, TR_OFF_NTHREADS, "header lists %u threads, the file has %u", tr->nthreads, nthreads);
        return -1;
    }
    if (!tr->meta || !have_idmap) {
        fail(r, tr->len, "truncated: no %s section", tr->meta ? "function id map" : "embedded profile");
        return -1;
    }
    int n = read_idmap(tr, r, idmap.off, idmap.len);
    if (n < 0)
        return -1;
    if ((uint32_t)n != tr->meta->nfuncs) {
        fail(r, idmap.off, "function id map has %d entries for %u functions", n, tr->meta->nfuncs);
        return -1;
    }
    for (uint32_t k = 0; k < tr->nthreads; k++) {
        char name[17];
        memcpy(name, tr->threads[k].records - TR_THREAD_HDR + TR_TH_NAME, 16);
        name[16] = 0;
        if (!(tr->threads[k].name = profile_intern(tr->meta, name))) {
            fail(r, 0, "out of memory");
            return -1;
        }
    }
    return check_records(tr, r);
}

PUBLIC struct trace *trace_read_mem(const void *buf, size_t len, const char *name, int flags,
                                    char *err, size_t errlen)
{
    struct tr_reader r = { name ? name : "(trace)", err, errlen, 0 };
    struct trace *tr = calloc(1, sizeof *tr);
    if (tr) {
        tr->path = strdup(r.name);
        tr->buf = malloc(len ? len : 1);
        tr->len = len;
    }
    if (!tr || !tr->path || !tr->buf) {
        snprintf(err, errlen, "%s: out of memory", r.name);
        trace_free(tr);
        return NULL;
    }
    memcpy(tr->buf, buf, len);
    r.name = tr->path;
    if (parse(tr, &r, flags) != 0) {
        trace_free(tr);
        return NULL;
    }
    return tr;
}

PUBLIC struct trace *trace_read_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t len;
    unsigned char *buf = profile_read_fd(fd, &len);
    int e = errno;
    close(fd);
    if (!buf) {
        snprintf(err, errlen, "%s: %s", path, e == ENOMEM ? "out of memory" : "read error");
        return NULL;
    }
    struct trace *tr = trace_read_mem(buf, len, path, 0, err, errlen);
    free(buf);
    return tr;
}

PUBLIC uint64_t trace_ticks_to_ns(const struct trace *tr, uint64_t tick)
{
    if (tick <= tr->tick0)
        return 0;
    return (uint64_t)((double)(tick - tr->tick0) / tr->ticks_per_ns + 0.5);
}

/* ---- events ------------------------------------------------------------------ */

PUBLIC int trace_cursor_init(struct trace_cursor *c, const struct trace *tr,
                             const struct trace_thread *th)
{
    memset(c, 0, sizeof *c);
    c->tr = tr;
    c->th = th;
    c->tick = tr->tick0;
    c->cap = 256;
    c->stack = malloc(c->cap * sizeof *c->stack);
    return c->stack ? 0 : -1;
}

PUBLIC void trace_cursor_free(struct trace_cursor *c)
{
    free(c->stack);
    c->stack = NULL;
}

static void make_event(struct trace_cursor *c, struct trace_event *ev, enum trace_event_kind kind,
                       uint32_t func)
{
    ev->kind = kind;
    ev->func = func;
    ev->depth = c->depth;
    ev->tick = c->tick;
    ev->ns = trace_ticks_to_ns(c->tr, c->tick);
}

PUBLIC int trace_next(struct trace_cursor *c, struct trace_event *ev)
{
    for (;;) {
        if (c->pending_close) {             /* a longjmp's skipped exits, or the end */
            c->pending_close--;
            c->depth--;
            make_event(c, ev, TRACE_EXIT, c->stack[c->depth]);
            return 1;
        }
        if (c->i >= c->th->nrecords) {
            if (c->closing || c->depth == 0)
                return 0;
            c->closing = 1;
            if (c->tr->tick_end > c->tick)
                c->tick = c->tr->tick_end;
            c->pending_close = c->depth;
            continue;
        }
        uint64_t rec = pf_get_u64(c->th->records + 8 * c->i++);
        unsigned kind = rec & 3;
        if (kind == TR_REC_TIME) {
            c->tick = rec >> 2;
            continue;
        }
        uint32_t id = (uint32_t)(rec >> 2) & TR_MAX_ID;
        uint32_t func = func_of_id(c->tr, id);      /* validated when read */
        c->tick += rec >> 24;
        if (kind == TR_REC_ENTER) {
            if (c->depth == c->cap) {
                uint32_t *s = realloc(c->stack, (size_t)c->cap * 2 * sizeof *s);
                if (!s)
                    return 0;
                c->stack = s;
                c->cap *= 2;
            }
            make_event(c, ev, TRACE_ENTER, func);
            c->stack[c->depth++] = func;
            return 1;
        }
        uint32_t d = c->depth;
        while (d > 0 && c->stack[d - 1] != func)
            d--;
        if (d == 0)
            continue;                       /* matches no open call: skipped */
        c->pending_close = c->depth - d + 1;
    }
}

/* ---- trees ----------------------------------------------------------------------- */

struct cct {
    struct prof_node *nodes;
    uint32_t n, cap;
    struct u64map child_map;                /* (parent + 1) << 32 | func, bit 63 set -> node */
};

/* The child of parent (PROF_NONE for a root) for func, created when new. */
static uint32_t cct_child(struct cct *t, uint32_t parent, uint32_t func)
{
    if (u64map_room(&t->child_map) != 0)
        return PROF_NONE;
    uint64_t key = (uint64_t)(parent == PROF_NONE ? 0 : parent + 1) << 32 | func;
    key |= 1ull << 63;                      /* never 0 */
    size_t j = u64map_slot(&t->child_map, key);
    if (t->child_map.keys[j])
        return t->child_map.vals[j];
    if (t->n == t->cap) {
        uint32_t cap = t->cap ? t->cap * 2 : 256;
        struct prof_node *a = realloc(t->nodes, (size_t)cap * sizeof *a);
        if (!a)
            return PROF_NONE;
        t->nodes = a;
        t->cap = cap;
    }
    t->nodes[t->n] = (struct prof_node){ .func = func, .parent = parent };
    u64map_put(&t->child_map, j, key, t->n);
    return t->n++;
}

/* The nodes renumbered in preorder (children in order of first call), with
 * exclusive times, into th. */
static int cct_emit(struct cct *t, struct profile *p, struct prof_thread *th)
{
    uint32_t n = t->n;
    uint32_t *start = calloc((size_t)n + 2, sizeof *start), *child = malloc(((size_t)n + 1) * 4);
    uint32_t *order = malloc(((size_t)n + 1) * 4), *newidx = malloc(((size_t)n + 1) * 4);
    uint32_t *stack = malloc(((size_t)n + 1) * 4);
    th->nodes = profile_alloc(p, (size_t)n * sizeof *th->nodes + 1);
    int rc = start && child && order && newidx && stack && th->nodes ? 0 : -1;
    if (rc == 0) {
        for (uint32_t i = 0; i < n; i++)
            start[(t->nodes[i].parent == PROF_NONE ? n : t->nodes[i].parent) + 1]++;
        for (uint32_t i = 0; i <= n; i++)
            start[i + 1] += start[i];
        uint32_t *fill = order;             /* borrowed as a cursor array */
        memcpy(fill, start, ((size_t)n + 1) * 4);
        for (uint32_t i = 0; i < n; i++) {
            uint32_t par = t->nodes[i].parent == PROF_NONE ? n : t->nodes[i].parent;
            child[fill[par]++] = i;
        }
        /* Preorder: push children in reverse so the first comes out first. */
        uint32_t sp = 0, k = 0;
        for (uint32_t c = start[n + 1]; c-- > start[n];)
            stack[sp++] = child[c];
        while (sp > 0) {
            uint32_t v = stack[--sp];
            newidx[v] = k;
            struct prof_node nd = t->nodes[v];
            nd.parent = nd.parent == PROF_NONE ? PROF_NONE : newidx[nd.parent];
            th->nodes[k++] = nd;
            for (uint32_t c = start[v + 1]; c-- > start[v];)
                stack[sp++] = child[c];
        }
        th->nnodes = k;
        /* Exclusive = inclusive - the children's inclusive (children follow
         * their parent); rounding to ns may leave a child sum 1 ns over. */
        uint64_t *sums = calloc((size_t)k + 1, sizeof *sums);
        if (!sums)
            rc = -1;
        for (uint32_t i = k; rc == 0 && i-- > 0;) {
            struct prof_node *nd = &th->nodes[i];
            nd->excl_ns = nd->incl_ns > sums[i] ? nd->incl_ns - sums[i] : 0;
            if (nd->parent != PROF_NONE)
                sums[nd->parent] += nd->incl_ns;
        }
        free(sums);
    }
    free(start);
    free(child);
    free(order);
    free(newidx);
    free(stack);
    return rc;
}

static int thread_tree(const struct trace *tr, const struct trace_thread *tt, struct profile *p,
                       struct prof_thread *th)
{
    struct cct t = { 0 };
    struct trace_cursor c;
    struct { uint32_t node; uint64_t t0; } *stack = NULL;
    uint32_t cap = 0;
    int rc = trace_cursor_init(&c, tr, tt);
    struct trace_event ev;
    while (rc == 0 && trace_next(&c, &ev)) {
        if (ev.kind == TRACE_ENTER) {
            if (ev.depth >= cap) {
                cap = cap ? cap * 2 : 256;
                void *s = realloc(stack, (size_t)cap * sizeof *stack);
                if (!s) {
                    rc = -1;
                    break;
                }
                stack = s;
            }
            uint32_t parent = ev.depth ? stack[ev.depth - 1].node : PROF_NONE;
            uint32_t node = cct_child(&t, parent, ev.func);
            if (node == PROF_NONE) {
                rc = -1;
                break;
            }
            t.nodes[node].calls++;
            stack[ev.depth].node = node;
            stack[ev.depth].t0 = ev.tick;
        } else {
            /* ticks for now: converted once per node below, so a parent's
             * time is never less than its children's sum by rounding */
            t.nodes[stack[ev.depth].node].incl_ns += ev.tick - stack[ev.depth].t0;
        }
    }
    for (uint32_t i = 0; rc == 0 && i < t.n; i++)
        t.nodes[i].incl_ns = (uint64_t)((double)t.nodes[i].incl_ns / tr->ticks_per_ns + 0.5);
    if (rc == 0) {
        th->tid = tt->tid;
        th->index = tt->index;
        th->name = profile_intern(p, tt->name ? tt->name : "");
        rc = th->name ? cct_emit(&t, p, th) : -1;
    }
    trace_cursor_free(&c);
    free(stack);
    free(t.nodes);
    u64map_free(&t.child_map);
    return rc;
}

PUBLIC struct profile *trace_to_profile(const struct trace *tr, char *err, size_t errlen)
{
    /* A fresh copy of the embedded profile (process + functions) gets the threads. */
    struct profile *p = profile_read_mem_flags(tr->buf + tr->meta_off, tr->meta_len, tr->path,
                                               PROFILE_READ_NO_CRC, err, errlen);
    if (!p)
        return NULL;
    int rc = 0;
    p->threads = profile_alloc(p, ((size_t)tr->nthreads + 1) * sizeof *p->threads);
    if (!p->threads)
        rc = -1;
    uint64_t short_calls = 0, lost = 0, unmatched = 0;
    for (uint32_t k = 0; rc == 0 && k < tr->nthreads; k++) {
        memset(&p->threads[k], 0, sizeof p->threads[k]);
        rc = thread_tree(tr, &tr->threads[k], p, &p->threads[k]);
        short_calls += tr->threads[k].short_dropped;
        lost += tr->threads[k].lost;
        unmatched += tr->threads[k].unmatched;
        p->nthreads = k + 1;
    }
    rc |= profile_set_meta(p, "source", "trace");
    rc |= procinfo_set_meta_u64(p, "trace_short_calls_dropped", short_calls);
    rc |= procinfo_set_meta_u64(p, "trace_events_lost", lost);
    rc |= procinfo_set_meta_u64(p, "unmatched_exits", unmatched);
    if (tr->flags & TR_FLAG_SIZE_CAP)
        rc |= profile_set_meta(p, "trace_truncated", "size cap reached");
    if (rc != 0) {
        snprintf(err, errlen, "%s: out of memory building the call trees", tr->path);
        profile_free(p);
        return NULL;
    }
    return p;
}
