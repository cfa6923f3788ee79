/*
 * signals: instrumented signal handlers, one on an alternate stack
 * (sigaltstack), and nested (SIGUSR2 raised inside the SIGUSR1 handler, and
 * SIGUSR1 itself re-raised inside its handler with SA_NODEFER).  Signals are
 * raised synchronously, so the tree is deterministic.  Reference: refstack.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;
static volatile int nest;

static void work(int n) { sink += n; }

static void on_usr2(int sig) { work(1); }

static void on_usr1(int sig)
{
    work(2);
    raise(SIGUSR2);
    if (nest++ == 0)
        raise(SIGUSR1);          /* SA_NODEFER: nests in itself once */
    work(3);
}

static void on_alrm(int sig)     /* runs on the alternate stack */
{
    work(4);
    raise(SIGUSR2);
}

static void trigger(int i)
{
    nest = 0;
    raise(SIGUSR1);
    raise(SIGALRM);
    work(i);
}

static void setup(void)
{
    static char altstack[1 << 16];
    stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack};
    sigaltstack(&ss, NULL);
    struct sigaction sa = {0};
    sa.sa_handler = on_usr1;
    sa.sa_flags = SA_NODEFER;
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sa.sa_flags = 0;
    sigaction(SIGUSR2, &sa, NULL);
    sa.sa_handler = on_alrm;
    sa.sa_flags = SA_ONSTACK;
    sigaction(SIGALRM, &sa, NULL);
}

int main(void)
{
    setup();
    for (int i = 0; i < 3; i++)
        trigger(i);
    printf("signals: %ld\n", (long)sink);
    return 0;
}
