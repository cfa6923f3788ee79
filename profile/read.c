/*
 * The profile reader: a strict, validating parser of the format in
 * docs/profile-format.md.
 *
 * It must never crash on any input (it is fuzzed): every length, count,
 * offset and index is checked against the bytes actually present before it
 * is used or allocated for.  The first problem ends the read with one line
 * naming the file, the byte offset, and what was expected.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile/profile.h"
#include "profile/codec.h"
#include "profile/read_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#define PUBLIC __attribute__((visibility("default")))

struct reader {
    const unsigned char *buf;
    size_t len;                     /* bytes we may read: the header's file size */
    size_t pos;
    const char *name;
    char *err;
    size_t errlen;
    int failed;
    uint16_t minor;                 /* the file's minor version */
    struct profile *p;
    /* STRINGS, copied into the profile's arena */
    const char *strings;
    size_t nstrings_bytes;
    int have_process, have_funcs;
    /* thread sections, collected then copied into the arena */
    struct prof_thread *threads;
    uint32_t nthreads, cap_threads;
};

/* The first refusal stands; err gets "NAME: " and the message. */
static void verror(struct reader *r, const char *prefix, const char *fmt, va_list ap)
{
    if (r->failed)
        return;
    r->failed = 1;
    if (!r->err || r->errlen == 0)
        return;
    int n = snprintf(r->err, r->errlen, "%s: %s", r->name, prefix);
    if (n < 0 || (size_t)n >= r->errlen)
        return;
    vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
}

/* "NAME: KIND at offset OFF: DETAIL": the offset is written here, from
 * off, so a message cannot name another place than the one it reports. */
__attribute__((format(printf, 4, 5)))
static void fail(struct reader *r, const char *kind, size_t off, const char *fmt, ...)
{
    char prefix[64];
    snprintf(prefix, sizeof prefix, "%s at offset %zu: ", kind, off);
    va_list ap;
    va_start(ap, fmt);
    verror(r, prefix, fmt, ap);
    va_end(ap);
}

/* What concerns the input as a whole (not a profile at all): no offset. */
__attribute__((format(printf, 2, 3)))
static void refuse(struct reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    verror(r, "", fmt, ap);
    va_end(ap);
}

#define TRUNCATED(r, off, ...) fail((r), "truncated", (off), __VA_ARGS__)
#define CORRUPT(r, off, ...) fail((r), "corrupt", (off), __VA_ARGS__)
#define NO_MEMORY(r, off, ...) fail((r), "out of memory", (off), __VA_ARGS__)

static size_t left(const struct reader *r, size_t end)
{
    return r->pos < end ? end - r->pos : 0;
}

/* Make sure n bytes remain before end, else report a truncation of what. */
static int need(struct reader *r, size_t end, uint64_t n, const char *what)
{
    if (r->failed)
        return -1;
    if (n > left(r, end)) {
        TRUNCATED(r, r->pos, "%s needs %llu bytes, %zu left", what, (unsigned long long)n,
                  left(r, end));
        return -1;
    }
    return 0;
}

static int get_varint(struct reader *r, size_t end, const char *what, uint64_t *out)
{
    uint64_t v = 0;
    size_t start = r->pos;
    if (r->failed)
        return -1;
    for (int shift = 0; ; shift += 7) {
        if (r->pos >= end) {
            TRUNCATED(r, r->pos, "%s needs 1 more byte, 0 left in its section", what);
            return -1;
        }
        unsigned char b = r->buf[r->pos++];
        if (shift == 63 && b > 1) {
            CORRUPT(r, start, "%s is not a valid varint (over 64 bits)", what);
            return -1;
        }
        v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            break;
    }
    *out = v;
    return 0;
}

static int get_u32(struct reader *r, size_t end, const char *what, uint32_t *out)
{
    size_t start = r->pos;
    uint64_t v;
    if (get_varint(r, end, what, &v) < 0)
        return -1;
    if (v > UINT32_MAX) {
        CORRUPT(r, start, "%s is %llu, more than 32 bits", what, (unsigned long long)v);
        return -1;
    }
    *out = (uint32_t)v;
    return 0;
}

