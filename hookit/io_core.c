/* What every I/O wrapper shares: the switches, the per-thread guard, the
 * clock of I/O timestamps, the real functions, and the common ending of a
 * call on a descriptor (bookkeeping, event, errno kept). */
#include "hookit/io_internal.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <string.h>

volatile int hk_io_want, hk_alloc_want;
HK_TLS int hk_io_guard;

/* ---- real functions (dynamic variant) ------------------------------------------ */
#ifndef HOOKIT_STATIC
struct hk_io_real_table hk_io_real;
volatile int hk_io_resolved;

/* Resolving twice (two threads at the very start) stores the same values:
 * no lock, so no wrapper can ever wait here. */
HK_NOINSTR void hk_io_resolve(void)
{
    if (hk_io_resolved)
        return;
    int saved = errno;
    hk_io_guard++;
    hk_alloc_resolve();
#define HK_IO_RESOLVE(name) \
    hk_io_real.name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name);
    HK_IO_WRAPPED(HK_IO_RESOLVE)
#undef HK_IO_RESOLVE
    hk_io_guard--;
    __atomic_store_n(&hk_io_resolved, 1, __ATOMIC_RELEASE);
    errno = saved;
}
#else
HK_NOINSTR void hk_io_resolve(void) {}
#endif

/* ---- the clock ----------------------------------------------------------------- */
/* The shared clock (common/clock.h): the CPU counter when it is usable, the
 * same test libjprof makes. */
struct hk_clock hk_io_clk = { .ticks_per_ns = 1.0 };

HK_NOINSTR void hk_io_clock_init(void)
{
    hk_clock_start(&hk_io_clk, 1);
}

HK_NOINSTR int hk_io_clock_is_counter(void)
{
    return hk_io_clk.counter;
}

HK_NOINSTR uint64_t hk_io_now(void)
{
    return hk_clock_now(&hk_io_clk);
}

HK_NOINSTR double hk_io_ticks_per_ns(void)
{
    return hk_clock_rate(&hk_io_clk, HK_CLOCK_CALIBRATION_NS);
}

/* ---- switches ------------------------------------------------------------------------ */
HK_NOINSTR void hk_io_configure(uint32_t caps)
{
    hk_io_resolve();
    hk_io_want = (caps & HOOKIT_CAP_IO) != 0;
    if (caps & HOOKIT_CAP_ALLOC)
        hk_alloc_configure();
    hk_alloc_want = (caps & HOOKIT_CAP_ALLOC) != 0;
}

HK_NOINSTR void hk_io_quiet(int on)
{
    if (on)
        hk_io_guard++;
    else if (hk_io_guard > 0)
        hk_io_guard--;
}

/* ---- the end of a call ----------------------------------------------------------------- */
HK_NOINSTR void io_deliver(struct io_call *c, struct hookit_io *ev)
{
    ev->t0 = c->t0;
    ev->token = c->token;
    struct hookit_event e = { .type = HOOKIT_EV_IO, .io = ev };
    if (hk_plugin.event)
        hk_plugin.event(&e);
}

/* Where an access on d started, and the position after it. */
HK_NOINSTR static int64_t advance(struct io_desc *d, int fd, uint32_t op, int64_t offset,
                                  int64_t bytes)
{
    if (!d)
        return offset >= 0 ? offset : -1;
    if (offset == IO_AT_SPOS) {
        int64_t at = d->spos;
        if (at >= 0 && bytes > 0)
            d->spos = at + bytes;
        return at;
    }
    if (offset != IO_AT_POS)
        return offset;
    if ((d->flags & IO_DESC_APPEND) && op == HOOKIT_IO_WRITE && bytes > 0) {
        /* O_APPEND: the kernel chose the offset; ask where we are now. */
        off_t now = IO_REAL(lseek)(fd, 0, SEEK_CUR);
        d->pos = now;
        return now >= 0 ? now - bytes : -1;
    }
    int64_t at = d->pos;
    if (at >= 0 && bytes > 0)
        d->pos = at + bytes;
    return at;
}

HK_NOINSTR void io_end_fd(struct io_call *c, uint32_t op, const char *func, int fd, int64_t result,
                          int64_t bytes, int64_t offset, uint32_t flags)
{
    uint64_t t1 = c->collecting ? io_clock() : 0;
    int saved = errno;
    IO_ENTER();
    struct io_desc *d = fd >= 0 ? io_fd_desc(fd) : NULL;
    int failed = (flags & HOOKIT_IOF_FAILED) || (!(flags & HOOKIT_IOF_STDIO) && result < 0);
    if (bytes < 0 || failed)
        bytes = 0;
    int64_t at = advance(d, fd, op, offset, bytes);
    if (c->collecting) {
        struct hookit_io ev = {
            .op = op,
            .flags = (flags & ~HOOKIT_IOF_FAILED) | (failed ? HOOKIT_IOF_FAILED : 0) |
                     (d ? (d->flags & HOOKIT_IOF_SOCKET) : 0),
            .func = func,
            .fd = fd,
            .file = d ? d->file : 0,
            .path = d ? io_file_path(d->file) : NULL,
            .result = result,
            .err = failed ? saved : 0,
            .bytes = (uint64_t)bytes,
            .offset = at,
            .t1 = t1,
        };
        io_deliver(c, &ev);
    }
    IO_LEAVE();
    errno = saved;
}
