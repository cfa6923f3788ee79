/* reset and zerobase given while every thread is blocked
 * (tests/live/test_reset_blocked.py): the numbers are known from the code.
 *
 * main calls before() 100 times, runs a thread that calls early() 9
 * times and ends (joined: its tree is an ended thread's), starts a worker
 * that calls work() 50
 * times and then waits in sigsuspend (in wait_usr1), and waits itself in
 * pthread_join (in joiner).  "ready PID" is printed once the worker is
 * about to wait.  SIGUSR1 (let in by the worker's sigsuspend only) wakes
 * the worker (its handler, on_usr1, runs once), which calls after() 30 times and returns; then main calls
 * after_main() 20 times.  Last line: how often sigsuspend returned (1: only
 * for SIGUSR1, so neither thread ran a hook while the test worked). */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t released;
static volatile int sink;
static int wakes;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int worked;

static void on_usr1(int sig)
{
    (void)sig;
    released = 1;
}

__attribute__((noinline)) void before(void)
{
    sink++;
}

__attribute__((noinline)) void early(void)
{
    sink++;
}

__attribute__((noinline)) void *early_main(void *arg)
{
    for (int i = 0; i < 9; i++)
        early();
    return arg;
}

__attribute__((noinline)) void work(void)
{
    sink++;
}

__attribute__((noinline)) void after(void)
{
    sink++;
}

__attribute__((noinline)) void after_main(void)
{
    sink++;
}

__attribute__((noinline)) void wait_usr1(void)
{
    sigset_t none;
    sigemptyset(&none);
    pthread_mutex_lock(&lock);
    worked = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&lock);
    while (!released) {
        sigsuspend(&none);
        wakes++;
    }
}

__attribute__((noinline)) void *worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 50; i++)
        work();
    wait_usr1();
    for (int i = 0; i < 30; i++)
        after();
    return NULL;
}

__attribute__((noinline)) void joiner(pthread_t t)
{
    pthread_join(t, NULL);
}

int main(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    sigset_t usr1;
    sigemptyset(&usr1);
    sigaddset(&usr1, SIGUSR1);
    sigprocmask(SIG_BLOCK, &usr1, NULL);
    for (int i = 0; i < 100; i++)
        before();
    pthread_t t;
    pthread_create(&t, NULL, early_main, NULL);
    pthread_join(t, NULL);
    pthread_create(&t, NULL, worker, NULL);
    pthread_mutex_lock(&lock);
    while (!worked)
        pthread_cond_wait(&cond, &lock);
    pthread_mutex_unlock(&lock);
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    joiner(t);
    for (int i = 0; i < 20; i++)
        after_main();
    printf("wakes %d\n", wakes);
    return 0;
}