static int get_i32(struct reader *r, size_t end, const char *what, int32_t *out)
{
    size_t start = r->pos;
    uint64_t v;
    if (get_varint(r, end, what, &v) < 0)
        return -1;
    int64_t s = pf_unzigzag(v);
    if (s < INT32_MIN || s > INT32_MAX) {
        CORRUPT(r, start, "%s is %lld, more than 32 bits", what, (long long)s);
        return -1;
    }
    *out = (int32_t)s;
    return 0;
}

/* A count of items, each at least min_size bytes: bounded by what is left,
 * so a corrupt count can never make us allocate more than the file backs. */
static int get_count(struct reader *r, size_t end, const char *what, uint64_t min_size,
                     uint32_t *out)
{
    size_t start = r->pos;
    if (get_u32(r, end, what, out) < 0)
        return -1;
    if (min_size && *out > left(r, end) / min_size) {
        TRUNCATED(r, start, "%u %s need at least %llu bytes, %zu left", *out, what,
                  (unsigned long long)*out * min_size, left(r, end));
        return -1;
    }
    return 0;
}

/* A string reference: NULL stays NULL only where allow_null, else "". */
static int get_str(struct reader *r, size_t end, const char *what, int allow_null,
                   const char **out)
{
    size_t start = r->pos;
    uint64_t ref;
    if (get_varint(r, end, what, &ref) < 0)
        return -1;
    if (ref == 0) {
        *out = allow_null ? NULL : "";
        return 0;
    }
    if (!r->strings) {
        CORRUPT(r, start, "%s refers to a string but no string table precedes it", what);
        return -1;
    }
    if (ref - 1 >= r->nstrings_bytes) {
        CORRUPT(r, start, "%s refers to string offset %llu, the string table has %zu bytes", what,
                (unsigned long long)(ref - 1), r->nstrings_bytes);
        return -1;
    }
    *out = r->strings + (ref - 1);
    return 0;
}

static void *alloc_array(struct reader *r, size_t n, size_t size)
{
    if (n == 0)
        return NULL;
    void *a = n > SIZE_MAX / size ? NULL : profile_alloc(r->p, n * size);
    if (!a)
        NO_MEMORY(r, r->pos, "%zu items of %zu bytes", n, size);
    return a;
}

/* ---- sections --------------------------------------------------------------- */

static int read_strings(struct reader *r, size_t end)
{
    size_t n = end - r->pos;
    if (r->strings) {
        CORRUPT(r, r->pos, "a second string table");
        return -1;
    }
    if (n > 0 && r->buf[end - 1] != '\0') {
        CORRUPT(r, end - 1, "the string table does not end with a NUL byte");
        return -1;
    }
    char *s = profile_alloc(r->p, n ? n : 1);
    if (!s) {
        NO_MEMORY(r, r->pos, "the string table");
        return -1;
    }
    memcpy(s, r->buf + r->pos, n);
    r->strings = s;
    r->nstrings_bytes = n;
    r->pos = end;
    return 0;
}

static int read_process(struct reader *r, size_t end)
{
    struct prof_process *pr = &r->p->process;
    if (r->have_process) {
        CORRUPT(r, r->pos, "a second process section");
        return -1;
    }
    r->have_process = 1;
    if (get_i32(r, end, "pid", &pr->pid) < 0 || get_i32(r, end, "ppid", &pr->ppid) < 0 ||
        get_i32(r, end, "rank", &pr->rank) < 0 || get_i32(r, end, "size", &pr->size) < 0 ||
        get_str(r, end, "exe", 0, &pr->exe) < 0 ||
        get_varint(r, end, "start time", &pr->start_ns) < 0 ||
        get_varint(r, end, "duration", &pr->duration_ns) < 0 ||
        get_count(r, end, "argv strings", 1, &pr->argc) < 0)
        return -1;
    pr->argv = alloc_array(r, pr->argc, sizeof *pr->argv);
    if (r->failed)
        return -1;
    for (uint32_t i = 0; i < pr->argc; i++)
        if (get_str(r, end, "argv string", 0, &pr->argv[i]) < 0)
            return -1;
    if (get_count(r, end, "metadata pairs", 2, &pr->nmeta) < 0)
        return -1;
    pr->meta = alloc_array(r, pr->nmeta, sizeof *pr->meta);
    if (r->failed)
        return -1;
    for (uint32_t i = 0; i < pr->nmeta; i++)
        if (get_str(r, end, "metadata key", 0, &pr->meta[i].key) < 0 ||
            get_str(r, end, "metadata value", 0, &pr->meta[i].value) < 0)
            return -1;
    return r->failed ? -1 : 0;
}

