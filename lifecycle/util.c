/*
 * Small helpers of the lifecycle layer: configuration, diagnostics,
 * futex waits with deadlines, a signal-safe spinlock.
 */
#include "lifecycle/internal.h"
#include "common/log.h"
#include "common/pages.h"
#include "common/spin.h"

#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct lc_config lc_cfg = { .debug = 0, .follow = 1, .shootdown_ms = 2000 };

/* A whole decimal number (optional sign) into *out; 0 if v is not one or
 * does not fit.  Not strtol: the layer can be initialised from inside a
 * sanitizer runtime's own start-up (ASan's sigaction call reaches our
 * override), where ASan's strtol interceptor aborts the process. */
static int lc_parse_long(const char *v, long *out)
{
    int neg = (*v == '-');
    if (*v == '-' || *v == '+')
        v++;
    if (!*v)
        return 0;
    unsigned long n = 0, limit = neg ? (unsigned long)LONG_MAX + 1 : (unsigned long)LONG_MAX;
    for (; *v; v++) {
        if (*v < '0' || *v > '9')
            return 0;
        unsigned digit = (unsigned)(*v - '0');
        if (n > (limit - digit) / 10)
            return 0;
        n = n * 10 + digit;
    }
    *out = neg ? (long)(0 - n) : (long)n;
    return 1;
}

/* valid == NULL: a variable libhookit also reads and reports. */
static long lc_env_long(const char *name, long def, long lo, long hi, const char *valid)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    long n;
    if (!lc_parse_long(v, &n) || n < lo || n > hi) {
        if (valid)
            lc_diag("%s=%s is not valid (%s); using %ld", name, v, valid, def);
        return def;
    }
    return n;
}

void lc_read_config(void)
{
    lc_cfg.debug = lc_env_long("HOOKIT_DEBUG", 0, 0, 1, NULL) != 0;
    lc_cfg.follow = lc_env_long("HOOKIT_FOLLOW", 1, 0, 1, "0 or 1") != 0;
    lc_cfg.shootdown_ms = lc_env_long("HOOKIT_SHOOTDOWN_TIMEOUT", 2000, 1, 3600000,
                                      "milliseconds, 1..3600000");
}

/* One line on stderr (common/log.h). */
void lc_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hk_log_vwrite(fmt, ap);
    va_end(ap);
}

pid_t lc_gettid(void)
{
    return (pid_t)syscall(SYS_gettid);
}

/* The raw system call: no libc (or our own wrapper) in between. */
void lc_raw_sigmask(int how, const sigset_t *set, sigset_t *old)
{
    syscall(SYS_rt_sigprocmask, how, set, old, _NSIG / 8);
}

void lc_deadline_after_ms(struct timespec *deadline, long ms)
{
    clock_gettime(CLOCK_MONOTONIC, deadline);
    deadline->tv_sec += ms / 1000;
    deadline->tv_nsec += (ms % 1000) * 1000000L;
    if (deadline->tv_nsec >= 1000000000L) {
        deadline->tv_sec++;
        deadline->tv_nsec -= 1000000000L;
    }
}

int lc_futex_wait(atomic_int *addr, int val, const struct timespec *deadline)
{
    int saved = errno;
    int r = 0;
    if (atomic_load(addr) == val) {
        /* FUTEX_WAIT_BITSET takes an absolute CLOCK_MONOTONIC deadline. */
        long rc = syscall(SYS_futex, (int *)addr, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG,
                          val, deadline, NULL, FUTEX_BITSET_MATCH_ANY);
        if (rc < 0 && errno == ETIMEDOUT)
            r = -1;
    }
    errno = saved;
    return r;
}

void lc_futex_wake_all(atomic_int *addr)
{
    int saved = errno;
    syscall(SYS_futex, (int *)addr, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 0x7fffffff, NULL, NULL, 0);
    errno = saved;
}

void lc_lock(lc_spinlock *lock, sigset_t *saved)
{
    sigset_t all;
    sigfillset(&all);
    lc_raw_sigmask(SIG_BLOCK, &all, saved);
    hk_spin_lock(&lock->word);
}

void lc_unlock(lc_spinlock *lock, const sigset_t *saved)
{
    hk_spin_unlock(&lock->word);
    lc_raw_sigmask(SIG_SETMASK, saved, NULL);
}

/* ---- memory of our own ---------------------------------------------------------------
 * The layer never calls malloc: a program that brings its own (instrumented)
 * malloc would then run its code on our behalf, counted in its profile as its
 * own calls, and inside our locks.  Small blocks come from pages we map, kept
 * on a free list; large ones are mapped one by one.  Blocks are zeroed. */
#define LC_BLOCK 512u                   /* the small blocks' size, header included */
#define LC_CHUNK (64u << 10)

struct lc_block {
    size_t size;                        /* 0: small (LC_BLOCK); else the mapping's size */
    struct lc_block *next;              /* free list */
};

static struct lc_block *lc_free_blocks;
static lc_spinlock lc_alloc_lock = LC_SPINLOCK_INIT;

static struct lc_block *lc_small_block(void)
{
    sigset_t saved;
    lc_lock(&lc_alloc_lock, &saved);
    if (!lc_free_blocks) {
        char *chunk = hk_pages_map(LC_CHUNK, 0);
        if (chunk)
            for (size_t at = 0; at + LC_BLOCK <= LC_CHUNK; at += LC_BLOCK) {
                struct lc_block *b = (struct lc_block *)(chunk + at);
                b->next = lc_free_blocks;
                lc_free_blocks = b;
            }
    }
    struct lc_block *b = lc_free_blocks;
    if (b)
        lc_free_blocks = b->next;
    lc_unlock(&lc_alloc_lock, &saved);
    return b;
}

void *lc_alloc(size_t size)
{
    int saved = errno;
    struct lc_block *b;
    if (size <= LC_BLOCK - sizeof *b) {
        if ((b = lc_small_block()))
            memset(b, 0, LC_BLOCK);
    } else {
        size_t total = (size + sizeof *b + 4095) & ~(size_t)4095;
        if ((b = hk_pages_map(total, 0)))
            b->size = total;
    }
    errno = saved;
    return b ? b + 1 : NULL;
}

void lc_release(void *p)
{
    if (!p)
        return;
    int saved = errno;
    struct lc_block *b = (struct lc_block *)p - 1;
    if (b->size) {
        hk_pages_unmap(b, b->size);
    } else {
        sigset_t mask;
        lc_lock(&lc_alloc_lock, &mask);
        b->next = lc_free_blocks;
        lc_free_blocks = b;
        lc_unlock(&lc_alloc_lock, &mask);
    }
    errno = saved;
}
