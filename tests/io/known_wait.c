/* Blocking calls with known waits, one function each (tests/io/test_wait.py
 * checks each function's wait_ns against the time below), and the
 * behaviour of every wrapper: return values, errno, EINTR, cancellation.
 * Prints what it checked, then "all checks passed"; exit 1 on a failure.
 * The same output is expected with and without hookit. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ms_clock.h"

static int failures;
#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAILED line %d: %s\n", __LINE__, #cond);               \
            failures++;                                                    \
        }                                                                  \
    } while (0)

/* The waits below are timed by hookit from when main blocks.  A helper
 * (a thread, a fork child) that began its nap before main reached its wait
 * (main pre-empted right after pthread_create or fork, on a loaded
 * machine) would make main's wait shorter than the nap: a 200 ms join was
 * seen as 199.47 ms.  So a helper naps only once main sleeps (state S in
 * /proc/PID/task/TID/stat: after the helper is made, main's next sleep is
 * its wait), and gives up looking after 2 s. */
static pid_t main_pid;

static void await_main_blocked(void)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/task/%d/stat", (int)main_pid, (int)main_pid);
    for (int i = 0; i < 20000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *end = strrchr(buf, ')');
        if (!end || (end[1] == ' ' && end[2] == 'S'))
            return;
        struct timespec ts = { 0, 100000 };
        nanosleep(&ts, NULL);
    }
}

/* ---- pthread_join: 200 ms ------------------------------------------------------------- */
static void *slow_worker(void *arg)
{
    await_main_blocked();
    nap_ms(200);
    return arg;
}

static void join_wait(void)
{
    pthread_t th;
    void *ret = NULL;
    CHECK(pthread_create(&th, NULL, slow_worker, (void *)42) == 0);
    CHECK(pthread_join(th, &ret) == 0);
    CHECK(ret == (void *)42);
    CHECK(pthread_join(pthread_self(), NULL) == EDEADLK);
}

/* ---- a condition variable: 150 ms ------------------------------------------------------- */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;

static void *signaller(void *arg)
{
    await_main_blocked();
    nap_ms(150);
    pthread_mutex_lock(&lock);
    ready = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    return arg;
}

static void cond_wait(void)
{
    pthread_t th;
    CHECK(pthread_create(&th, NULL, signaller, NULL) == 0);
    pthread_mutex_lock(&lock);
    while (!ready)
        CHECK(pthread_cond_wait(&cond, &lock) == 0);
    pthread_mutex_unlock(&lock);
    pthread_join(th, NULL);     /* the signaller is done by now: no wait to speak of */
    /* a timed wait that times out: 30 ms */
    struct timespec abs;
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_nsec += 30000000L;
    if (abs.tv_nsec >= 1000000000L) {
        abs.tv_sec++;
        abs.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&lock);
    errno = 1234;
    CHECK(pthread_cond_timedwait(&cond, &lock, &abs) == ETIMEDOUT);
    CHECK(errno == 1234);
    pthread_mutex_unlock(&lock);
}

/* ---- a contended mutex: 100 ms; 1000 free ones: no wait --------------------------------- */
static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static sem_t holding;

static void *holder(void *arg)
{
    pthread_mutex_lock(&held);
    sem_post(&holding);
    nap_ms(100);
    pthread_mutex_unlock(&held);
    return arg;
}

static void mutex_wait(void)
{
    pthread_t th;
    sem_init(&holding, 0, 0);
    CHECK(pthread_create(&th, NULL, holder, NULL) == 0);
    while (sem_wait(&holding) != 0)
        ;
    CHECK(pthread_mutex_lock(&held) == 0);      /* waits for the holder */
    pthread_mutex_unlock(&held);
    pthread_join(th, NULL);
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&held);
        pthread_mutex_unlock(&held);
    }
    pthread_mutexattr_t a;
    pthread_mutex_t ec;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
    pthread_mutex_init(&ec, &a);
    CHECK(pthread_mutex_lock(&ec) == 0);
    CHECK(pthread_mutex_lock(&ec) == EDEADLK);  /* the real lock's answer */
    pthread_mutex_unlock(&ec);
}

/* ---- a semaphore: 70 ms ---------------------------------------------------------------- */
static sem_t sem;

static void *poster(void *arg)
{
    await_main_blocked();
    nap_ms(70);
    sem_post(&sem);
    return arg;
}

static void sem_waiter(void)
{
    pthread_t th;
    sem_init(&sem, 0, 0);
    CHECK(pthread_create(&th, NULL, poster, NULL) == 0);
    CHECK(sem_wait(&sem) == 0);
    pthread_join(th, NULL);
    errno = 0;
    CHECK(sem_trywait(&sem) == -1 && errno == EAGAIN);
    struct timespec abs;
    clock_gettime(CLOCK_REALTIME, &abs);
    abs.tv_sec -= 1;
    errno = 0;
    CHECK(sem_timedwait(&sem, &abs) == -1 && errno == ETIMEDOUT);
}