static int read_funcs(struct reader *r, size_t end)
{
    struct profile *p = r->p;
    if (r->have_funcs) {
        CORRUPT(r, r->pos, "a second function table");
        return -1;
    }
    r->have_funcs = 1;
    if (get_count(r, end, "functions", 5, &p->nfuncs) < 0)
        return -1;
    p->funcs = alloc_array(r, p->nfuncs, sizeof *p->funcs);
    for (uint32_t i = 0; i < p->nfuncs && !r->failed; i++) {
        struct prof_func *f = &p->funcs[i];
        get_varint(r, end, "function address", &f->addr);
        get_str(r, end, "function name", 0, &f->name);
        get_str(r, end, "function module", 0, &f->module);
        get_str(r, end, "function file", 1, &f->file);
        get_u32(r, end, "function line", &f->line);
    }
    return r->failed ? -1 : 0;
}

static int read_nodes(struct reader *r, size_t end, struct prof_thread *t)
{
    uint32_t nfuncs = r->p->nfuncs;
    if (get_count(r, end, "nodes", 5, &t->nnodes) < 0)
        return -1;
    t->nodes = alloc_array(r, t->nnodes, sizeof *t->nodes);
    for (uint32_t i = 0; i < t->nnodes && !r->failed; i++) {
        struct prof_node *n = &t->nodes[i];
        size_t at = r->pos;
        uint64_t back;
        if (get_u32(r, end, "node function", &n->func) < 0)
            return -1;
        if (n->func >= nfuncs) {
            CORRUPT(r, at, "node %u's function %u is not below the %u functions", i, n->func, nfuncs);
            return -1;
        }
        at = r->pos;
        if (get_varint(r, end, "node parent", &back) < 0)
            return -1;
        if (back > i) {
            CORRUPT(r, at, "node %u's parent is %llu nodes back, before the first node", i,
                    (unsigned long long)back);
            return -1;
        }
        n->parent = back == 0 ? PROF_NONE : i - (uint32_t)back;
        get_varint(r, end, "node calls", &n->calls);
        get_varint(r, end, "node inclusive time", &n->incl_ns);
        get_varint(r, end, "node exclusive time", &n->excl_ns);
    }
    return r->failed ? -1 : 0;
}

static int read_metrics(struct reader *r, size_t end, struct prof_thread *t)
{
    if (get_count(r, end, "metric columns", 1 + (uint64_t)t->nnodes, &t->nmetrics) < 0)
        return -1;
    t->metrics = alloc_array(r, t->nmetrics, sizeof *t->metrics);
    for (uint32_t m = 0; m < t->nmetrics && !r->failed; m++) {
        struct prof_metric *mc = &t->metrics[m];
        if (get_str(r, end, "metric name", 0, &mc->name) < 0)
            return -1;
        mc->values = alloc_array(r, t->nnodes, sizeof *mc->values);
        for (uint32_t i = 0; i < t->nnodes && !r->failed; i++)
            get_varint(r, end, "metric value", &mc->values[i]);
    }
    return r->failed ? -1 : 0;
}

