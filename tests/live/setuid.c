#define _GNU_SOURCE
/* Starts as root (profiled, registered in root's registry), then drops to
 * nobody (uid/gid 65534) like a server's workers, and works on until killed.
 * Prints "dropped UID" once the user changed. */
#include <stdio.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) void leaf(int i) { sink += (unsigned long)i; }

__attribute__((noinline)) void work(void)
{
    for (int i = 0; i < 100; i++)
        leaf(i);
}

int main(void)
{
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) {
        perror("setresuid");
        return 2;
    }
    printf("dropped %d\n", (int)getuid());
    fflush(stdout);
    for (;;)
        work();
}
