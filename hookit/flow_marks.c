/* This thread's setjmp marks, by buffer (jmp_buf or ucontext_t): what a
 * longjmp(env) or setcontext(ucp) looks up (docs/exactness.md).
 *
 * Every live mark is kept, at any nesting depth: an open-addressing table
 * of the thread's own, in pages of our own (lc_alloc, never malloc, which
 * may be the program's own instrumented one), that doubles when half full.
 * Nothing is ever evicted.  A mark goes only when its buffer is forgotten
 * (makecontext, swapcontext) or is dead: taken deeper than a new mark in
 * the same context, so by a frame that has returned since (marks are
 * ordered so, include/hookit/profiler.h).  Dead marks are reused in place
 * by the inserts that probe past them and dropped when the table is
 * rebuilt, so it holds about as many marks as there are live buffers.
 *
 * A signal handler may take a mark while this thread is inside an insert:
 * both write the same table (the handler's mark is lost at worst, and it
 * was dead by then: the handler has returned).  A rebuild frees the old
 * table, so it runs with signals blocked, and an insert from a handler
 * that interrupted another insert never starts one: the table then fills
 * past half, and only a table with one empty slot left refuses a new
 * buffer (its longjmp is left to the plugin's fallback). */
#include "hookit/flow.h"
#include "lifecycle/internal.h"

struct kept_mark {
    const void *buf; /* NULL: empty; TOMB: forgotten */
    uint64_t mark;
};

#define TOMB ((const void *)1)
#define FIRST_SLOTS 256u /* one 4 KiB page */

static __thread struct kept_mark *marks __attribute__((tls_model("initial-exec")));
static __thread uint32_t marks_slots __attribute__((tls_model("initial-exec"))); /* a power of two */
static __thread uint32_t marks_used __attribute__((tls_model("initial-exec")));  /* slots not empty */
static __thread uint32_t inserting __attribute__((tls_model("initial-exec")));

/* A mark says in which context (high half) and at which depth (low half)
 * it was taken.  One taken deeper than mark in the same context belongs to
 * a frame that has returned since: its buffer is dead. */
HK_NOINSTR static int dead_by(uint64_t old, uint64_t now)
{
    return (old >> 32) == (now >> 32) && (uint32_t)old > (uint32_t)now;
}

HK_NOINSTR static uint32_t slot_of(const void *buf, uint32_t slots)
{
    return (uint32_t)(((uintptr_t)buf * 0x9e3779b97f4a7c15ull) >> 32) & (slots - 1);
}

/* Put buf's mark into a table known to have room and not to hold buf. */
HK_NOINSTR static void put_new(struct kept_mark *table, uint32_t slots, const void *buf, uint64_t mark)
{
    uint32_t i = slot_of(buf, slots);
    while (table[i].buf)
        i = (i + 1) & (slots - 1);
    table[i] = (struct kept_mark){ buf, mark };
}

/* A table with room for the live marks (those not dead by `now`) at most
 * a quarter full; 0 when no memory (the marks stay as they were). */
HK_NOINSTR static int rebuild(uint64_t now)
{
    sigset_t all, old;
    sigfillset(&all);
    lc_raw_sigmask(SIG_BLOCK, &all, &old);
    uint32_t live = 0;
    for (uint32_t i = 0; i < marks_slots; i++)
        live += marks[i].buf > TOMB && !dead_by(marks[i].mark, now);
    uint32_t slots = FIRST_SLOTS;
    while (slots < 4 * (live + 1))
        slots *= 2;
    struct kept_mark *table = lc_alloc(slots * sizeof *table);
    if (table) {
        for (uint32_t i = 0; i < marks_slots; i++)
            if (marks[i].buf > TOMB && !dead_by(marks[i].mark, now))
                put_new(table, slots, marks[i].buf, marks[i].mark);
        lc_release(marks);
        marks = table;
        marks_slots = slots;
        marks_used = live;
    }
    lc_raw_sigmask(SIG_SETMASK, &old, NULL);
    return table != NULL;
}

HK_NOINSTR static void keep(const void *buf, uint64_t mark)
{
    /* Past half full: a larger table, unless this insert interrupted
     * another (a signal handler's) or no memory is left; the table then
     * fills further while it can. */
    if (2 * (marks_used + 1) > marks_slots && inserting == 1)
        rebuild(mark);
    if (!marks)
        return;
    uint32_t mask = marks_slots - 1, i = slot_of(buf, marks_slots);
    struct kept_mark *spare = NULL;
    for (; marks[i].buf; i = (i + 1) & mask) {
        if (marks[i].buf == buf) {
            marks[i].mark = mark;
            return;
        }
        if (!spare && (marks[i].buf == TOMB || dead_by(marks[i].mark, mark)))
            spare = &marks[i];
    }
    if (!spare) {
        if (marks_used + 2 > marks_slots)
            return; /* the last empty slot ends every probe: a longjmp to buf goes untold */
        spare = &marks[i];
        marks_used++;
    }
    *spare = (struct kept_mark){ buf, mark };
}

HK_NOINSTR void hk_flow_keep_mark(const void *buf, uint64_t mark)
{
    inserting++;
    keep(buf, mark);
    inserting--;
}

HK_NOINSTR static struct kept_mark *find(const void *buf)
{
    if (!marks)
        return NULL;
    uint32_t mask = marks_slots - 1;
    for (uint32_t i = slot_of(buf, marks_slots); marks[i].buf; i = (i + 1) & mask)
        if (marks[i].buf == buf)
            return &marks[i];
    return NULL;
}

/* The mark kept for buf, or 0 with *found = 0. */
HK_NOINSTR uint64_t hk_flow_find_mark(const void *buf, int *found)
{
    const struct kept_mark *k = find(buf);
    *found = k != NULL;
    return k ? k->mark : 0;
}

HK_NOINSTR void hk_flow_forget_mark(const void *buf)
{
    struct kept_mark *k = find(buf);
    if (k)
        k->buf = TOMB;
}

/* The thread ends: its marks go with it. */
HK_NOINSTR void hk_flow_thread_end(void)
{
    lc_release(marks);
    marks = NULL;
    marks_slots = marks_used = 0;
}