static int read_thread(struct reader *r, size_t end)
{
    if (!r->have_funcs) {
        CORRUPT(r, r->pos, "a thread section before the function table");
        return -1;
    }
    if (r->nthreads == r->cap_threads) {
        uint32_t ncap = r->cap_threads ? r->cap_threads * 2 : 8;
        struct prof_thread *t = ncap < r->cap_threads ? NULL
                              : realloc(r->threads, ncap * sizeof *t);
        if (!t) {
            NO_MEMORY(r, r->pos, "a thread section");
            return -1;
        }
        r->threads = t;
        r->cap_threads = ncap;
    }
    struct prof_thread *t = &r->threads[r->nthreads++];
    memset(t, 0, sizeof *t);
    if (get_i32(r, end, "thread id", &t->tid) < 0 ||
        get_u32(r, end, "thread index", &t->index) < 0 ||
        get_str(r, end, "thread name", 0, &t->name) < 0 ||
        read_nodes(r, end, t) < 0 || read_metrics(r, end, t) < 0)
        return -1;
    return 0;
}

static int read_section(struct reader *r)
{
    size_t at = r->pos;
    if (need(r, r->len, PF_SECTION_HDR, "a section header") < 0)
        return -1;
    uint32_t type = pf_get_u32(r->buf + r->pos);
    uint64_t len = pf_get_u64(r->buf + r->pos + 4);
    r->pos += PF_SECTION_HDR;
    static const char *const names[] = { "", "string table", "process section",
                                         "function table", "thread section" };
    const char *what = type >= 1 && type <= 4 ? names[type] : "unknown section";
    if (need(r, r->len, len, what) < 0)
        return -1;
    size_t end = r->pos + (size_t)len;
    if (type > PF_SEC_STRINGS && type <= PF_SEC_THREAD && !r->strings) {
        CORRUPT(r, at, "%s before the string table", what);
        return -1;
    }
    int rc;
    switch (type) {
    case PF_SEC_STRINGS: rc = read_strings(r, end); break;
    case PF_SEC_PROCESS: rc = read_process(r, end); break;
    case PF_SEC_FUNCS:   rc = read_funcs(r, end); break;
    case PF_SEC_THREAD:  rc = read_thread(r, end); break;
    default:
        /* Forward compatibility: a newer writer's section we do not know. */
        r->pos = end;
        return 0;
    }
    if (rc < 0 || r->failed)
        return -1;
    /* A newer minor version may append fields to a known section. */
    if (r->pos != end && r->minor <= PF_MINOR) {
        CORRUPT(r, r->pos, "%llu unexpected bytes at the end of the %s that started at offset %zu",
                (unsigned long long)(end - r->pos), what, at);
        return -1;
    }
    r->pos = end;
    return 0;
}

/* ---- header ----------------------------------------------------------------- */

