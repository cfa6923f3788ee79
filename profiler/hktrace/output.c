/* Writing the trace: hookit.<exe>[.r<rank>].<pid>.trace in HOOKIT_OUTPUT,
 * written to a temporary file (O_EXCL, O_NOFOLLOW) and then linked to its
 * name, never over an existing file: when the name is taken (a flush, an
 * exec that kept the pid) a counter is added.  Layout: docs/trace-format.md. */
#include "hktrace.h"
#include "profile/procinfo.h"
#include "profile/codec.h"
#include "profile/profile.h"
#include "profile/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_TRIES 100

struct out {
    int fd;
    int failed;
    uint64_t off;               /* bytes written so far (= file offset) */
    size_t used;
    unsigned char buf[65536];
};

static struct out out_state;    /* static: no large stack frame in a signal handler */

HT_NOINSTR static void out_flush(struct out *o)
{
    size_t done = 0;
    while (!o->failed && done < o->used) {
        ssize_t n = write(o->fd, o->buf + done, o->used - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            o->failed = errno ? errno : EIO;
            break;
        }
        done += (size_t)n;
    }
    o->used = 0;
}

HT_NOINSTR static void out_bytes(struct out *o, const void *p, size_t n)
{
    const unsigned char *b = p;
    o->off += n;
    while (n > 0) {
        if (o->used == sizeof o->buf)
            out_flush(o);
        size_t k = sizeof o->buf - o->used < n ? sizeof o->buf - o->used : n;
        memcpy(o->buf + o->used, b, k);
        o->used += k;
        b += k;
        n -= k;
    }
}

HT_NOINSTR static void out_u32(struct out *o, uint32_t v)
{
    unsigned char b[4];
    pf_put_u32(b, v);
    out_bytes(o, b, 4);
}

HT_NOINSTR static void out_u64(struct out *o, uint64_t v)
{
    unsigned char b[8];
    pf_put_u64(b, v);
    out_bytes(o, b, 8);
}

/* Overwrite bytes already written (after a flush). */
HT_NOINSTR static void out_patch(struct out *o, uint64_t at, const void *p, size_t n)
{
    out_flush(o);
    if (!o->failed && pwrite(o->fd, p, n, (off_t)at) != (ssize_t)n)
        o->failed = errno ? errno : EIO;
}

HT_NOINSTR static void patch_u64(struct out *o, uint64_t at, uint64_t v)
{
    unsigned char b[8];
    pf_put_u64(b, v);
    out_patch(o, at, b, 8);
}

HT_NOINSTR static uint64_t section_begin(struct out *o, uint32_t type)
{
    uint64_t at = o->off;
    out_u32(o, type);
    out_u64(o, 0);              /* length, patched by section_end */
    return at;
}

HT_NOINSTR static void section_end(struct out *o, uint64_t at)
{
    patch_u64(o, at + 4, o->off - at - TR_SECTION_HDR);
}

HT_NOINSTR static void write_header(struct out *o, uint32_t nthreads, uint64_t tick_end,
                                    uint32_t flags, uint64_t file_size)
{
    unsigned char h[TR_HEADER_SIZE] = { 0 };
    double tpn = ht_ticks_per_ns();
    uint64_t tpn_bits;
    memcpy(&tpn_bits, &tpn, sizeof tpn_bits);
    memcpy(h, TR_MAGIC, TR_MAGIC_LEN);
    pf_put_u16(h + TR_OFF_MAJOR, TR_MAJOR);
    pf_put_u16(h + TR_OFF_MINOR, TR_MINOR);
    pf_put_u32(h + TR_OFF_HDRSIZE, TR_HEADER_SIZE);
    pf_put_u64(h + TR_OFF_FILESIZE, file_size);
    pf_put_u64(h + TR_OFF_TICKS_PER_NS, tpn_bits);
    pf_put_u64(h + TR_OFF_TICK0, ht_tick0);
    pf_put_u64(h + TR_OFF_TICK_END, tick_end);
    pf_put_u32(h + TR_OFF_FLAGS, flags);
    pf_put_u32(h + TR_OFF_NTHREADS, nthreads);
    if (file_size)
        out_patch(o, 0, h, sizeof h);
    else
        out_bytes(o, h, sizeof h);
}

/* One thread's section: the fixed part, then its chunks' records as they
 * are now (a thread still running keeps appending; we take what is there). */
