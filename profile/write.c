/*
 * The profile writer: serialisation (docs/profile-format.md) and the atomic
 * file write.
 *
 * This runs inside the profiled process at exit, so it uses no stdio, keeps
 * the caller's errno on success, closes every descriptor it opens and frees
 * every block it allocates.
 *
 * Serialisation is two passes over the model with the same encoder: the
 * first only measures (each section's length and crc32), the second writes.
 * The header, which carries the file length and the checksum, can then go
 * first even on a pipe, and nothing but a 64 KiB buffer and the string
 * table is held in memory.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "profile/profile.h"
#include "profile/codec.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>
#include <zlib.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif

#define PUBLIC __attribute__((visibility("default")))

#define OUT_BUF_SIZE (64 * 1024)

/* ---- string table -------------------------------------------------------- */

struct str_entry {
    const char *s;
    size_t len;
    uint64_t off;                   /* offset in the STRINGS section */
};

struct strtab {
    struct str_entry *entries;      /* in order of first use */
    size_t n, cap;
    uint32_t *slots;                /* entry index + 1, 0 = empty */
    size_t nslots;
    uint64_t size;                  /* bytes of the section body */
};

static uint64_t hash_bytes(const char *s, size_t *len)
{
    uint64_t h = 1469598103934665603ull;
    const unsigned char *q = (const unsigned char *)s;
    for (; *q; q++)
        h = (h ^ *q) * 1099511628211ull;
    *len = (size_t)(q - (const unsigned char *)s);
    return h;
}

/* The slot holding s, or the empty slot where it belongs. */
static size_t strtab_slot(const struct strtab *t, const char *s, size_t *len)
{
    size_t mask = t->nslots - 1;
    size_t j = hash_bytes(s, len) & mask;
    for (; t->slots[j]; j = (j + 1) & mask) {
        const struct str_entry *e = &t->entries[t->slots[j] - 1];
        if (e->s == s || (e->len == *len && memcmp(e->s, s, *len) == 0))
            return j;
    }
    return j;
}

static int strtab_rehash(struct strtab *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint32_t *slots = calloc(n, sizeof *slots);
    if (!slots)
        return -1;
    free(t->slots);
    t->slots = slots;
    t->nslots = n;
    for (size_t i = 0; i < t->n; i++) {
        size_t len, j = hash_bytes(t->entries[i].s, &len) & (n - 1);
        while (slots[j])
            j = (j + 1) & (n - 1);
        slots[j] = (uint32_t)(i + 1);
    }
    return 0;
}

static int strtab_add(struct strtab *t, const char *s)
{
    if (!s)
        return 0;
    if (t->n * 2 >= t->nslots && strtab_rehash(t) < 0)
        return -1;
    size_t len, j = strtab_slot(t, s, &len);
    if (t->slots[j])
        return 0;
    if (t->n == t->cap) {
        if (t->n >= UINT32_MAX - 1)
            return -1;
        size_t ncap = t->cap ? t->cap * 2 : 256;
        struct str_entry *e = realloc(t->entries, ncap * sizeof *e);
        if (!e)
            return -1;
        t->entries = e;
        t->cap = ncap;
    }
    t->entries[t->n] = (struct str_entry){ s, len, t->size };
    t->size += len + 1;
    t->slots[j] = (uint32_t)(++t->n);
    return 0;
}

/* A string reference in the file: 0 for NULL, else offset + 1. */
static uint64_t strtab_ref(const struct strtab *t, const char *s)
{
    if (!s)
        return 0;
    size_t len, j = strtab_slot(t, s, &len);
    return t->entries[t->slots[j] - 1].off + 1;
}

static void strtab_free(struct strtab *t)
{
    free(t->entries);
    free(t->slots);
}

static int strtab_build(struct strtab *t, const struct profile *p)
{
    const struct prof_process *pr = &p->process;
    int rc = strtab_add(t, pr->exe);
    for (uint32_t i = 0; i < pr->argc; i++)
        rc |= strtab_add(t, pr->argv[i]);
    for (uint32_t i = 0; i < pr->nmeta; i++)
        rc |= strtab_add(t, pr->meta[i].key) | strtab_add(t, pr->meta[i].value);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        const struct prof_func *f = &p->funcs[i];
        rc |= strtab_add(t, f->name) | strtab_add(t, f->module) | strtab_add(t, f->file);
    }
    for (uint32_t i = 0; i < p->nthreads; i++) {
        const struct prof_thread *th = &p->threads[i];
        rc |= strtab_add(t, th->name);
        for (uint32_t m = 0; m < th->nmetrics; m++)
            rc |= strtab_add(t, th->metrics[m].name);
    }
    return rc ? -1 : 0;
}