static int read_header(struct reader *r, size_t avail, int check_crc)
{
    const unsigned char *b = r->buf;
    size_t magic_n = avail < PF_MAGIC_LEN ? avail : PF_MAGIC_LEN;
    if (avail == 0) {
        TRUNCATED(r, 0, "empty file, a hookit profile header needs %d bytes", PF_HEADER_SIZE);
        return -1;
    }
    if (memcmp(b, PF_MAGIC, magic_n) != 0) {
        refuse(r, "not a hookit profile (bad magic)");
        return -1;
    }
    if (avail < PF_HEADER_SIZE) {
        TRUNCATED(r, avail, "header needs %d bytes, %zu left", PF_HEADER_SIZE, avail);
        return -1;
    }
    uint16_t major = pf_get_u16(b + PF_OFF_MAJOR), minor = pf_get_u16(b + PF_OFF_MINOR);
    if (major > PF_MAJOR) {
        fail(r, "unsupported", PF_OFF_MAJOR, "format version %u.%u is newer than this hookit reads "
             "(%d.%d): upgrade hookit", major, minor, PF_MAJOR, PF_MINOR);
        return -1;
    }
    if (major < 1) {
        CORRUPT(r, PF_OFF_MAJOR, "format version %u.%u is not a released version", major, minor);
        return -1;
    }
    r->minor = minor;
    uint32_t hsize = pf_get_u32(b + PF_OFF_HDRSIZE);
    uint64_t fsize = pf_get_u64(b + PF_OFF_FILESIZE);
    if (hsize < PF_HEADER_SIZE || hsize > fsize) {
        CORRUPT(r, PF_OFF_HDRSIZE, "header size %u (expected at least %d and at most the file size %llu)",
                hsize, PF_HEADER_SIZE, (unsigned long long)fsize);
        return -1;
    }
    if (fsize > avail) {
        TRUNCATED(r, avail, "the header says the file has %llu bytes, %zu present",
                  (unsigned long long)fsize, avail);
        return -1;
    }
    if (fsize < avail) {
        CORRUPT(r, (size_t)fsize, "%zu bytes of trailing data after the end the header gives",
                avail - (size_t)fsize);
        return -1;
    }
    if (hsize > avail) {
        TRUNCATED(r, avail, "header needs %u bytes", hsize);
        return -1;
    }
    r->len = (size_t)fsize;
    if (check_crc) {
        uint32_t stored = pf_get_u32(b + PF_OFF_CRC);
        uLong crc = crc32(0, b, PF_CRC_OFFSET);
        size_t from = PF_CRC_OFFSET + 4, rest = r->len - from;
        /* crc32 takes uInt lengths: feed large files in pieces. */
        while (rest > 0) {
            uInt k = rest > (1u << 30) ? (1u << 30) : (uInt)rest;
            crc = crc32(crc, b + from, k);
            from += k;
            rest -= k;
        }
        if ((uint32_t)crc != stored) {
            CORRUPT(r, PF_OFF_CRC, "checksum mismatch (stored 0x%08x, computed 0x%08x over bytes 0..%zu): "
                    "the file is damaged", stored, (uint32_t)crc, r->len);
            return -1;
        }
    }
    r->pos = hsize;
    return 0;
}

/* ---- entry points ------------------------------------------------------------ */

PUBLIC struct profile *profile_read_mem_flags(const void *buf, size_t len, const char *name,
                                              int flags, char *err, size_t errlen)
{
    struct reader r = { .buf = buf, .len = len, .name = name ? name : "(profile)",
                        .err = err, .errlen = errlen };
    if (err && errlen)
        err[0] = '\0';
    r.p = profile_new();
    if (!r.p) {
        refuse(&r, "out of memory");
        return NULL;
    }
    if (read_header(&r, len, !(flags & PROFILE_READ_NO_CRC)) < 0)
        goto bad;
    while (r.pos < r.len)
        if (read_section(&r) < 0)
            goto bad;
    if (!r.strings || !r.have_process || !r.have_funcs) {
        CORRUPT(&r, r.len, "the file ends without its %s",
                !r.strings ? "string table" : !r.have_process ? "process section"
                                                              : "function table");
        goto bad;
    }
    r.p->nthreads = r.nthreads;
    r.p->threads = alloc_array(&r, r.nthreads, sizeof *r.p->threads);
    if (r.failed)
        goto bad;
    if (r.nthreads)
        memcpy(r.p->threads, r.threads, r.nthreads * sizeof *r.threads);
    free(r.threads);
    return r.p;
bad:
    free(r.threads);
    profile_free(r.p);
    return NULL;
}

PUBLIC struct profile *profile_read_mem(const void *buf, size_t len, const char *name,
                                        char *err, size_t errlen)
{
    return profile_read_mem_flags(buf, len, name, 0, err, errlen);
}

PUBLIC struct profile *profile_read_file(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot open: %s", path, strerror(e));
        errno = e;
        return NULL;
    }
    size_t len;
    unsigned char *buf = profile_read_fd(fd, &len);
    if (!buf) {
        int e = errno;
        if (err && errlen && e == ENOMEM)
            snprintf(err, errlen, "%s: out of memory reading offset %zu", path, len);
        else if (err && errlen)
            snprintf(err, errlen, "%s: read error at offset %zu: %s", path, len, strerror(e));
        close(fd);
        errno = e;
        return NULL;
    }
    close(fd);
    struct profile *p = profile_read_mem(buf, len, path, err, errlen);
    free(buf);
    if (!p)
        errno = EINVAL;
    return p;
}
