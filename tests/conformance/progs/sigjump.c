/*
 * sigjump: siglongjmp out of an instrumented signal handler raised deep in a
 * recursion, three times from the same call site.  Expected tree: cases.py.
 *
 *   main
 *     deep x3 > deep x3 > ... (6 levels; raise(SIGUSR1) at the bottom)
 *       on_usr1 x3 (under the deepest deep)
 *         handler_work x3        siglongjmp to main from here
 *     recover x3
 */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>

static sigjmp_buf env;
static volatile long sink;

static void handler_work(void) { sink++; siglongjmp(env, 1); }
static void on_usr1(int sig) { handler_work(); }

static void deep(int n)
{
    if (n == 0)
        raise(SIGUSR1);
    else
        deep(n - 1);
    sink++;
}

static void recover(void) { sink++; }

int main(void)
{
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sigaction(SIGUSR1, &sa, NULL);
    for (volatile int i = 0; i < 3; i++) {
        if (sigsetjmp(env, 1) == 0)
            deep(5);
        recover();
    }
    printf("sigjump: %ld\n", (long)sink);
    return 0;
}
