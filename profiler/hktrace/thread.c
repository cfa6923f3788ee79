/* Threads: each thread gets, on its first event, private state (mapped, not
 * malloc'ed: we may be inside malloc), a shadow stack that grows without a
 * fixed limit, and a place in the list of threads the writer walks. */
#include "hktrace.h"
#include "common/unwind.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct ht_thread *ht_self __attribute__((tls_model("initial-exec")));
struct ht_thread *volatile ht_threads;

static uint32_t next_index = 1;         /* 0 is the main thread */
static pthread_key_t end_key;

#define FIRST_STACK 1024u               /* frames */

HT_NOINSTR static void *map_pages(size_t size)
{
    return hk_pages_map(size, 0);
}

HT_NOINSTR int ht_grow_stack(struct ht_thread *t)
{
    size_t old = (size_t)t->capacity * sizeof *t->stack;
    void *p = mremap(t->stack, old, old * 2, MREMAP_MAYMOVE);
    if (p == MAP_FAILED)
        return -1;
    t->stack = p;
    t->capacity *= 2;
    return 0;
}

HT_NOINSTR static int is_main_thread(void)
{
    return syscall(SYS_gettid) == getpid();
}

HT_NOINSTR static void read_name(struct ht_thread *t)
{
    char name[16] = { 0 };
    if (t->index == 0) {
        strcpy(t->name, "main");
        return;
    }
    if (prctl(PR_GET_NAME, name) == 0)
        memcpy(t->name, name, sizeof t->name);
    t->name[sizeof t->name - 1] = 0;
}

HT_NOINSTR static void publish(struct ht_thread *t)
{
    struct ht_thread *head = ht_threads;
    do
        t->next = head;
    while (!__atomic_compare_exchange_n(&ht_threads, &head, t, 1, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED));
}

HT_NOINSTR struct ht_thread *ht_thread_attach(void)
{
    int saved = errno;
    struct ht_thread *t = map_pages(sizeof *t);
    if (!t) {
        errno = saved;
        return NULL;
    }
    t->capacity = FIRST_STACK;
    t->stack = map_pages(t->capacity * sizeof *t->stack);
    if (!t->stack) {
        munmap(t, sizeof *t);
        errno = saved;
        return NULL;
    }
    t->tid = (int32_t)syscall(SYS_gettid);
    t->index = is_main_thread() ? 0 : __atomic_fetch_add(&next_index, 1, __ATOMIC_RELAXED);
    read_name(t);
    hk_stack_bounds(&t->stack_lo, &t->stack_hi);
    ht_mark_time(t, ht_now());
    publish(t);
    ht_self = t;
    pthread_setspecific(end_key, t);    /* thread end without the lifecycle layer */
    errno = saved;
    return t;
}

/* Write the exits of the thread's open calls and mark it ended.  Runs in
 * the ending thread (lifecycle's THREAD_END, or the key destructor). */
HT_NOINSTR void ht_thread_end(void)
{
    struct ht_thread *t = ht_self;
    if (!t || t->ended)
        return;
    int saved = errno;
    t->busy = 1;                /* for good: later events are counted as lost */
    ht_close_all(t, ht_now());
    read_name(t);               /* a name set after the thread started */
    /* The records and this structure stay for the writer; the shadow stack
     * is no longer needed (many short threads should not keep theirs). */
    munmap(t->stack, (size_t)t->capacity * sizeof *t->stack);
    t->stack = NULL;
    t->capacity = 0;
    __atomic_store_n(&t->ended, 1, __ATOMIC_RELEASE);
    errno = saved;
}

HT_NOINSTR static void end_by_key(void *arg)
{
    (void)arg;
    ht_thread_end();
}

/* In a forked child only this thread exists: the child's trace starts
 * empty, with this thread's open calls entered again at the fork, so the
 * child's file holds what the child did and nothing of the parent. */
HT_NOINSTR void ht_thread_fork_child(void)
{
    struct ht_thread *t = ht_self;
    ht_buffer_reset();
    ht_threads = NULL;
    next_index = 1;
    if (!t)
        return;
    t->chunk = NULL;
    t->pos = t->end = NULL;
    t->first_chunk = 0;
    t->short_dropped = t->lost = t->unmatched = t->undecided_pads = 0;
    t->flags = 0;
    t->next = NULL;
    t->ended = 0;
    t->index = 0;
    t->tid = (int32_t)syscall(SYS_gettid);
    read_name(t);
    t->busy = 1;
    ht_reopen_all(t, ht_now());
    t->busy = 0;
    publish(t);
}

HT_NOINSTR void ht_threads_init(void)
{
    pthread_key_create(&end_key, end_by_key);
}