/* ---- output buffer ---------------------------------------------------------- */

struct out {
    int fd; /* -1: measure only; OUT_MEM: into mem */
    unsigned char *buf;
    size_t len;
    uint64_t total;                 /* bytes flushed */
    uint32_t crc;                   /* crc32 of the bytes flushed */
    int error;                      /* errno of the first failure, or 0 */
    unsigned char *mem;             /* OUT_MEM: the whole file, sized by the first pass */
    size_t mem_len, mem_cap;
};
#define OUT_MEM (-2)

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void out_flush(struct out *o)
{
    if (o->len == 0)
        return;
    if (o->fd == OUT_MEM) {
        if (o->mem_len + o->len <= o->mem_cap)
            memcpy(o->mem + o->mem_len, o->buf, o->len);
        else if (!o->error)
            o->error = EOVERFLOW;
        o->mem_len += o->len;
    } else if (o->fd < 0) {
        o->crc = (uint32_t)crc32(o->crc, o->buf, (uInt)o->len);
    } else if (!o->error && write_all(o->fd, o->buf, o->len) < 0) {
        o->error = errno;
    }
    o->total += o->len;
    o->len = 0;
}

static void out_bytes(struct out *o, const void *p, size_t n)
{
    const unsigned char *q = p;
    while (n > 0) {
        if (o->len == OUT_BUF_SIZE)
            out_flush(o);
        size_t k = OUT_BUF_SIZE - o->len;
        if (k > n)
            k = n;
        memcpy(o->buf + o->len, q, k);
        o->len += k;
        q += k;
        n -= k;
    }
}

static void out_varint(struct out *o, uint64_t v)
{
    if (OUT_BUF_SIZE - o->len < PF_VARINT_MAX)
        out_flush(o);
    o->len += pf_put_varint(o->buf + o->len, v);
}

static void out_svarint(struct out *o, int64_t v)
{
    out_varint(o, pf_zigzag(v));
}

/* ---- sections --------------------------------------------------------------- */

static void enc_strings(struct out *o, const struct strtab *t)
{
    for (size_t i = 0; i < t->n; i++)
        out_bytes(o, t->entries[i].s, t->entries[i].len + 1);
}

static void enc_process(struct out *o, const struct profile *p, const struct strtab *t)
{
    const struct prof_process *pr = &p->process;
    out_svarint(o, pr->pid);
    out_svarint(o, pr->ppid);
    out_svarint(o, pr->rank);
    out_svarint(o, pr->size);
    out_varint(o, strtab_ref(t, pr->exe));
    out_varint(o, pr->start_ns);
    out_varint(o, pr->duration_ns);
    out_varint(o, pr->argc);
    for (uint32_t i = 0; i < pr->argc; i++)
        out_varint(o, strtab_ref(t, pr->argv[i]));
    out_varint(o, pr->nmeta);
    for (uint32_t i = 0; i < pr->nmeta; i++) {
        out_varint(o, strtab_ref(t, pr->meta[i].key));
        out_varint(o, strtab_ref(t, pr->meta[i].value));
    }
}

static void enc_funcs(struct out *o, const struct profile *p, const struct strtab *t)
{
    out_varint(o, p->nfuncs);
    for (uint32_t i = 0; i < p->nfuncs; i++) {
        const struct prof_func *f = &p->funcs[i];
        out_varint(o, f->addr);
        out_varint(o, strtab_ref(t, f->name));
        out_varint(o, strtab_ref(t, f->module));
        out_varint(o, strtab_ref(t, f->file));
        out_varint(o, f->line);
    }
}

static void enc_thread(struct out *o, const struct prof_thread *th, const struct strtab *t)
{
    out_svarint(o, th->tid);
    out_varint(o, th->index);
    out_varint(o, strtab_ref(t, th->name));
    out_varint(o, th->nnodes);
    for (uint32_t i = 0; i < th->nnodes; i++) {
        const struct prof_node *n = &th->nodes[i];
        out_varint(o, n->func);
        /* Parents precede their children: the distance back is small. */
        out_varint(o, n->parent == PROF_NONE ? 0 : (uint64_t)(i - n->parent));
        out_varint(o, n->calls);
        out_varint(o, n->incl_ns);
        out_varint(o, n->excl_ns);
    }
    out_varint(o, th->nmetrics);
    for (uint32_t m = 0; m < th->nmetrics; m++) {
        const struct prof_metric *mc = &th->metrics[m];
        out_varint(o, strtab_ref(t, mc->name));
        for (uint32_t i = 0; i < th->nnodes; i++)
            out_varint(o, mc->values[i]);
    }
}

