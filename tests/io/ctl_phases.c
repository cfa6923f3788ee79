/* Known I/O and allocations on both sides of a `hookit ctl reset` or
 * `zerobase` (tests/io test_ctl_*).  argv[1]: a directory.
 *   before(): malloc 1000 x 2 (freed by after()) and 3000 (never freed);
 *             10 x (malloc 100, free); open/write 100 bytes/close before.dat
 *   then "ready\n" on stdout, and wait (calling an instrumented function
 *   every millisecond, so the command is carried out) until DIR/go exists;
 *   with argv[2] "quiet", wait running no hook at all, so that libjprof's
 *   control thread carries the command out (as it does under load, when
 *   the program runs no hook within 10 ms)
 *   after():  malloc 500 (never freed); 5 x (malloc 200, free); free the
 *             two 1000-byte blocks of before(); open/write 50 bytes/close
 *             after.dat
 * Output goes through write(2) only, so stdio allocates nothing. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void *volatile kept[4];
void *volatile sink;
static char path[4096];

static void put(const char *dir, const char *name, size_t n)
{
    char buf[128];
    memset(buf, 'x', sizeof buf);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buf, n) != (ssize_t)n || close(fd) != 0)
        exit(3);
}

void before(const char *dir)
{
    kept[0] = malloc(1000);
    kept[1] = malloc(1000);
    kept[2] = malloc(3000);
    for (int i = 0; i < 10; i++) {
        sink = malloc(100);
        free(sink);
    }
    put(dir, "before.dat", 100);
}

void tick(void)
{
    struct timespec ts = { 0, 1000000 };
    nanosleep(&ts, NULL);
}

void wait_for_go(const char *dir)
{
    snprintf(path, sizeof path, "%s/go", dir);
    for (int i = 0; i < 60000 && access(path, F_OK) != 0; i++)
        tick();
}

__attribute__((no_instrument_function)) static void wait_quietly(const char *dir)
{
    char go[4096];
    snprintf(go, sizeof go, "%s/go", dir);
    struct timespec ts = { 0, 1000000 };
    for (int i = 0; i < 60000 && access(go, F_OK) != 0; i++)
        nanosleep(&ts, NULL);
}

void after(const char *dir)
{
    kept[3] = malloc(500);
    for (int i = 0; i < 5; i++) {
        sink = malloc(200);
        free(sink);
    }
    free(kept[0]);
    free(kept[1]);
    put(dir, "after.dat", 50);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    before(argv[1]);
    if (write(1, "ready\n", 6) != 6)
        return 4;
    if (argc > 2 && !strcmp(argv[2], "quiet"))
        wait_quietly(argv[1]);
    else
        wait_for_go(argv[1]);
    after(argv[1]);
    return 0;
}