/* ---- sleeps: 50 + 30 + 20 ms ----------------------------------------------------------------- */
static void sleeper(void)
{
    struct timespec ts = { 0, 50000000L };
    CHECK(nanosleep(&ts, NULL) == 0);
    CHECK(usleep(30000) == 0);
    ts.tv_nsec = 20000000L;
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == 0);
    ts.tv_nsec = 2000000000L;   /* invalid */
    errno = 0;
    CHECK(nanosleep(&ts, NULL) == -1 && errno == EINVAL);
    CHECK(clock_nanosleep(CLOCK_MONOTONIC, 0, &ts, NULL) == EINVAL);
}

/* ---- poll, select, epoll: 60 + 40 + 30 ms; 1000 zero timeouts: no wait ------------------------ */
static void poller(void)
{
    int fds[2];
    CHECK(pipe(fds) == 0);
    struct pollfd p = { .fd = fds[0], .events = POLLIN };
    CHECK(poll(&p, 1, 60) == 0);
    fd_set rd;
    FD_ZERO(&rd);
    FD_SET(fds[0], &rd);
    struct timeval tv = { 0, 40000 };
    CHECK(select(fds[0] + 1, &rd, NULL, NULL, &tv) == 0);
    int ep = epoll_create1(0);
    struct epoll_event ev = { .events = EPOLLIN, .data.fd = fds[0] };
    CHECK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[0], &ev) == 0);
    struct epoll_event out;
    CHECK(epoll_wait(ep, &out, 1, 30) == 0);
    for (int i = 0; i < 1000; i++)
        CHECK(poll(&p, 1, 0) == 0);
    CHECK(write(fds[1], "x", 1) == 1);
    CHECK(poll(&p, 1, -1) == 1 && (p.revents & POLLIN));
    CHECK(epoll_wait(ep, &out, 1, -1) == 1 && out.data.fd == fds[0]);
    errno = 0;
    CHECK(epoll_wait(-1, &out, 1, 10) == -1 && errno == EBADF);
    close(ep);
    close(fds[0]);
    close(fds[1]);
}

/* ---- a child process: 80 ms ----------------------------------------------------------------- */
static void waiter(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        await_main_blocked();
        nap_ms(80);
        _exit(7);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 7);
    errno = 0;
    CHECK(waitpid(-1, &status, 0) == -1 && errno == ECHILD);
    CHECK(waitpid(-1, &status, WNOHANG) == -1);
}

/* ---- a signal handler during a wait: its time is the handler's, not the wait's --------------- */
static volatile double spun_ms;

static void on_alarm(int sig)
{
    (void)sig;
    double t0 = now_ms();
    while (now_ms() - t0 < 50)
        ;
    spun_ms = now_ms() - t0;
}

/* poll waits 30 ms until SIGALRM; the handler runs 50 ms; poll returns
 * EINTR: 30 ms of wait, not 80. */
static void handler_during_wait(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = { { 0, 0 }, { 0, 30000 } };
    setitimer(ITIMER_REAL, &it, NULL);
    errno = 0;
    int r = poll(NULL, 0, 1000);
    CHECK(r == -1 && errno == EINTR);
    CHECK(spun_ms >= 50);
    signal(SIGALRM, SIG_DFL);
}

/* ---- cancellation inside pthread_cond_wait ------------------------------------------------- */
static int cleaned;

static void cleanup(void *arg)
{
    (void)arg;
    cleaned = 1;
    pthread_mutex_unlock(&lock);
}

static void *cancelled_waiter(void *arg)
{
    pthread_mutex_lock(&lock);
    pthread_cleanup_push(cleanup, NULL);
    for (;;)
        pthread_cond_wait(&cond, &lock);
    pthread_cleanup_pop(0);
    return arg;
}

static void cancel_wait(void)
{
    pthread_t th;
    void *ret = NULL;
    CHECK(pthread_create(&th, NULL, cancelled_waiter, NULL) == 0);
    nap_ms(20);
    CHECK(pthread_cancel(th) == 0);
    CHECK(pthread_join(th, &ret) == 0);
    CHECK(ret == PTHREAD_CANCELED);
    CHECK(cleaned == 1);
    CHECK(pthread_mutex_trylock(&lock) == 0);   /* the cleanup released it */
    pthread_mutex_unlock(&lock);
}

int main(void)
{
    main_pid = getpid();
    join_wait();
    cond_wait();
    mutex_wait();
    sem_waiter();
    sleeper();
    poller();
    waiter();
    handler_during_wait();
    cancel_wait();
    if (failures)
        return 1;
    printf("all checks passed\n");
    return 0;
}