/* Section i of the file: 0 strings, 1 process, 2 funcs, 3.. threads. */
static uint32_t section_type(uint32_t i)
{
    return i == 0 ? PF_SEC_STRINGS : i == 1 ? PF_SEC_PROCESS
         : i == 2 ? PF_SEC_FUNCS : PF_SEC_THREAD;
}

static void enc_section_body(struct out *o, uint32_t i, const struct profile *p,
                             const struct strtab *t)
{
    switch (section_type(i)) {
    case PF_SEC_STRINGS: enc_strings(o, t); break;
    case PF_SEC_PROCESS: enc_process(o, p, t); break;
    case PF_SEC_FUNCS:   enc_funcs(o, p, t); break;
    default:             enc_thread(o, &p->threads[i - 3], t); break;
    }
    out_flush(o);
}

static void section_header(unsigned char h[PF_SECTION_HDR], uint32_t type, uint64_t len)
{
    pf_put_u32(h, type);
    pf_put_u64(h + 4, len);
}

/* ---- validation ------------------------------------------------------------- */

/* A tiny message builder: no stdio in the profiled process. */
struct msg {
    char *buf;
    size_t cap, len;
};

static void msg_str(struct msg *m, const char *s)
{
    if (!m->buf || m->cap == 0)
        return;
    for (; s && *s && m->len + 1 < m->cap; s++)
        m->buf[m->len++] = *s;
    m->buf[m->len] = '\0';
}

