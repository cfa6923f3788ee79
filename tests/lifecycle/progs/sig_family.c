/* sysv_signal resets after one delivery; bsd_signal keeps; sigset/SIG_HOLD; sigignore. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <unistd.h>
extern __sighandler_t bsd_signal(int, __sighandler_t);
extern __sighandler_t __sysv_signal(int, __sighandler_t);
static volatile int n1, n2;
static void h1(int s) { n1++; }
static void h2(int s) { n2++; }
int main(void) {
    sysv_signal(SIGUSR1, h1); raise(SIGUSR1);
    struct sigaction a; sigaction(SIGUSR1, 0, &a);
    printf("sysv: n1=%d now=%s\n", n1, a.sa_handler == SIG_DFL ? "dfl" : "handler");
    bsd_signal(SIGUSR2, h2); raise(SIGUSR2); raise(SIGUSR2);
    printf("bsd: n2=%d\n", n2);
    sigset(SIGUSR2, SIG_HOLD); raise(SIGUSR2);
    printf("held: n2=%d\n", n2);
    __sighandler_t prev = sigset(SIGUSR2, h2);
    printf("released: n2=%d prev=%s\n", n2, prev == SIG_HOLD ? "SIG_HOLD" : "other");
    n1 = 0; __sysv_signal(SIGUSR1, h1); raise(SIGUSR1);
    sigaction(SIGUSR1, 0, &a);
    printf("__sysv: n1=%d now=%s\n", n1, a.sa_handler == SIG_DFL ? "dfl" : "handler");
    sigignore(SIGUSR1); raise(SIGUSR1);
    printf("ignored ok\n");
    __sighandler_t old = signal(SIGUSR2, SIG_DFL);
    printf("signal returned %s\n", old == h2 ? "h2" : "other");
    return 0;
}
