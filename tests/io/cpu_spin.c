/* 200 ms of this thread's CPU time in work() (by the kernel's count,
 * CLOCK_THREAD_CPUTIME_ID), then 200 ms asleep in rest(): tests/io/test_wait.py
 * checks JPROFOPTS=cpu's sampled cpu_ns against the first and wait_ns
 * against the second. */
#include <stdio.h>
#include <time.h>

static double cpu_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static volatile unsigned long sink;

/* About 100 us of user time between two reads of the thread's CPU clock,
 * a system call: with a read every 1,000 iterations the kernel's share of
 * work() was 10% (0.18 s of user time in 0.2 s of CPU) and more under
 * load, which a sampler of user time (the default's, exclude_kernel) does
 * not see (167.5 ms sampled for 200 once). */
static void step(void)
{
    for (int i = 0; i < 100000; i++)
        sink += (unsigned long)i * 2654435761u;
}

static void work(void)
{
    double t0 = cpu_ms();
    while (cpu_ms() - t0 < 200)
        step();
}

static void rest(void)
{
    struct timespec ts = { 0, 200000000L };
    nanosleep(&ts, NULL);
}

int main(void)
{
    work();
    rest();
    puts("done");
    return 0;
}
