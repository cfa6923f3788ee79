/* The plugin's events (HOOKIT_EV_IO, and the malloc family's for a
 * libhookit that does not call HookitAlloc/HookitFree).  An I/O call's
 * bytes and time go to the calling context's extension block, the
 * thread's totals, the I/O series and the file's record.  The event
 * switch is here, with the I/O call it mostly dispatches, so that the
 * two are one function for the compiler. */
#include "metrics_files.h"
#include "wait.h"

/* Into the context's block, when the thread is in one. */
JP_NOINSTR static void account_context(struct node_ext *x, uint64_t read, uint64_t written, uint64_t ticks)
{
    if (!x)
        return;
    x->io_calls++;
    x->io_bytes_read += read;
    x->io_bytes_written += written;
    x->io_ticks += ticks;
}

JP_NOINSTR static void on_io(const struct hookit_io *io)
{
    metrics_ensure_rate();
    int ok = !(io->flags & HOOKIT_IOF_FAILED);
    uint64_t rd = ok && io->op == HOOKIT_IO_READ ? io->bytes : 0;
    uint64_t wr = ok && io->op == HOOKIT_IO_WRITE ? io->bytes : 0;
    struct jp_thread *t = jp_self_live();
    uint64_t dt = jp_blocking_ticks(t, io->token, io->t0, io->t1); /* as a wait's */
    if (JP_LIKELY(t != NULL)) {
        struct metrics_thread *m = &t->metrics;
        account_context(metrics_context_ext(m, metrics_context_node(t)), rd, wr, dt);
        m->c.io_calls++;
        m->c.bytes_read += rd;
        m->c.bytes_written += wr;
        m->c.io_ticks += dt;
        if (rd || wr)
            metrics_series_io(m, io->t1, rd, wr);
    } else {
        metrics_orphan_io(rd, wr, dt);
        if (rd || wr)
            metrics_series_io_direct(io->t1, rd, wr);
    }
    metrics_files_account(io, dt);
}

JP_NOINSTR void jp_metrics_event(const struct hookit_event *ev)
{
    switch (ev->type) {
    case HOOKIT_EV_IO:
        if (ev->io)
            on_io(ev->io);
        break;
    case HOOKIT_EV_ALLOC: /* a libhookit that does not call HookitAlloc */
        if (ev->mem)
            HookitAlloc(ev->mem->ptr, ev->mem->size, ev->mem->old_ptr);
        break;
    case HOOKIT_EV_FREE:
        if (ev->mem)
            HookitFree(ev->mem->ptr);
        break;
    default:
        break;
    }
}