static void msg_u64(struct msg *m, uint64_t v)
{
    char d[24];
    int i = (int)sizeof d - 1;
    d[i] = '\0';
    do {
        d[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    msg_str(m, d + i);
}

static void msg_errno(struct msg *m, int e)
{
    char tmp[128];
    msg_str(m, ": ");
    msg_str(m, strerror_r(e, tmp, sizeof tmp));
}

/* Refuse what the reader would refuse, so a profiler bug shows at once. */
static int validate(const struct profile *p, struct msg *m)
{
    if ((p->nfuncs && !p->funcs) || (p->nthreads && !p->threads) ||
        (p->process.argc && !p->process.argv) || (p->process.nmeta && !p->process.meta)) {
        msg_str(m, "invalid profile: a non-empty array is NULL");
        return -1;
    }
    for (uint32_t ti = 0; ti < p->nthreads; ti++) {
        const struct prof_thread *th = &p->threads[ti];
        if ((th->nnodes && !th->nodes) || (th->nmetrics && !th->metrics)) {
            msg_str(m, "invalid profile: thread ");
            msg_u64(m, ti);
            msg_str(m, " has a NULL array");
            return -1;
        }
        for (uint32_t i = 0; i < th->nnodes; i++) {
            const struct prof_node *n = &th->nodes[i];
            if (n->func >= p->nfuncs || (n->parent != PROF_NONE && n->parent >= i)) {
                msg_str(m, "invalid profile: thread ");
                msg_u64(m, ti);
                msg_str(m, " node ");
                msg_u64(m, i);
                msg_str(m, n->func >= p->nfuncs ? ": function index out of range"
                                                : ": parent does not precede the node");
                return -1;
            }
        }
        for (uint32_t k = 0; k < th->nmetrics; k++) {
            if (th->nnodes && !th->metrics[k].values) {
                msg_str(m, "invalid profile: metric without values");
                return -1;
            }
        }
    }
    return 0;
}

/* ---- the file -------------------------------------------------------------- */

/* p into fd, or with fd == OUT_MEM into a buffer of its own (*mem, *len). */
static int serialise(const struct profile *p, int fd, unsigned char **mem, size_t *mem_len)
{
    struct strtab t = { 0 };
    struct out o = { .fd = -1 };
    uint32_t nsec = p->nthreads + 3;
    uint64_t *lens = NULL;
    int rc = -1, err = ENOMEM;

    if (p->nthreads > UINT32_MAX - 3) {
        err = EINVAL;
        goto done;
    }
    o.buf = malloc(OUT_BUF_SIZE);
    lens = malloc(nsec * sizeof *lens);
    if (!o.buf || !lens || strtab_build(&t, p) < 0)
        goto done;

    /* Pass 1: each section's length, and the checksum of everything but the
     * crc field, combined piece by piece in file order. */
    uint64_t body = 0;
    uint32_t crc_sections = (uint32_t)crc32(0, NULL, 0);
    for (uint32_t i = 0; i < nsec; i++) {
        o.len = 0;
        o.total = 0;
        o.crc = (uint32_t)crc32(0, NULL, 0);
        enc_section_body(&o, i, p, &t);
        lens[i] = o.total;
        unsigned char h[PF_SECTION_HDR];
        section_header(h, section_type(i), o.total);
        crc_sections = (uint32_t)crc32_combine(crc_sections, crc32(0, h, sizeof h), sizeof h);
        crc_sections = (uint32_t)crc32_combine(crc_sections, o.crc, (z_off_t)o.total);
        body += sizeof h + o.total;
    }

    unsigned char hdr[PF_HEADER_SIZE] = { 0 };
    memcpy(hdr, PF_MAGIC, PF_MAGIC_LEN);
    pf_put_u16(hdr + PF_OFF_MAJOR, PF_MAJOR);
    pf_put_u16(hdr + PF_OFF_MINOR, PF_MINOR);
    pf_put_u32(hdr + PF_OFF_HDRSIZE, PF_HEADER_SIZE);
    pf_put_u64(hdr + PF_OFF_FILESIZE, PF_HEADER_SIZE + body);
    pf_put_u32(hdr + PF_OFF_FLAGS, 0);
    uint32_t crc = (uint32_t)crc32(0, hdr, PF_CRC_OFFSET);
    crc = (uint32_t)crc32(crc, hdr + PF_CRC_OFFSET + 4, PF_HEADER_SIZE - PF_CRC_OFFSET - 4);
    crc = (uint32_t)crc32_combine(crc, crc_sections, (z_off_t)body);
    pf_put_u32(hdr + PF_OFF_CRC, crc);

    /* Pass 2: write. */
    o.fd = fd;
    o.len = 0;
    if (fd == OUT_MEM) {
        o.mem_cap = (size_t)(PF_HEADER_SIZE + body);
        if (!(o.mem = malloc(o.mem_cap)))
            goto done;
    }
    out_bytes(&o, hdr, sizeof hdr);
    for (uint32_t i = 0; i < nsec && !o.error; i++) {
        unsigned char h[PF_SECTION_HDR];
        section_header(h, section_type(i), lens[i]);
        out_bytes(&o, h, sizeof h);
        enc_section_body(&o, i, p, &t);
    }
    out_flush(&o);
    if (o.error) {
        err = o.error;
    } else {
        rc = 0;
        if (fd == OUT_MEM) {
            *mem = o.mem;
            *mem_len = o.mem_len;
            o.mem = NULL;
        }
    }
done:
    free(o.mem);
    free(o.buf);
    free(lens);
    strtab_free(&t);
    if (rc < 0)
        errno = err;
    return rc;
}

PUBLIC int profile_write_fd(const struct profile *p, int fd)
{
    int saved = errno;
    if (validate(p, &(struct msg){ 0 }) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (serialise(p, fd, NULL, NULL) < 0)
        return -1;
    errno = saved;
    return 0;
}

PUBLIC int profile_write_mem(const struct profile *p, unsigned char **buf, size_t *len)
{
    int saved = errno;
    if (validate(p, &(struct msg){ 0 }) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (serialise(p, OUT_MEM, buf, len) < 0)
        return -1;
    errno = saved;
    return 0;
}

/* The user's umask applies, but a profile is never world-writable, even
 * under umask 0. */
#define PROFILE_MODE 0664

/* ".NAME.tmp.PID.N": hidden, so globs for profiles never see it.  A long
 * NAME is left out, so the temporary name stays within NAME_MAX. */
static void tmp_name(char *buf, size_t cap, const char *name, unsigned attempt)
{
    struct msg m = { buf, cap, 0 };
    buf[0] = '\0';
    msg_str(&m, ".");
    msg_str(&m, strlen(name) <= 200 ? name : "hookit");
    msg_str(&m, ".tmp.");
    msg_u64(&m, (uint64_t)getpid());
    msg_str(&m, ".");
    msg_u64(&m, attempt);
}

static void path_msg(struct msg *m, const char *dir, const char *name)
{
    msg_str(m, dir);
    msg_str(m, "/");
    msg_str(m, name);
}

/* Publish tmp as name without ever replacing name.  0, or -1 with errno. */
static int publish(int dfd, const char *tmp, const char *name)
{
    if (linkat(dfd, tmp, dfd, name, 0) == 0) {
        unlinkat(dfd, tmp, 0);
        return 0;
    }
    int e = errno;
    if (e == EPERM || e == ENOSYS || e == EOPNOTSUPP) {
        /* No hard links on this filesystem (vfat, some FUSE). */
        if (syscall(SYS_renameat2, dfd, tmp, dfd, name, RENAME_NOREPLACE) == 0)
            return 0;
        e = errno;
    }
    unlinkat(dfd, tmp, 0);
    errno = e;
    return -1;
}

/* Under a file size limit (RLIMIT_FSIZE, `ulimit -f`) a write past it
 * raises SIGXFSZ, whose default action kills the process: the profile must
 * fail with EFBIG, not the program.  The signal is blocked while the file
 * is written, and a SIGXFSZ the writes raised is taken back before the
 * mask is restored (one already pending before is left alone). */
void profile_xfsz_block(struct profile_xfsz_guard *g)
{
    sigset_t xfsz, pending;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, &g->old);
    g->was_pending = sigpending(&pending) == 0 && sigismember(&pending, SIGXFSZ) == 1;
}

void profile_xfsz_restore(struct profile_xfsz_guard *g)
{
    int saved = errno;
    if (!g->was_pending) {
        sigset_t xfsz;
        sigemptyset(&xfsz);
        sigaddset(&xfsz, SIGXFSZ);
        struct timespec now = { 0, 0 };
        while (sigtimedwait(&xfsz, NULL, &now) == SIGXFSZ)
            ;
    }
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
    errno = saved;
}

static int write_file(const struct profile *p, const char *dir, const char *name, int replace,
                      char *err, size_t errlen);

static int write_guarded(const struct profile *p, const char *dir, const char *name, int replace,
                         char *err, size_t errlen)
{
    struct profile_xfsz_guard g;
    profile_xfsz_block(&g);
    int rc = write_file(p, dir, name, replace, err, errlen);
    profile_xfsz_restore(&g);
    return rc;
}

PUBLIC int profile_write_file(const struct profile *p, const char *dir, const char *name,
                              char *err, size_t errlen)
{
    return write_guarded(p, dir, name, 0, err, errlen);
}

PUBLIC int profile_replace_file(const struct profile *p, const char *dir, const char *name,
                                char *err, size_t errlen)
{
    return write_guarded(p, dir, name, 1, err, errlen);
}

static int write_file(const struct profile *p, const char *dir, const char *name, int replace,
                      char *err, size_t errlen)
{
    int saved = errno, e = 0, dfd = -1, fd = -1;
    struct msg m = { err, errlen, 0 };
    char tmp[512];

    msg_str(&m, "");
    if (!dir || !*dir)
        dir = ".";
    if (!name || !*name || strchr(name, '/')) {
        msg_str(&m, "invalid profile file name");
        e = EINVAL;
        goto fail;
    }
    if (validate(p, &m) < 0) {
        e = EINVAL;
        goto fail;
    }
    dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd < 0) {
        e = errno;
        msg_str(&m, "cannot open directory ");
        msg_str(&m, dir);
        msg_errno(&m, e);
        goto fail;
    }
    for (unsigned attempt = 0; fd < 0; attempt++) {
        tmp_name(tmp, sizeof tmp, name, attempt);
        fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, PROFILE_MODE);
        if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
            e = errno;
            msg_str(&m, "cannot create ");
            path_msg(&m, dir, tmp);
            msg_errno(&m, e);
            goto fail;
        }
    }
    int rc = serialise(p, fd, NULL, NULL);
    e = errno;
    if (close(fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    fd = -1;
    if (rc < 0) {
        unlinkat(dfd, tmp, 0);
        msg_str(&m, "cannot write ");
        path_msg(&m, dir, tmp);
        msg_errno(&m, e);
        goto fail;
    }
    int published = replace ? renameat(dfd, tmp, dfd, name) : publish(dfd, tmp, name);
    if (published < 0) {
        if (replace)
            unlinkat(dfd, tmp, 0);
        e = errno;
        msg_str(&m, e == EEXIST ? "not replacing existing " : "cannot create ");
        path_msg(&m, dir, name);
        msg_errno(&m, e);
        goto fail;
    }
    close(dfd);
    errno = saved;
    return 0;
fail:
    if (dfd >= 0)
        close(dfd);
    errno = e;
    return -1;
}
