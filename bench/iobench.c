/* The per-call cost of libhookit's I/O and malloc wrappers (bench/io).
 * Each loop is one instrumented function (so I/O is charged to a calling
 * context, as in a real program) making N calls; prints NAME=NS_PER_CALL.
 *   write1   write(fd on /dev/null, 1 byte)       a cheap system call
 *   read1    read(fd on /dev/zero, 1 byte)
 *   fputc    fputc to a fully buffered /dev/null stream (no system call)
 *   malloc   malloc(64) + free: one pair
 *   clock2   two reads of the TSC, what every timed I/O call adds at least
 *            (the cost of rdtsc varies a lot between machines and VMs)
 * Blocking calls that do not block (hookit/io_wait.c), on the timed path:
 *   pollw    poll(pipe with data, 1, 1000 ms): returns at once, timed
 *            (a condition wait or sleep that returns at once is a futex or
 *            timer system call of 10-20 us on a VM: too noisy to show 100 ns)
 * and on the untimed paths:
 *   poll0    poll(pipe, 1, 0): a zero timeout is no wait
 *   mutex    pthread_mutex_lock + unlock, uncontended (the trylock path) */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long n = 2000000;
void *volatile sink;

/* The thread's CPU time (user and system): on a busy machine wall time
 * would count the time spent waiting for a CPU. */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

double bench_write1(int fd)
{
    char c = 0;
    double t = now();
    for (long i = 0; i < n; i++)
        if (write(fd, &c, 1) != 1)
            abort();
    return (now() - t) / n;
}

double bench_read1(int fd)
{
    char c;
    double t = now();
    for (long i = 0; i < n; i++)
        if (read(fd, &c, 1) != 1)
            abort();
    return (now() - t) / n;
}

double bench_fputc(FILE *f)
{
    double t = now();
    for (long i = 0; i < n * 5; i++)
        fputc('x', f);
    return (now() - t) / (n * 5);
}

double bench_malloc(void)
{
    double t = now();
    for (long i = 0; i < n * 5; i++) {
        sink = malloc(64);
        free(sink);
    }
    return (now() - t) / (n * 5);
}

static long npoll(void) { return n / 4; }

double bench_poll(int fd, int timeout)
{
    struct pollfd p = { .fd = fd, .events = POLLIN };
    double t = now();
    for (long i = 0; i < npoll(); i++)
        if (poll(&p, 1, timeout) != 1)
            abort();
    return (now() - t) / npoll();
}

double bench_mutex(void)
{
    static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    double t = now();
    for (long i = 0; i < n * 5; i++) {
        pthread_mutex_lock(&m);
        pthread_mutex_unlock(&m);
    }
    return (now() - t) / (n * 5);
}

volatile unsigned long long tsc_sink;

double bench_clock2(void)
{
    double t = now();
#if defined(__x86_64__) || defined(__i386__)
    for (long i = 0; i < n; i++) {
        unsigned long long a = __builtin_ia32_rdtsc();
        tsc_sink = __builtin_ia32_rdtsc() - a;
    }
#endif
    return (now() - t) / n;
}

int main(int argc, char **argv)
{
    if (argc > 1)
        n = atol(argv[1]);
    /* "iobench N OP": only that loop (for perf stat), prints nothing */
    if (argc > 2) {
        int fd = open(!strcmp(argv[2], "read1") ? "/dev/zero" : "/dev/null",
                      !strcmp(argv[2], "read1") ? O_RDONLY : O_WRONLY);
        FILE *s = fopen("/dev/null", "w");
        static char sbuf[1 << 16];
        setvbuf(s, sbuf, _IOFBF, sizeof sbuf);
        if (!strcmp(argv[2], "write1"))
            bench_write1(fd);
        else if (!strcmp(argv[2], "read1"))
            bench_read1(fd);
        else if (!strcmp(argv[2], "fputc"))
            bench_fputc(s);
        else if (!strcmp(argv[2], "malloc"))
            bench_malloc();
        return 0;
    }
    int null = open("/dev/null", O_WRONLY), zero = open("/dev/zero", O_RDONLY);
    FILE *f = fopen("/dev/null", "w");
    static char fbuf[1 << 16];
    setvbuf(f, fbuf, _IOFBF, sizeof fbuf);
    int pipefd[2];
    if (pipe(pipefd) != 0 || write(pipefd[1], "x", 1) != 1)
        abort();
    printf("write1=%.2f read1=%.2f fputc=%.2f malloc=%.2f clock2=%.2f", bench_write1(null),
           bench_read1(zero), bench_fputc(f), bench_malloc(), bench_clock2());
    printf(" pollw=%.2f poll0=%.2f mutex=%.2f\n", bench_poll(pipefd[0], 1000),
           bench_poll(pipefd[0], 0), bench_mutex());
    fclose(f);
    return 0;
}
