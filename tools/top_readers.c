/*
 * hookit top --readers: the whole of a job on several hosts, live
 * (docs/live.md "Several hosts").  The job's launcher starts one reader per
 * host (`mpirun --map-by ppr:1:node hookit top --readers --job ID`); every
 * refresh is one round of live_readers.c, the same as one `hookit
 * snapshot --readers` (at the job level: every share paused, a barrier,
 * every share copied, a barrier, every share released), reduced along the
 * binomial tree over the readers together with top's tables
 * (top_view.c).  Reader 0 draws the view as top does on one host
 * (top_set_draw); the others only serve.
 *
 * Reader 0 paces the refreshes: before each, its word goes down the tree
 * (go on, or end: q, --once, --iterations, every process ended).  Every
 * wait is bounded: a reader waits for the word at most the interval plus
 * the bound of a share (HOOKIT_MPI_TIMEOUT), the barriers 200 ms each, a
 * share HOOKIT_MPI_TIMEOUT; a reader that gives up tells the readers below
 * it to end, and says so in one line.  A process of a share that ended is
 * dropped by its reader, and reader 0's view says so.
 */
#include "tools/live_readers.h"
#include "tools/cli.h"
#include "profile/merge.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reader 0 between refreshes when its standard input is no terminal: the
 * launcher's pipe (mpirun and Hydra's mpiexec pass what is typed into
 * their terminal to rank 0, a line at a time), where a "q" ends the view;
 * its end (a launcher given /dev/null) is no quit, only no more keys.  1:
 * quit. */
static int wait_quit_line(int *input, int ms)
{
    int64_t end = now_ms() + ms;
    for (int64_t left = ms; left > 0; left = end - now_ms()) {
        struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
        int rc = *input ? poll(&pfd, 1, (int)left) : 0;
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0) {
            if (!*input)
                top_set_wait(0, (int)left);
            return 0;
        }
        char buf[64];
        ssize_t k = read(STDIN_FILENO, buf, sizeof buf);
        if (k <= 0)
            *input = 0;
        else if (memchr(buf, 'q', (size_t)k))
            return 1;
    }
    return 0;
}

/* The processes of this share that ended since the last round, dropped;
 * their notes (malloc'ed, "" when none) in *notes. */
static uint32_t drop_ended(struct live **ls, uint32_t n, char **notes)
{
    size_t len = 0;
    FILE *f = open_memstream(notes, &len);
    if (!f) {
        *notes = NULL;
        return n;
    }
    n = top_set_drop_ended(ls, n, f);
    fclose(f);
    return n;
}

/* Reader 0: one round's view, shown or (the first, for the rates) not.
 * 1 when every process of the set has ended. */
static int draw(const struct top_set_opts *o, struct readers *r, struct readers_round *rd,
                struct top_set_state *st, int show)
{
    if (!rd->st.processes) {
        printf("%severy process of %s has ended\n", rd->notes ? rd->notes : "",
               o->sel.arg ? o->sel.arg : "the set");
        return 1;
    }
    struct profile *merged = merge_finish(rd->m);
    if (!merged) {
        cli_fail("out of memory merging the readers' shares");
        return 1;
    }
    top_view_finish(rd->view);
    struct top_set_frame f = { .merged = merged,
                               .view = rd->view,
                               .threads = (uint32_t)rd->st.threads,
                               .pause_ns = rd->st.set_pause,
                               .readers = readers_size(r),
                               .barrier_ns = rd->st.barrier_max,
                               .notes = rd->notes };
    top_set_draw(o, st, &f, show);
    profile_free(merged);
    return 0;
}

int live_readers_top(const struct top_set_opts *o)
{
    struct readers *r = readers_start("top");
    if (!r)
        return EXIT_FAIL;
    int lead = readers_rank(r) == 0;
    struct live **ls = NULL;
    uint32_t n = 0;
    int rc = readers_open_share(r, &o->sel, &ls, &n);
    struct top_set_state st = { 0 };
    struct termios saved;
    int tty = lead && rc == EXIT_OK ? top_set_tty_raw(o, &saved) : 0;
    int views = o->once ? 1 : o->iterations, ended = 0, input = lead && !tty && !views;
    uint64_t word_wait = (uint64_t)o->interval_ms * 1000000ull + readers_partial_wait_ns();
    for (int round = 0; rc == EXIT_OK; round++) {
        /* round 0 is not shown: it gives the first view its rates */
        int go = !ended && (!views || round <= views)
            && !(lead && round > 0
                 && (tty ? top_set_wait(tty, o->interval_ms) : wait_quit_line(&input, o->interval_ms)));
        rc = readers_word(r, &go, word_wait, round == 0);
        if (rc != EXIT_OK || !go)
            break;
        char *notes = NULL;
        if (round > 0)
            n = drop_ended(ls, n, &notes);
        struct top_view view = { 0 };
        struct readers_round rd = { .view = &view };
        rc = readers_round(r, ls, n, o->consistency, notes, &rd);
        if (rc == EXIT_OK && lead)
            ended = draw(o, r, &rd, &st, round > 0);
        readers_round_free(&rd);
        top_view_free(&view);
        free(notes);
    }
    if (rc != EXIT_OK)
        readers_abort(r);
    top_set_tty_restore(tty, &saved);
    top_set_state_free(&st);
    live_set_close(ls, n);
    readers_end(r);
    return rc;
}
