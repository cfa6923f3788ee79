/*
 * vfork_exec: vfork, then exec this program again ("child" mode) at once.
 * Parent: main > launch, main > after.  Exec'ed: main > child_main > work x3.
 * Reference: refstack (the exec'ed program inherits LD_PRELOAD).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

static void work(void) { sink++; }
static void child_main(void) { for (int i = 0; i < 3; i++) work(); }
static void after(void) { sink++; }

static pid_t launch(void)
{
    pid_t p = vfork();
    if (p == 0) {
        execl("/proc/self/exe", "vfork_exec", "child", (char *)NULL);
        _exit(127);
    }
    return p;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "child")) {
        child_main();
        return 0;
    }
    int st = 0;
    waitpid(launch(), &st, 0);
    after();
    printf("vfork_exec: %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return 0;
}