HT_NOINSTR static void write_thread(struct out *o, struct ht_thread *t)
{
    uint64_t at = section_begin(o, TR_SEC_THREAD);
    unsigned char fixed[TR_THREAD_HDR] = { 0 };
    pf_put_u32(fixed + TR_TH_TID, (uint32_t)t->tid);
    pf_put_u32(fixed + TR_TH_INDEX, t->index);
    memcpy(fixed + TR_TH_NAME, t->name, sizeof t->name);
    fixed[TR_TH_NAME + 15] = 0;
    pf_put_u64(fixed + TR_TH_SHORT, t->short_dropped);
    pf_put_u64(fixed + TR_TH_LOST, t->lost);
    pf_put_u64(fixed + TR_TH_UNMATCHED, t->unmatched);
    pf_put_u32(fixed + TR_TH_FLAGS, t->flags);
    out_bytes(o, fixed, sizeof fixed);
    uint64_t n = 0;
    for (uint32_t c = t->first_chunk; c; c = ht_chunk_at(c)->next) {
        struct ht_chunk *ch = ht_chunk_at(c);
        uint32_t k = __atomic_load_n(&ch->nrec, __ATOMIC_ACQUIRE);
        if (k > HT_CHUNK_RECS)
            k = HT_CHUNK_RECS;
        /* Records are stored in the host's order; the file is little-endian. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        out_bytes(o, ch->rec, (size_t)k * sizeof *ch->rec);
#else
        for (uint32_t i = 0; i < k; i++)
            out_u64(o, ch->rec[i]);
#endif
        n += k;
    }
    patch_u64(o, at + TR_SECTION_HDR + TR_TH_NRECORDS, n);
    section_end(o, at);
}

HT_NOINSTR static int by_index(const void *a, const void *b)
{
    const struct ht_thread *x = *(struct ht_thread *const *)a, *y = *(struct ht_thread *const *)b;
    return (x->index > y->index) - (x->index < y->index);
}

HT_NOINSTR static int write_body(struct out *o, struct profile *meta, const uint32_t *ids,
                                 uint64_t tick_end)
{
    uint32_t n = 0, flags = ht_cap_reached ? TR_FLAG_SIZE_CAP : 0;
    for (struct ht_thread *t = ht_threads; t; t = t->next)
        n++;
    struct ht_thread **list = malloc(((size_t)n + 1) * sizeof *list);
    if (!list)
        return -1;
    uint32_t k = 0;
    for (struct ht_thread *t = ht_threads; t && k < n; t = t->next)
        list[k++] = t;
    qsort(list, k, sizeof *list, by_index);
    write_header(o, k, tick_end, flags, 0);
    for (uint32_t i = 0; i < k; i++)
        write_thread(o, list[i]);
    free(list);

    uint64_t at = section_begin(o, TR_SEC_PROFILE);
    out_flush(o);
    if (!o->failed && profile_write_fd(meta, o->fd) != 0)
        o->failed = errno ? errno : EIO;
    off_t end = lseek(o->fd, 0, SEEK_CUR);
    if (end < 0 && !o->failed)
        o->failed = errno;
    o->off = (uint64_t)end;
    section_end(o, at);

    at = section_begin(o, TR_SEC_IDMAP);
    out_u32(o, meta->nfuncs);
    for (uint32_t i = 0; i < meta->nfuncs; i++)
        out_u32(o, ids[i]);
    section_end(o, at);
    out_flush(o);
    write_header(o, k, tick_end, flags, o->off);
    return o->failed ? -1 : 0;
}

/* Link tmp to the first free name; never replaces a file. */
HT_NOINSTR static int publish(int dfd, const char *tmp, char *name, size_t size)
{
    char exe[256];
    procinfo_exe_name(exe, sizeof exe);
    for (int attempt = 0; attempt < MAX_TRIES; attempt++) {
        procinfo_file_name(name, size, exe, ht_rank, (int)getpid(), attempt, "trace");
        if (linkat(dfd, tmp, dfd, name, 0) == 0)
            return 0;
        if (errno == EEXIST)
            continue;
        if ((errno == EPERM || errno == ENOSYS || errno == EOPNOTSUPP) &&
            syscall(SYS_renameat2, dfd, tmp, dfd, name, 1 /* RENAME_NOREPLACE */) == 0)
            return 1;           /* renamed: nothing left to unlink */
        if (errno != EEXIST)
            return -1;
    }
    errno = EEXIST;
    return -1;
}

HT_NOINSTR int ht_write_trace(int how)
{
    int saved = errno;
    ht_clock_calibrate();
    uint64_t tick_end = ht_now();
    uint32_t *ids = NULL;
    struct profile *meta = ht_build_meta(how, &ids);
    if (!meta) {
        ht_host->log("hktrace: out of memory building the trace's function table; no trace written");
        errno = saved;
        return -1;
    }
    const char *dir = ht_host->output_dir ? ht_host->output_dir : ".";
    char tmp[128], name[600];
    int rc = -1, dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
    for (int attempt = 0; dfd >= 0 && fd < 0 && attempt < MAX_TRIES; attempt++) {
        snprintf(tmp, sizeof tmp, ".hookit.trace.tmp.%d.%d", (int)getpid(), attempt);
        fd = openat(dfd, tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0664);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (dfd < 0) {
        ht_host->log("hktrace: cannot open output directory %s: %s", dir, strerror(errno));
    } else if (fd < 0) {
        ht_host->log("hktrace: cannot create a trace file in %s: %s", dir, strerror(errno));
    } else {
        struct out *o = &out_state;
        memset(o, 0, sizeof *o - sizeof o->buf);
        o->fd = fd;
        struct profile_xfsz_guard xfsz;     /* ulimit -f: fail, don't kill */
        profile_xfsz_block(&xfsz);
        rc = write_body(o, meta, ids, tick_end);
        profile_xfsz_restore(&xfsz);
        int e = o->failed;
        if (close(fd) != 0 && rc == 0) {
            rc = -1;
            e = errno;
        }
        if (rc != 0) {
            ht_host->log("hktrace: cannot write the trace in %s: %s", dir, strerror(e ? e : ENOMEM));
        } else {
            int p = publish(dfd, tmp, name, sizeof name);
            if (p < 0) {
                ht_host->log("hktrace: cannot create the trace file in %s: %s", dir, strerror(errno));
                rc = -1;
            } else if (HOOKIT_HOST_HAS(ht_host, output_fallback) && ht_host->output_fallback) {
                /* HOOKIT_OUTPUT was reported unusable at start: say where it went */
                ht_host->log("hktrace: wrote %s/%s", dir, name);
            } else {
                ht_host->debug_log("hktrace: wrote %s/%s", dir, name);
            }
            if (p == 1)
                tmp[0] = 0;
        }
        if (tmp[0])
            unlinkat(dfd, tmp, 0);
    }
    if (dfd >= 0)
        close(dfd);
    profile_free(meta);
    free(ids);
    errno = saved;
    return rc;
}
